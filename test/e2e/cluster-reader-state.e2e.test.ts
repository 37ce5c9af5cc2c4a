// What the plugins read besides a namespace's node selector, read from a real kube-apiserver with
// its controller-manager and the emitted reader ServiceAccount's token, with no `npm run sync`:
// namespaces that existed before the install give their pods the namespace's tolerations
// (PodTolerationRestriction), LimitRange defaults (LimitRanger) and quota (ResourceQuota, with the
// pods already in the namespace counted) on the first request; a namespace created and used in
// the same second is judged right (read-through); a namespace relabel a ValidatingAdmissionPolicy
// refuses changes no later decision. The built-in LimitRanger and ResourceQuota are off, so every
// answer here is the webhooks'. The client itself, against the same apiserver: paged and
// metadata-only lists (a 410 needs etcd compacted: test/cluster/watcher.test.ts scripts it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../lib/kube/api-client.js';
import { kubeconfigCredentials } from '../../lib/kube/cluster-credentials.js';
import type { ReaderCluster } from './support/reader-cluster.js';
import { startReaderCluster } from './support/reader-cluster.js';

const NODE_SELECTOR = 'scheduler.alpha.kubernetes.io/node-selector';
const DEFAULT_TOLERATIONS = 'scheduler.alpha.kubernetes.io/defaultTolerations';
const ENFORCE = 'pod-security.kubernetes.io/enforce';

const ADMISSION_CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodNodeSelector
    configuration:
      podNodeSelectorPluginConfig: {}
  - name: PodTolerationRestriction
  - name: LimitRanger
  - name: ResourceQuota
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults:
        enforce: baseline
        enforce-version: latest
      exemptions:
        usernames: []
        runtimeClasses: []
        namespaces: [kube-system, kube-public, kube-node-lease]
`;

const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx', ...extra }] },
});

const object = (value: unknown) => JSON.stringify(value);

let reader: ReaderCluster;

beforeAll(async () => {
  reader = await startReaderCluster({
    admissionConfig: ADMISSION_CONFIG,
    // ServiceAccount off too: a pod in a namespace created a moment ago needs no default account.
    controlPlane: { disableAdmissionPlugins: ['LimitRanger', 'ResourceQuota', 'ServiceAccount'] },
    async beforeInstall(must) {
      await must(['create', 'namespace', 'tolerant']);
      await must([
        'annotate',
        'namespace',
        'tolerant',
        `${DEFAULT_TOLERATIONS}=[{"key":"team","operator":"Equal","value":"a","effect":"NoSchedule"}]`,
      ]);
      await must(['create', 'namespace', 'limited']);
      await must(
        ['apply', '-f', '-'],
        object({
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'defaults', namespace: 'limited' },
          spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }] },
        }),
      );
      await must(['create', 'namespace', 'counted']);
      await must(['create', 'quota', 'pods', '--namespace', 'counted', '--hard=pods=1']);
      await must(['apply', '-n', 'counted', '-f', '-'], object(pod('already-here')));
      await must(['create', 'namespace', 'frozen']);
      await must(
        ['apply', '-f', '-'],
        object({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name: 'frozen-namespace-labels' },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['namespaces'] },
              ],
            },
            validations: [
              {
                expression:
                  "object.metadata.name != 'frozen' || object.metadata.?labels.orValue({}) == oldObject.metadata.?labels.orValue({})",
                message: 'the labels of namespace frozen are frozen',
              },
            ],
          },
        }),
      );
      await must(
        ['apply', '-f', '-'],
        object({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name: 'frozen-namespace-labels' },
          spec: { policyName: 'frozen-namespace-labels', validationActions: ['Deny'] },
        }),
      );
      await must(['create', 'namespace', 'marker']);
    },
  });
});

afterAll(async () => {
  await reader?.stop();
});

/** Waits until a change to the marker namespace is judged: the reader has handled every earlier event. */
async function markerSettles(pool: string) {
  await reader.must(['annotate', '--overwrite', 'namespace', 'marker', `${NODE_SELECTOR}=pool=${pool}`]);
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await reader.dryRunPod('marker', pod('probe'));
    if (answer.status === 201 && answer.body.spec?.nodeSelector?.pool === pool) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the marker's pool ${pool} never applied`);
}

describe('namespaces that existed before the install, on the first request', () => {
  it("gives a pod its namespace's default tolerations", async () => {
    const answer = await reader.dryRunPod('tolerant', pod('p'));
    expect(answer.status).toBe(201);
    expect(answer.body.spec?.tolerations).toContainEqual({
      key: 'team',
      operator: 'Equal',
      value: 'a',
      effect: 'NoSchedule',
    });
  });

  it("gives a container its namespace's LimitRange defaults", async () => {
    const answer = await reader.dryRunPod('limited', pod('p'));
    expect(answer.status).toBe(201);
    expect(answer.body.spec?.containers?.[0].resources).toEqual({
      requests: { cpu: '100m' },
      limits: { cpu: '500m' },
    });
    expect(answer.body.metadata?.annotations?.['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu request for container app; cpu limit for container app',
    );
  });

  it('counts the pods already in a namespace against its quota', async () => {
    const answer = await reader.dryRunPod('counted', pod('one-too-many'));
    expect(answer.status).toBe(403);
    expect(answer.body.message).toContain('exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1');
  });
});

describe('read-through', () => {
  it('judges a namespace created and used in the same second', async () => {
    for (const name of ['fresh-1', 'fresh-2', 'fresh-3']) {
      await reader.must(
        ['create', '-f', '-'],
        object({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name, annotations: { [NODE_SELECTOR]: `pool=${name}` } },
        }),
      );
      const answer = await reader.dryRunPod(name, pod('p'));
      expect(answer.status).toBe(201);
      expect(answer.body.spec?.nodeSelector).toEqual({ pool: name });
    }
  });
});

describe('a write the rest of the chain refuses', () => {
  it('a relabel a ValidatingAdmissionPolicy refuses changes no later decision', async () => {
    const privileged = pod('p', { securityContext: { privileged: true } });
    expect((await reader.dryRunPod('frozen', privileged)).status).toBe(403);
    const relabel = await reader.cluster.kubectl(['label', 'namespace', 'frozen', `${ENFORCE}=privileged`]);
    expect(relabel.code).not.toBe(0);
    expect(relabel.stderr).toContain('the labels of namespace frozen are frozen');
    expect(reader.webhooksYaml).not.toMatch(/\.learn\.serverless-admission\.io/);
    await markerSettles('after-relabel');
    const answer = await reader.dryRunPod('frozen', privileged);
    expect(answer.status).toBe(403);
    expect(answer.body.message).toContain('violates PodSecurity "baseline:latest": privileged');
  });
});

describe('the API client on a real apiserver', () => {
  const admin = () => new ApiClient(kubeconfigCredentials(reader.cluster.kubeconfig));

  it('lists page by page as one whole list', async () => {
    const client = admin();
    try {
      const whole = await client.list('/api/v1/namespaces');
      const paged = await client.list('/api/v1/namespaces', { limit: 1 });
      expect(whole.items.length).toBeGreaterThan(3);
      expect(paged.items.map((o) => o.metadata?.name)).toEqual(whole.items.map((o) => o.metadata?.name));
    } finally {
      client.close();
    }
  });

  it('lists metadata only as PartialObjectMetadata', async () => {
    const client = admin();
    try {
      const listed = await client.list('/api/v1/namespaces', { metadataOnly: true, limit: 2 });
      expect(listed.items.length).toBeGreaterThan(3);
      for (const item of listed.items) {
        expect(item.kind).toBe('PartialObjectMetadata');
        expect(item).not.toHaveProperty('status');
        expect(item.metadata?.resourceVersion).toMatch(/^\d+$/);
      }
    } finally {
      client.close();
    }
  });
});
