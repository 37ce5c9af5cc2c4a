// A real apiserver running the native policies `npm run emit -- --native` compiles for an
// AdmissionConfiguration, applied unchanged, once the apiserver has type-checked them; and the
// comparison of its answers with the same plugin's webhooks on another apiserver.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { ControlPlane, ControlPlaneOptions } from './control-plane.js';
import { startControlPlane } from './control-plane.js';
import type { Answer, KubeObject } from './kube.js';
import { admittedShape, eventually, webhookDenial } from './kube.js';
import { emit } from './webhook-cluster.js';

export interface NativeCluster {
  readonly cluster: ControlPlane;
  /** The policies and bindings emit printed, as applied. */
  readonly objects: readonly KubeObject[];
  /** Each policy's status.typeChecking, once the controller-manager has filled it. */
  readonly typeChecking: ReadonlyMap<string, unknown>;
  stop(): Promise<void>;
}

const POLICY_KINDS: Record<string, string> = {
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  MutatingAdmissionPolicy: 'mutatingadmissionpolicies',
};

/** Runs `emit --native --kubernetes-version VERSION` for the configuration; its YAML. */
export async function emitNative(admissionConfiguration: string, version = '1.36'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'emit-native-'));
  try {
    writeFileSync(join(dir, 'admission.yaml'), admissionConfiguration);
    return await emit(dir, ['--native', '--kubernetes-version', version], {
      ...process.env,
      ADMISSION_CONFIG: join(dir, 'admission.yaml'),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A control plane with the configuration's native policies applied. Resolves once every
 * ValidatingAdmissionPolicy has its type checking (the controller-manager's) and every policy is
 * served; `probe`, when given, must then say the policies are in force (the apiserver loads them
 * from an informer a moment after they are stored).
 */
export async function startNativeCluster(
  admissionConfiguration: string,
  options: ControlPlaneOptions & {
    readonly version?: string;
    /** Runs before the policies are applied (objects that exist before an install). */
    readonly before?: (cluster: ControlPlane) => Promise<void>;
  } = {},
): Promise<NativeCluster> {
  const yaml = await emitNative(admissionConfiguration, options.version);
  const objects = parseAllDocuments(yaml)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
  const cluster = await startControlPlane(options);
  try {
    await options.before?.(cluster);
    const applied = await cluster.kubectl(['apply', '-f', '-'], yaml);
    if (applied.code !== 0) throw new Error(`kubectl apply of the native policies failed: ${applied.stderr}`);
    const typeChecking = new Map<string, unknown>();
    for (const object of objects) {
      const resource = POLICY_KINDS[object.kind];
      if (!resource) continue;
      const path = `/apis/${object.apiVersion}/${resource}/${object.metadata.name}`;
      const status = await eventually(`${object.kind} ${object.metadata.name} type-checked`, async () => {
        const stored = (await cluster.request('GET', path)).json<{
          metadata: { generation: number };
          status?: { observedGeneration?: number; typeChecking?: unknown };
        }>();
        // MutatingAdmissionPolicies have no type checking in 1.36: their status stays empty.
        if (object.kind === 'MutatingAdmissionPolicy') return stored.status ?? {};
        return stored.status?.observedGeneration === stored.metadata.generation ? stored.status : undefined;
      });
      typeChecking.set(object.metadata.name!, (status as { typeChecking?: unknown }).typeChecking);
    }
    return { cluster, objects, typeChecking, stop: () => cluster.stop() };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** Every type-checking warning of the policies (none is what the suite expects). */
export function typeCheckingWarnings(native: NativeCluster): unknown[] {
  return [...native.typeChecking.values()].flatMap(
    (checking) => (checking as { expressionWarnings?: unknown[] } | undefined)?.expressionWarnings ?? [],
  );
}

const POLICY_DENIAL =
  /^(.* is forbidden: )ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request: (.*)$/s;

/** A policy's refusal as the apiserver words it: the head, the policy and its own message. */
export function policyDenial(
  message: string | undefined,
): { head: string; policy: string; binding: string; message: string } | undefined {
  const match = message ? POLICY_DENIAL.exec(message) : null;
  return match ? { head: match[1], policy: match[2], binding: match[3], message: match[4] } : undefined;
}

/**
 * The native answer agrees with the webhook's for one request: both admit the same object (and
 * the same warnings), or both refuse with the same status code and the webhook's message
 * where the apiserver puts a policy's (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy
 * '<policy>' with binding '<binding>' denied request: <message>`).
 */
export function expectSameAnswer(webhook: Answer, native: Answer): void {
  expect(native.status, `native: ${native.message ?? 'admitted'} / webhook: ${webhook.message ?? 'admitted'}`).toBe(
    webhook.status,
  );
  expect(native.warnings).toEqual(webhook.warnings);
  if (webhook.object) {
    expect(admittedShape(native.object)).toEqual(admittedShape(webhook.object));
    return;
  }
  const fromWebhook = webhookDenial(webhook.message);
  const fromPolicy = policyDenial(native.message);
  expect(fromWebhook, webhook.message).toBeDefined();
  expect(fromPolicy, native.message).toBeDefined();
  expect(`${fromPolicy!.head}${fromPolicy!.message}`).toBe(fromWebhook!.message);
}
