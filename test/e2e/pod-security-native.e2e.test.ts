// PodSecurity natively on a real kube-apiserver v1.36.2: the policies `emit --native
// --kubernetes-version 1.30` writes for a PodSecurity entry with defaults (enforce baseline, warn and
// audit restricted) and exemptions (a user, a runtime class, a namespace), applied to a control plane
// whose built-in PodSecurity is off, answer every fixture case as the webhook plugin does: the same
// decision, refusal, warnings and audit annotations (read from the apiserver's audit log). A pod
// with 100 containers is judged without a cost error. A second control plane, with the built-in on
// as every managed cluster runs it, shows how the two combine.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import plugin from '../../functions/pod-security/plugin.js';
import { emitNative } from '../../infra/native/emit.js';
import type { NativeObject } from '../../infra/native/objects.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { runPhase } from '../support/review.js';
import type { PodSecurityCase } from '../support/cases/pod-security.js';
import {
  asDeployment,
  configurationCases,
  fixtureCases,
  POD,
  POD_SECURITY_CONFIGURATION,
} from '../support/cases/pod-security.js';
import { configured, namespaceState } from '../native/support/proof.js';
import type { PodSecurityAnswer } from '../native/support/pod-security.js';
import { AUDIT, ENFORCE, nativeAnswer, WARN, warningPrefix, webhookAnswer } from '../native/support/pod-security.js';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { FullAnswer } from './support/answers.js';
import { auditAnnotations, fullRequest, METADATA_AUDIT_POLICY } from './support/answers.js';

const entry = configured(plugin, POD_SECURITY_CONFIGURATION);
const work = mkdtempSync(join(tmpdir(), 'pod-security-native-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What `npm run emit -- --native --kubernetes-version 1.30` writes for the entry, and what it says on stderr. */
function emitted(): { objects: readonly NativeObject[]; stderr: string } {
  const file = join(work, 'admission.yaml');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [{ name: 'PodSecurity', configuration: POD_SECURITY_CONFIGURATION }],
    }),
  );
  let stderr = '';
  const { objects } = emitNative(
    { kubernetesVersion: '1.30', admissionConfig: file },
    { stdout: () => {}, stderr: (t) => (stderr += t), env: {} },
  );
  return { objects, stderr };
}

const PATHS: Record<string, string> = {
  ValidatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** A control plane with its audit log, the policies applied and their type checking done. */
async function clusterWithPolicies(name: string, builtIn: boolean) {
  const dir = mkdtempSync(join(work, `${name}-`));
  const policyFile = join(dir, 'audit-policy.yaml');
  const auditLog = join(dir, 'audit.log');
  writeFileSync(policyFile, METADATA_AUDIT_POLICY);
  const cluster = await startControlPlane({
    ...(!builtIn && { disableAdmissionPlugins: ['PodSecurity'] }),
    extraApiserverArgs: [`--audit-policy-file=${policyFile}`, `--audit-log-path=${auditLog}`],
  });
  // The RuntimeClass admission plugin refuses a pod whose class does not exist.
  for (const name of ['exempt-runtime', 'other-runtime']) {
    const answer = await cluster.request('POST', '/apis/node.k8s.io/v1/runtimeclasses', {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name },
      handler: 'runc',
    });
    expect(answer.status, answer.body).toBe(201);
  }
  const { objects } = emitted();
  for (const object of objects) {
    const answer = await cluster.request('POST', PATHS[object.kind], object);
    expect(answer.status, answer.body).toBe(201);
  }
  return { cluster, auditLog };
}

interface Sent {
  readonly c: PodSecurityCase;
  readonly namespace: string;
}

/** Namespaces for every label set the cases use (and the exempt one), each with its default ServiceAccount. */
let namespaces = 0;
async function namespacesFor(cluster: ControlPlane, cases: readonly PodSecurityCase[]): Promise<Sent[]> {
  const byLabels = new Map<string, string>();
  const sent: Sent[] = [];
  for (const c of cases) {
    const key = c.namespace ?? JSON.stringify(c.labels);
    if (!byLabels.has(key)) {
      const name = c.namespace ?? `ps-${namespaces++}`;
      byLabels.set(key, name);
      const answer = await cluster.request('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: c.labels },
      });
      expect(answer.status, answer.body).toBe(201);
    }
    sent.push({ c, namespace: byLabels.get(key)! });
  }
  for (const name of byLabels.values())
    await until(`${name}/default`, async () =>
      (await cluster.request('GET', `/api/v1/namespaces/${name}/serviceaccounts/default`)).status === 200
        ? true
        : undefined,
    );
  return sent;
}

const collection = (c: PodSecurityCase, namespace: string) =>
  `${c.resource.group === '' ? '/api/v1' : `/apis/${c.resource.group}/v1`}/namespaces/${namespace}/${c.resource.resource}`;

/** A dry-run create of the case, as admin or as its user. */
function send(cluster: ControlPlane, { c, namespace }: Sent): Promise<FullAnswer> {
  const headers: Record<string, string> = c.username
    ? { 'Impersonate-User': c.username, 'Impersonate-Group': 'system:masters' }
    : {};
  return fullRequest(cluster, 'POST', `${collection(c, namespace)}?dryRun=All`, c.object, headers);
}

/**
 * The webhook's answer on the object as the apiserver would send it: defaulted and mutated (the
 * apiserver copies AppArmor annotations into the containers' fields, the ServiceAccount plugin adds
 * its token volume), which a dry run in the exempt namespace returns.
 */
async function webhookOf(cluster: ControlPlane, { c, namespace }: Sent): Promise<PodSecurityAnswer | undefined> {
  const held = await fullRequest(cluster, 'POST', `${collection(c, 'exempt-ns')}?dryRun=All`, c.object);
  // The apiserver's own validation refuses it: no webhook would be called.
  if (held.status === 422) return undefined;
  expect(held.status, JSON.stringify(held.body)).toBe(201);
  const stored = held.body as KubeObject;
  const object = { ...stored, metadata: { ...stored.metadata, namespace } } as KubeObject;
  const kind = String(object.kind);
  const result = await runPhase(
    plugin,
    'validate',
    {
      object,
      namespace,
      kind: { group: c.resource.group, version: 'v1', kind },
      resource: { group: c.resource.group, version: 'v1', resource: c.resource.resource },
      userInfo: { username: c.username ?? 'e2e-admin', groups: ['system:masters', 'system:authenticated'] },
    },
    entry.config,
    namespaceState([{ name: namespace, labels: c.labels }]),
  );
  return webhookAnswer(result.wire.response!);
}

/** Runs `work` over `items`, `width` at a time, in order of the results. */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width)
    results.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return results;
}

describe('built-in PodSecurity off: the policies answer as the webhook', () => {
  let cluster: ControlPlane;
  let auditLog: string;
  beforeAll(async () => {
    ({ cluster, auditLog } = await clusterWithPolicies('off', false));
  });
  afterAll(() => cluster?.stop());

  it('type-checks every policy without a warning', async () => {
    for (const name of [ENFORCE, WARN, AUDIT]) {
      const checking = await until(`${name} typeChecking`, async () => {
        const policy = (await cluster.request('GET', `${PATHS.ValidatingAdmissionPolicy}/${name}`)).json<{
          status?: { typeChecking?: { expressionWarnings?: unknown[] } };
        }>();
        return policy.status?.typeChecking;
      });
      expect(checking.expressionWarnings ?? []).toEqual([]);
    }
  });

  it('answers every fixture case and configuration case as the webhook plugin, with the same audit annotations', async () => {
    const cases = [...fixtureCases(), ...configurationCases()];
    const sent = await namespacesFor(cluster, cases);
    // The policies are in force once a privileged pod in an unlabelled namespace is refused by them.
    const probe = sent.find((s) => s.c.name.startsWith('an unlabelled namespace enforces'))!;
    await until('the policies in force', async () => ((await send(cluster, probe)).status === 403 ? true : undefined));

    const answers = await inBatches(sent, 16, (s) => send(cluster, s));
    const webhooks = await inBatches(sent, 16, (s) => webhookOf(cluster, s));
    const events = await until('the audit events', async () => {
      const found = auditAnnotations(auditLog);
      return answers.every((a) => found.has(a.auditId)) ? found : undefined;
    });
    let compared = 0;
    let refused = 0;
    const invalid: string[] = [];
    const mismatches: string[] = [];
    for (const [i, s] of sent.entries()) {
      const answer = answers[i];
      // The apiserver's own validation refuses a few fixture pods before admission: nothing to compare.
      if (answer.status === 422) {
        invalid.push(s.c.name);
        continue;
      }
      expect([201, 403], `${s.c.name}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
      const native = nativeAnswer({
        allowed: answer.status === 201,
        status: answer.body as { message?: string },
        // The apiserver's own warnings (deprecated fields) are not the policies'.
        warnings: answer.warnings.filter((w) => w.startsWith(warningPrefix)),
        annotations: events.get(answer.auditId) ?? {},
      });
      const webhook = webhooks[i];
      expect(webhook, s.c.name).toBeDefined();
      if (JSON.stringify(native) !== JSON.stringify(webhook))
        mismatches.push(`${s.c.name}:\n  native  ${JSON.stringify(native)}\n  webhook ${JSON.stringify(webhook)}`);
      compared++;
      if (answer.status === 403) refused++;
    }
    console.log(
      `PodSecurity on kube-apiserver: ${compared} of ${sent.length} cases agree (${refused} refused); ` +
        `${invalid.length} refused by the apiserver's pod validation first: ${invalid.slice(0, 5).join('; ')}`,
    );
    expect(mismatches.slice(0, 5).join('\n'), `${mismatches.length} cases disagree`).toBe('');
    expect(compared).toBeGreaterThan(sent.length * 0.9);
  }, 1_200_000);

  it('judges a pod with 100 containers without a cost error', async () => {
    const containers = Array.from({ length: 100 }, (_, i) => ({
      name: `c${i}`,
      image: 'registry.k8s.io/pause',
      ports: [{ containerPort: 1000 + i, hostPort: 1000 + i }],
      securityContext: {
        privileged: true,
        capabilities: { add: ['NET_ADMIN', 'SYS_TIME', `SYS_${i % 10 === 0 ? 'ADMIN' : 'PTRACE'}`] },
        seLinuxOptions: { type: `spc_t_${i}`, user: 'u' },
        runAsUser: 0,
      },
      livenessProbe: { httpGet: { host: `h${i}.example`, port: 80 } },
    }));
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'wide' },
      spec: {
        hostNetwork: true,
        containers,
        volumes: Array.from({ length: 100 }, (_, i) => ({ name: `v${i}`, hostPath: { path: `/v${i}` } })),
      },
    };
    const restricted = { 'pod-security.kubernetes.io/enforce': 'restricted' };
    const warned = {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'restricted',
    };
    const sent = await namespacesFor(cluster, [
      { name: 'wide (enforce)', labels: restricted, object: pod, resource: POD },
      { name: 'wide (warn)', labels: warned, object: pod, resource: POD },
      {
        name: 'wide Deployment',
        labels: warned,
        object: asDeployment(pod, 'wide'),
        resource: { group: 'apps', resource: 'deployments' },
      },
    ]);
    const [enforced, warnedPod, deployment] = await Promise.all(sent.map((s) => send(cluster, s)));
    const message = String((enforced.body as { message?: string }).message);
    expect(enforced.status, message).toBe(403);
    expect(message).toContain(`ValidatingAdmissionPolicy '${ENFORCE}'`);
    expect(message).not.toMatch(/cost|budget/);
    // The details of 100 containers exceed the 5 KiB a policy's message may hold: the static text.
    expect(message).toContain('violates PodSecurity (the details exceed the 5 KiB a policy message may hold)');
    for (const answer of [warnedPod, deployment]) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      expect(answer.warnings.join('\n')).not.toMatch(/cost|budget/);
      expect(answer.warnings.some((w) => w.includes(`'${WARN}'`) && w.includes('would violate PodSecurity'))).toBe(
        true,
      );
    }
  });
});

describe('built-in PodSecurity on: how the two combine', () => {
  let cluster: ControlPlane;
  beforeAll(async () => {
    ({ cluster } = await clusterWithPolicies('on', true));
  });
  afterAll(() => cluster?.stop());

  const privileged = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { hostNetwork: true, containers: [{ name: 'c', image: 'registry.k8s.io/pause' }], ...extra },
  });

  it('a labelled namespace is decided by the built-in first; an unlabelled one by the policies; exemptions only where the built-in admits', async () => {
    const cases: PodSecurityCase[] = [
      { name: 'unlabelled', labels: {}, object: privileged('a'), resource: POD },
      {
        name: 'labelled',
        labels: { 'pod-security.kubernetes.io/enforce': 'baseline' },
        object: privileged('b'),
        resource: POD,
      },
      { name: 'exempt user, unlabelled', labels: {}, object: privileged('c'), resource: POD, username: 'exempt-user' },
      {
        name: 'exempt user, labelled',
        labels: { 'pod-security.kubernetes.io/enforce': 'baseline' },
        object: privileged('d'),
        resource: POD,
        username: 'exempt-user',
      },
    ];
    const sent = await namespacesFor(cluster, cases);
    await until('the policies in force', async () =>
      (await send(cluster, sent[0])).status === 403 ? true : undefined,
    );
    const [unlabelled, labelled, exemptUnlabelled, exemptLabelled] = await Promise.all(
      sent.map((s) => send(cluster, s)),
    );
    const message = (a: FullAnswer) => String((a.body as { message?: string }).message);
    // Unlabelled: the built-in's default is privileged; the policies enforce the configured baseline.
    expect(unlabelled.status).toBe(403);
    expect(message(unlabelled)).toContain(`ValidatingAdmissionPolicy '${ENFORCE}'`);
    // Labelled: the built-in refuses first, in its own words; the policies never run, so one refusal.
    expect(labelled.status).toBe(403);
    expect(message(labelled)).toBe(
      'pods "b" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    );
    // An exempt user: admitted where only the policies judge, still refused by the built-in where a label enforces.
    expect(exemptUnlabelled.status).toBe(201);
    expect(exemptLabelled.status).toBe(403);
    expect(message(exemptLabelled)).toBe(
      'pods "d" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    );
  });
});
