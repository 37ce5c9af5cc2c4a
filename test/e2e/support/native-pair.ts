// Two real apiservers for one plugin: one with the webhooks `npm run emit` writes for an
// AdmissionConfiguration, one with the native policies `emit --native` compiles for the same
// configuration; seeded alike, so that the same request can be sent to both and the answers
// compared (support/native.ts, expectSameAnswer). Also the cluster state the rows need: namespaces
// with their default ServiceAccount, and RBAC grants for impersonated users.
import { expect } from 'vitest';
import type { ControlPlane, ControlPlaneOptions } from './control-plane.js';
import { startControlPlane } from './control-plane.js';
import type { Answer, KubeObject } from './kube.js';
import { create, eventually, get, update, webhookDenial } from './kube.js';
import type { NativeCluster } from './native.js';
import { expectSameAnswer, policyDenial, startNativeCluster } from './native.js';
import type { WebhookCluster } from './webhook-cluster.js';
import { startWebhookCluster } from './webhook-cluster.js';

export interface NativePair {
  readonly webhooks: WebhookCluster;
  readonly native: NativeCluster;
  /** The same request on both apiservers: [webhook's answer, native answer]. */
  both(request: (cluster: ControlPlane) => Promise<Answer>): Promise<[Answer, Answer]>;
  stop(): Promise<void>;
}

export interface NativePairOptions {
  /** On both control planes before the webhooks or policies are applied. */
  readonly seed?: (cluster: ControlPlane) => Promise<void>;
  /** On both once the webhooks are applied and the policies in force (state the webhooks learn). */
  readonly after?: (cluster: ControlPlane) => Promise<void>;
  /** True once the native policies answer (the apiserver loads them a moment after storing them). */
  readonly inForce: (cluster: ControlPlane) => Promise<boolean>;
  /** Both control planes' options (built-in plugins to switch off, so the plugin alone decides). */
  readonly controlPlane?: Omit<ControlPlaneOptions, 'admissionConfiguration' | 'controllerManager'>;
  /**
   * The native side's own AdmissionConfiguration, where it differs: the webhook's allowedUsers stand
   * in for an authorizer grant that the policy asks the apiserver's authorizer for instead.
   */
  readonly nativeAdmissionConfiguration?: string;
  /** The webhook cluster's controller-manager (off by default: seed the ServiceAccounts). */
  readonly webhookControllerManager?: boolean;
}

export async function startNativePair(admissionConfiguration: string, options: NativePairOptions): Promise<NativePair> {
  const [webhookStart, nativeStart] = await Promise.allSettled([
    startWebhookCluster({
      admissionConfiguration,
      controlPlane: { ...options.controlPlane, controllerManager: options.webhookControllerManager ?? false },
      before: options.seed,
    }),
    // The native cluster keeps its controller-manager: it fills the policies' type checking.
    startNativeCluster(options.nativeAdmissionConfiguration ?? admissionConfiguration, {
      ...options.controlPlane,
      before: options.seed,
    }),
  ]);
  const stop = () =>
    Promise.all([
      webhookStart.status === 'fulfilled' ? webhookStart.value.stop() : undefined,
      nativeStart.status === 'fulfilled' ? nativeStart.value.stop() : undefined,
    ]).then(() => undefined);
  try {
    if (webhookStart.status === 'rejected') throw webhookStart.reason;
    if (nativeStart.status === 'rejected') throw nativeStart.reason;
    const webhooks = webhookStart.value;
    const native = nativeStart.value;
    await eventually('the native policies are in force', async () =>
      (await options.inForce(native.cluster)) ? true : undefined,
    );
    await Promise.all([webhooks.cluster, native.cluster].map((c) => options.after?.(c)));
    return {
      webhooks,
      native,
      both: (request) => Promise.all([request(webhooks.cluster), request(native.cluster)]),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function expectCreated(what: string, answer: Answer): void {
  if (answer.status !== 201 && answer.status !== 409) throw new Error(`${what}: ${answer.status} ${answer.message}`);
}

/** A namespace and its `default` ServiceAccount (a control plane without controller-manager has none). */
export async function namespaceWithAccount(
  cluster: ControlPlane,
  name: string,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<void> {
  expectCreated(
    `namespace ${name}`,
    await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...metadata } }),
  );
  expectCreated(
    `serviceaccount ${name}/default`,
    await create(cluster, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: name } }),
  );
}

/** A ClusterRole with `rules`, bound to the users and groups named. */
export async function grant(
  cluster: ControlPlane,
  name: string,
  rules: readonly Record<string, unknown>[],
  subjects: { users?: readonly string[]; groups?: readonly string[] },
): Promise<void> {
  expectCreated(
    `clusterrole ${name}`,
    await create(cluster, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [...rules],
    }),
  );
  expectCreated(
    `clusterrolebinding ${name}`,
    await create(cluster, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [
        ...(subjects.users ?? []).map((user) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user })),
        ...(subjects.groups ?? []).map((group) => ({
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'Group',
          name: group,
        })),
      ],
    }),
  );
}

/** Seeds an object, failing the setup if the apiserver refuses it. */
export async function seedObject(cluster: ControlPlane, object: KubeObject): Promise<KubeObject> {
  const answer = await create(cluster, object);
  if (answer.status !== 201) throw new Error(`seeding ${object.kind} ${object.metadata.name}: ${answer.message}`);
  return answer.object!;
}

/** Replaces the stored object with `object` (its resourceVersion read first). */
export async function replace(
  cluster: ControlPlane,
  object: KubeObject,
  options: Parameters<typeof update>[2] = {},
): Promise<Answer> {
  const current = await get(cluster, object);
  if (!current) throw new Error(`${object.kind} ${object.metadata.name} is not stored`);
  return update(
    cluster,
    { ...object, metadata: { ...object.metadata, resourceVersion: current.metadata.resourceVersion } },
    options,
  );
}

/** Updates the stored object as `change` rewrites it (what a client's read-modify-write sends). */
export async function modify(
  cluster: ControlPlane,
  object: KubeObject,
  change: (stored: KubeObject) => KubeObject,
  options: Parameters<typeof update>[2] = {},
): Promise<Answer> {
  const current = await get(cluster, object);
  if (!current) throw new Error(`${object.kind} ${object.metadata.name} is not stored`);
  return update(cluster, change(current), options);
}

/** The stored object with these labels added. */
export const labelled =
  (labels: Record<string, string>) =>
  (stored: KubeObject): KubeObject => ({
    ...stored,
    metadata: { ...stored.metadata, labels: { ...(stored.metadata.labels as object), ...labels } },
  });

/**
 * The same outcome for a request the apiserver may refuse itself (its validation after mutating
 * admission, a subresource it answers): the same status and message, or, where admission decided,
 * the same answer (expectSameAnswer).
 */
export function expectSameOutcome(webhook: Answer, native: Answer): void {
  if (webhook.object || webhookDenial(webhook.message)) {
    expectSameAnswer(webhook, native);
    return;
  }
  expect([native.status, validationErrors(native.message)]).toEqual([
    webhook.status,
    validationErrors(webhook.message),
  ]);
}

/**
 * A 422's field errors as a set: the apiserver's validation walks Go maps (a container's resource
 * names), so the order of `is invalid: [e1, e2]` differs from one request to the next.
 */
function validationErrors(message: string | undefined): unknown {
  const listed = message ? /^(.* is invalid: )\[(.*)\]$/s.exec(message) : null;
  return listed ? [listed[1], listed[2].split(/, (?=spec\.)/).sort()] : message;
}

export interface BuiltinPair {
  /** The apiserver's own plugin decides here (no policy). */
  readonly builtin: ControlPlane;
  /** The built-in is off here and the native policy decides. */
  readonly native: NativeCluster;
  /** The same request on both apiservers: [built-in's answer, native answer]. */
  both(request: (cluster: ControlPlane) => Promise<Answer>): Promise<[Answer, Answer]>;
  stop(): Promise<void>;
}

/**
 * A plugin only an apiserver can serve: one control plane with its built-in (on by default, or
 * enabled), one with the built-in off and the native policy applied, seeded alike.
 */
export async function startBuiltinPair(
  admissionConfiguration: string,
  options: {
    readonly builtin: string;
    readonly seed?: (cluster: ControlPlane) => Promise<void>;
    readonly inForce: (cluster: ControlPlane) => Promise<boolean>;
    readonly extraApiserverArgs?: readonly string[];
  },
): Promise<BuiltinPair> {
  const [builtinStart, nativeStart] = await Promise.allSettled([
    startControlPlane({
      controllerManager: false,
      enableAdmissionPlugins: [options.builtin],
      extraApiserverArgs: options.extraApiserverArgs,
    }),
    startNativeCluster(admissionConfiguration, {
      disableAdmissionPlugins: [options.builtin],
      extraApiserverArgs: options.extraApiserverArgs,
      before: options.seed,
    }),
  ]);
  const stop = () =>
    Promise.all([
      builtinStart.status === 'fulfilled' ? builtinStart.value.stop() : undefined,
      nativeStart.status === 'fulfilled' ? nativeStart.value.stop() : undefined,
    ]).then(() => undefined);
  try {
    if (builtinStart.status === 'rejected') throw builtinStart.reason;
    if (nativeStart.status === 'rejected') throw nativeStart.reason;
    const builtin = builtinStart.value;
    const native = nativeStart.value;
    await options.seed?.(builtin);
    await eventually('the native policies are in force', async () =>
      (await options.inForce(native.cluster)) ? true : undefined,
    );
    return { builtin, native, both: (request) => Promise.all([request(builtin), request(native.cluster)]), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The policy refuses as the built-in does: the same status and the built-in's message where the
 * apiserver puts a policy's (`<head>ValidatingAdmissionPolicy '…' with binding '…' denied request:
 * <message>` against `<head><message>`); or both admit.
 */
export function expectSameAsBuiltin(builtin: Answer, native: Answer): void {
  expect(native.status, `native: ${native.message ?? 'admitted'} / built-in: ${builtin.message ?? 'admitted'}`).toBe(
    builtin.status,
  );
  if (builtin.status < 300) return;
  const fromPolicy = policyDenial(native.message);
  expect(fromPolicy, native.message).toBeDefined();
  expect(`${fromPolicy!.head}${fromPolicy!.message}`).toBe(builtin.message);
}
