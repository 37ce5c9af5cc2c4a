// limit-pod-hard-anti-affinity-topology natively: the ValidatingAdmissionPolicy `emit --native`
// compiles, applied to a real apiserver, answers upstream's TestInterPodAffinityAdmission
// (test/support/cases), the two more rows of test/native/limit-pod-hard-anti-affinity-topology.test.ts
// and TestHandles as the webhook does on another apiserver. Upstream's rows whose topologyKey is
// ' zone ' (and a term without one) are not a valid pod: the apiserver refuses them with 422
// before validating admission, on both sides alike; the plugin's own answer to them stays with the
// in-process proof. TestHandles' UPDATE and DELETE act on a pod stored before the install, CONNECT
// is pods/exec and TestOtherResources' subresource is a real eviction; its non-pod object is never
// sent as a pod by an apiserver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, pod, remove } from './support/kube.js';
import { expectSameAnswer, policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { labelled, modify, namespaceWithAccount, seedObject, startNativePair } from './support/native-pair.js';
import { INTER_POD_AFFINITY_CASES, term } from '../support/cases/limit-pod-hard-anti-affinity-topology.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: LimitPodHardAntiAffinityTopology
`;

/**
 * Upstream's terms name the namespace `''` (the pod's own, to its fake client), which the
 * apiserver's validation refuses: a real pod leaves `namespaces` out for the same meaning.
 */
const real = (affinity: unknown): unknown => JSON.parse(JSON.stringify(affinity).replaceAll('"namespaces":[""],', ''));
const withAffinity = (name: string, affinity: unknown): KubeObject => pod('team-a', name, { affinity: real(affinity) });
const ZONAL = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone')] } };
const zonal = (name: string) => withAffinity(name, ZONAL);

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    seed: async (cluster) => {
      await namespaceWithAccount(cluster, 'team-a');
      for (const name of ['updated', 'deleted', 'exec', 'evicted']) await seedObject(cluster, zonal(name));
    },
    inForce: async (cluster) => (await create(cluster, zonal('probe'), { dryRun: true })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const raw = async (cluster: ControlPlane, method: string, path: string, body?: unknown): Promise<Answer> => {
  const answer = await cluster.request(method, path, body);
  const parsed = JSON.parse(answer.body) as { message?: string };
  return { status: answer.status, message: parsed.message, warnings: [], raw: answer };
};

/** [name, request, refused by the plugin (undefined: by the apiserver's validation, 422)]. */
const rows: [string, (cluster: ControlPlane) => Promise<Answer>, boolean | undefined][] = [
  ...INTER_POD_AFFINITY_CASES.map(({ name, affinity, errorExpected }, index): (typeof rows)[number] => [
    name,
    (cluster) => create(cluster, withAffinity(`row-${index}`, affinity)),
    JSON.stringify(affinity).includes(' zone ') ? undefined : errorExpected,
  ]),
  [
    'a required term without topologyKey',
    (cluster) =>
      create(
        cluster,
        withAffinity('no-key', { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{}] } }),
      ),
    undefined,
  ],
  [
    'two offending terms',
    (cluster) =>
      create(
        cluster,
        withAffinity('two', {
          podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term('zone'), term('region')] },
        }),
      ),
    true,
  ],
  ['TestHandles CREATE', (cluster) => create(cluster, zonal('created')), true],
  ['TestHandles UPDATE', (cluster) => modify(cluster, zonal('updated'), labelled({ changed: 'yes' })), true],
  ['TestHandles DELETE', (cluster) => remove(cluster, zonal('deleted')), false],
  [
    'TestHandles CONNECT (pods/exec)',
    (cluster) => raw(cluster, 'POST', '/api/v1/namespaces/team-a/pods/exec/exec?command=true&stdout=true'),
    false,
  ],
  [
    'pod subresource (eviction)',
    (cluster) =>
      raw(cluster, 'POST', '/api/v1/namespaces/team-a/pods/evicted/eviction', {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'evicted', namespace: 'team-a' },
      }),
    false,
  ],
];

describe('limit-pod-hard-anti-affinity-topology (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const [name, request, refused] of rows) {
    it(`answers as the webhook does: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      if (refused === undefined) {
        expect(webhook.status, webhook.message).toBe(422);
        expect([native.status, native.message]).toEqual([webhook.status, webhook.message]);
        return;
      }
      expect(webhook.status === 403, webhook.message ?? 'admitted').toBe(refused);
      if (!refused && !webhook.object) {
        // The apiserver's own answer after admission (a pod on no node has nothing to exec).
        expect([native.status, native.message]).toEqual([webhook.status, webhook.message]);
        return;
      }
      expectSameAnswer(webhook, native);
      if (refused)
        expect(policyDenial(native.message)?.message).toMatch(
          /^affinity\.PodAntiAffinity\.RequiredDuringScheduling has TopologyKey zone but only key kubernetes\.io\/hostname is allowed$/,
        );
    });
  }
});
