// Upstream's tables (plugin/pkg/admission/limitranger/admission_test.go) ported: every case's
// LimitRange is learned through the plugin's own learning webhook (upstream's informer), in a
// namespace of its own on one DynamoDB Local table, and the pod or claim goes through the real Lambda
// handler: the mutation's patch applied with an RFC 6902 implementation and run again on its own
// output (upstream's WithReinvocationTesting), then Validate. Upstream's tables expect an error or
// none; each refusal here is also held to upstream's exact message. Plus: the cluster-wide default
// (configuration.defaultLimitRange), learning (updates, deletes, dry runs), `npm run sync`,
// in-place resizes, pod-level resources and the configuration's strict reading.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/limit-ranger/plugin.js';
import { plugins } from '../../functions/index.js';
import { syncCommand } from '../../infra/sync/cli.js';
import { learningRules } from '../../lib/admission/learning.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import { defaultContainerResourceRequirements, limitRangeOf } from '../../lib/kube/limit-ranges.js';
import type { Invocation, TestStore } from '../support/dynamodb.js';
import { lambdaFor, testStore } from '../support/dynamodb.js';
import { classWrite, patchedObject } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';

type List = Record<string, string>;
type Invoke = ReturnType<typeof lambdaFor>;

// --- upstream's builders ------------------------------------------------------------------------

const compute = (cpu: string, memory: string): List => ({
  ...(cpu && { cpu }),
  ...(memory && { memory }),
});
const storage = (value: string): List => (value ? { storage: value } : {});
const local = (value: string): List => (value ? { 'ephemeral-storage': value } : {});
const NONE: List = {};

interface Resources {
  requests?: List;
  limits?: List;
}
/** getResourceRequirements; empty lists are left out, as Go's omitempty leaves them out on the wire. */
const requirements = (requests: List, limits: List): Resources => ({
  ...(Object.keys(requests).length > 0 && { requests }),
  ...(Object.keys(limits).length > 0 && { limits }),
});

type LimitTypeName = 'Pod' | 'Container' | 'PersistentVolumeClaim';
interface Item {
  type: LimitTypeName;
  min?: List;
  max?: List;
  default?: List;
  defaultRequest?: List;
  maxLimitRequestRatio?: List;
}
const item = (type: LimitTypeName, min: List, max: List, def = NONE, defReq = NONE, ratio = NONE): Item => {
  const lists = { min, max, default: def, defaultRequest: defReq, maxLimitRequestRatio: ratio };
  return { type, ...Object.fromEntries(Object.entries(lists).filter(([, l]) => Object.keys(l).length > 0)) };
};
const limitRange = (namespace: string, limits: Item[], name = 'abc'): KubeObject => ({
  metadata: { name, namespace },
  spec: { limits },
});

/** validLimitRange's items. */
const VALID_ITEMS: Item[] = [
  item('Pod', compute('50m', '2Mi'), compute('200m', '4Gi')),
  item('Container', compute('25m', '1Mi'), compute('100m', '2Gi'), compute('75m', '10Mi'), compute('50m', '5Mi')),
];
/** validLimitRangeNoDefaults's items. */
const NO_DEFAULTS_ITEMS: Item[] = [
  item('Pod', compute('50m', '2Mi'), compute('200m', '4Gi')),
  item('Container', compute('25m', '1Mi'), compute('100m', '2Gi')),
];

interface Container {
  name: string;
  image: string;
  resources?: Resources;
  restartPolicy?: string;
}
const container = (i: number, resources: Resources): Container => ({
  name: `foo-${i}`,
  image: `foo:V${i}`,
  ...(Object.keys(resources).length > 0 && { resources: structuredClone(resources) }),
});
/** validPod */
const pod = (name: string, containers: number, resources: Resources, namespace = 'test'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: { containers: Array.from({ length: containers }, (_, i) => container(i, resources)) },
});
/** validPodInit */
const withInit = (p: KubeObject, ...resources: Resources[]): KubeObject => {
  const spec = p.spec as { initContainers?: Container[] };
  return {
    ...p,
    spec: { ...spec, initContainers: [...(spec.initContainers ?? []), ...resources.map((r, i) => container(i, r))] },
  };
};
/** withRestartableInitContainer */
const withRestartableInit = (requests: List, limits: List, p: KubeObject): KubeObject => {
  const spec = p.spec as { initContainers?: Container[] };
  const n = spec.initContainers?.length ?? 0;
  const sidecar = { ...container(n, requirements(requests, limits)), restartPolicy: 'Always' };
  return { ...p, spec: { ...spec, initContainers: [...(spec.initContainers ?? []), sidecar] } };
};
/** validPersistentVolumeClaim */
const claim = (name: string, requests: List, namespace = 'test'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests } },
});

// --- the cluster: one table, a namespace per case -----------------------------------------------

const podReview = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({ object, ...extra });
const claimReview = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  object,
  resource: { resource: 'persistentvolumeclaims' },
  ...extra,
});

let store: TestStore;
let invoke: Invoke;
const stores: TestStore[] = [];
beforeAll(async () => {
  store = await testStore('limit-ranger');
  stores.push(store);
  invoke = lambdaFor(plugin, store);
});
afterAll(() => {
  for (const s of stores) s.close();
});

let namespaces = 0;
/** A fresh namespace with these LimitRanges learned through the learning webhook. */
async function namespaceWith(...ranges: Item[][]): Promise<string> {
  const namespace = `ns-${++namespaces}`;
  for (const [i, limits] of ranges.entries()) await learn(invoke, limitRange(namespace, limits, `lr-${i}`));
  return namespace;
}
async function learn(to: Invoke, object: KubeObject, operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'CREATE') {
  const result = await to('learn', classWrite('limitranges', object, operation));
  expect(result.statusCode).toBe(200);
  expect(result.review?.response?.allowed).toBe(true);
}
const inNamespace = (object: KubeObject, namespace: string): KubeObject => ({
  ...object,
  metadata: { ...object.metadata, namespace },
});

/** Admit (patch applied, then re-run on its output: nothing more to do); returns the admitted pod. */
async function mutate(object: KubeObject, to: Invoke = invoke, extra: Partial<ReviewInput> = {}): Promise<KubeObject> {
  const mutated = patchedObject(await to('mutate', podReview(object, extra)), object);
  const again = await to('mutate', podReview(mutated, extra));
  expect(again.review?.response?.patch, 'a second run changes nothing').toBeUndefined();
  return mutated;
}
const validate = (object: KubeObject, to: Invoke = invoke, extra: Partial<ReviewInput> = {}) =>
  to('validate', podReview(object, extra));
function refusal(result: Invocation): string {
  expect(result.statusCode).toBe(200);
  const response = result.review?.response;
  expect(response?.allowed).toBe(false);
  expect(response?.status?.code).toBe(403);
  expect(response?.status?.reason).toBe('Forbidden');
  return response?.status?.message ?? '';
}
const allowedOf = (result: Invocation) => {
  expect(result.statusCode).toBe(200);
  return result.review?.response?.allowed;
};
const SOURCE = { file: 'test', baseDir: '.' };
function configure(raw: unknown) {
  if (plugin.configure === undefined) throw new Error('LimitRanger reads its configuration');
  return plugin.configure(raw, SOURCE);
}
const resourcesOf = (object: KubeObject, list: 'containers' | 'initContainers' = 'containers') =>
  ((object.spec as Record<string, Container[]>)[list] ?? []).map((c) => c.resources);
const annotationOf = (object: KubeObject) => object.metadata?.annotations?.['kubernetes.io/limit-ranger'];

// --- upstream's tests ---------------------------------------------------------------------------

describe('TestDefaultContainerResourceRequirements', () => {
  it("takes the Container item's defaultRequest as requests and default as limits", () => {
    const lr = limitRangeOf('abc', limitRange('test', VALID_ITEMS));
    expect(defaultContainerResourceRequirements(lr)).toEqual({
      requests: compute('50m', '5Mi'),
      limits: compute('75m', '10Mi'),
    });
  });
});

describe('TestMergePodResourceRequirements', () => {
  it('a pod with no resources gets each default, and the annotation says so', async () => {
    const ns = await namespaceWith(VALID_ITEMS);
    const admitted = await mutate(pod('empty-resources', 1, {}, ns));
    expect(resourcesOf(admitted)).toEqual([{ requests: compute('50m', '5Mi'), limits: compute('75m', '10Mi') }]);
    expect(annotationOf(admitted)).toBe(
      'LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0',
    );
  });

  it('a pod with some resources gets only the missing ones, init containers too', async () => {
    const ns = await namespaceWith(VALID_ITEMS);
    const input = requirements(compute('', '512Mi'), NONE);
    const admitted = await mutate(withInit(pod('limit-memory', 1, input, ns), input));
    const expected = { requests: compute('50m', '512Mi'), limits: compute('75m', '10Mi') };
    expect(resourcesOf(admitted)).toEqual([expected]);
    expect(resourcesOf(admitted, 'initContainers')).toEqual([expected]);
    // Upstream's test expects no words for the init container: there it shares the container's Go
    // maps, already filled. Containers on the wire share nothing, and upstream's code then names
    // the init container too, as here.
    expect(annotationOf(admitted)).toBe(
      'LimitRanger plugin set: cpu request for container foo-0; cpu, memory limit for container foo-0; ' +
        'cpu request for init container foo-0; cpu, memory limit for init container foo-0',
    );
  });

  it('a pod with every resource set is left alone, without annotation', async () => {
    const ns = await namespaceWith(VALID_ITEMS);
    const input = requirements(compute('100m', '512Mi'), compute('200m', '1G'));
    const init = requirements(compute('200m', '1G'), compute('400m', '2G'));
    const original = withInit(pod('limit-memory', 1, input, ns), init);
    const result = await invoke('mutate', podReview(original));
    expect(result.review?.response?.patch).toBeUndefined();
    expect(annotationOf(patchedObject(result, original))).toBeUndefined();
  });
});

interface PodCase {
  pod: KubeObject;
  limits: Item;
  /** The refusal's message after `pods "<name>" is forbidden: `, for the error cases. */
  message?: string;
}
const C = (min: List, max: List, ratio = NONE) => item('Container', min, max, NONE, NONE, ratio);
const P = (min: List, max: List, ratio = NONE) => item('Pod', min, max, NONE, NONE, ratio);
const rr = requirements;

const SUCCESS_CASES: PodCase[] = [
  { pod: pod('ctr-min-cpu-request', 1, rr(compute('100m', ''), NONE)), limits: C(compute('50m', ''), NONE) },
  {
    pod: pod('ctr-min-cpu-request-limit', 1, rr(compute('100m', ''), compute('200m', ''))),
    limits: C(compute('50m', ''), NONE),
  },
  { pod: pod('ctr-min-memory-request', 1, rr(compute('', '60Mi'), NONE)), limits: C(compute('', '50Mi'), NONE) },
  {
    pod: pod('ctr-min-memory-request-limit', 1, rr(compute('', '60Mi'), compute('', '100Mi'))),
    limits: C(compute('', '50Mi'), NONE),
  },
  {
    pod: pod('ctr-max-cpu-request-limit', 1, rr(compute('500m', ''), compute('1', ''))),
    limits: C(NONE, compute('2', '')),
  },
  { pod: pod('ctr-max-cpu-limit', 1, rr(NONE, compute('1', ''))), limits: C(NONE, compute('2', '')) },
  {
    pod: pod('ctr-max-mem-request-limit', 1, rr(compute('', '250Mi'), compute('', '500Mi'))),
    limits: C(NONE, compute('', '1Gi')),
  },
  {
    pod: pod('ctr-max-cpu-ratio', 1, rr(compute('500m', ''), compute('750m', ''))),
    limits: C(NONE, NONE, compute('1.5', '')),
  },
  { pod: pod('ctr-max-mem-limit', 1, rr(NONE, compute('', '500Mi'))), limits: C(NONE, compute('', '1Gi')) },
  { pod: pod('pod-min-cpu-request', 2, rr(compute('75m', ''), NONE)), limits: P(compute('100m', ''), NONE) },
  {
    pod: pod('pod-min-cpu-request-limit', 2, rr(compute('75m', ''), compute('200m', ''))),
    limits: P(compute('100m', ''), NONE),
  },
  { pod: pod('pod-min-memory-request', 2, rr(compute('', '60Mi'), NONE)), limits: P(compute('', '100Mi'), NONE) },
  {
    pod: pod('pod-min-memory-request-limit', 2, rr(compute('', '60Mi'), compute('', '100Mi'))),
    limits: P(compute('', '100Mi'), NONE),
  },
  {
    pod: withInit(pod('pod-init-min-memory-request', 2, rr(compute('', '60Mi'), NONE)), rr(compute('', '100Mi'), NONE)),
    limits: P(compute('', '100Mi'), NONE),
  },
  {
    pod: withInit(
      pod('pod-init-min-memory-request-limit', 2, rr(compute('', '60Mi'), compute('', '100Mi'))),
      rr(compute('', '80Mi'), compute('', '100Mi')),
    ),
    limits: P(compute('', '100Mi'), NONE),
  },
  {
    pod: pod('pod-max-cpu-request-limit', 2, rr(compute('500m', ''), compute('1', ''))),
    limits: P(NONE, compute('2', '')),
  },
  { pod: pod('pod-max-cpu-limit', 2, rr(NONE, compute('1', ''))), limits: P(NONE, compute('2', '')) },
  {
    pod: withInit(
      pod('pod-init-max-cpu-request-limit', 2, rr(compute('500m', ''), compute('1', ''))),
      rr(compute('1', ''), compute('2', '')),
      rr(compute('1', ''), compute('1', '')),
    ),
    limits: P(NONE, compute('2', '')),
  },
  {
    pod: withInit(
      pod('pod-init-max-cpu-limit', 2, rr(NONE, compute('1', ''))),
      rr(NONE, compute('2', '')),
      rr(NONE, compute('2', '')),
    ),
    limits: P(NONE, compute('2', '')),
  },
  {
    pod: pod('pod-max-mem-request-limit', 2, rr(compute('', '250Mi'), compute('', '500Mi'))),
    limits: P(NONE, compute('', '1Gi')),
  },
  { pod: pod('pod-max-mem-limit', 2, rr(NONE, compute('', '500Mi'))), limits: P(NONE, compute('', '1Gi')) },
  {
    pod: pod('pod-max-mem-ratio', 3, rr(compute('', '300Mi'), compute('', '450Mi'))),
    limits: P(NONE, compute('', '2Gi'), compute('', '1.5')),
  },
  { pod: pod('ctr-1-min-local-ephemeral-storage-request', 1, rr(local('60Mi'), NONE)), limits: C(local('50Mi'), NONE) },
  {
    pod: pod('ctr-1-min-local-ephemeral-storage-request-limit', 1, rr(local('60Mi'), local('100Mi'))),
    limits: C(local('50Mi'), NONE),
  },
  {
    pod: pod('ctr-1-max-local-ephemeral-storage-request-limit', 1, rr(local('250Mi'), local('500Mi'))),
    limits: C(NONE, local('1Gi')),
  },
  { pod: pod('ctr-1-max-local-ephemeral-storage-limit', 1, rr(NONE, local('500Mi'))), limits: C(NONE, local('1Gi')) },
  { pod: pod('ctr-2-min-local-ephemeral-storage-request', 2, rr(local('60Mi'), NONE)), limits: C(local('50Mi'), NONE) },
  {
    pod: pod('ctr-2-min-local-ephemeral-storage-request-limit', 2, rr(local('60Mi'), local('100Mi'))),
    limits: C(local('50Mi'), NONE),
  },
  {
    pod: pod('ctr-2-max-local-ephemeral-storage-request-limit', 2, rr(local('250Mi'), local('500Mi'))),
    limits: C(NONE, local('600Mi')),
  },
  { pod: pod('ctr-2-max-local-ephemeral-storage-limit', 2, rr(NONE, local('500Mi'))), limits: C(NONE, local('600Mi')) },
  { pod: pod('pod-min-local-ephemeral-storage-request', 2, rr(local('60Mi'), NONE)), limits: P(local('100Mi'), NONE) },
  {
    pod: pod('pod-min-local-ephemeral-storage-request-limit', 2, rr(local('60Mi'), local('100Mi'))),
    limits: P(local('100Mi'), NONE),
  },
  {
    pod: withInit(
      pod('pod-init-min-local-ephemeral-storage-request', 2, rr(local('60Mi'), NONE)),
      rr(local('100Mi'), NONE),
    ),
    limits: P(local('100Mi'), NONE),
  },
  {
    pod: withInit(
      pod('pod-init-min-local-ephemeral-storage-request-limit', 2, rr(local('60Mi'), local('100Mi'))),
      rr(local('80Mi'), local('100Mi')),
    ),
    limits: P(local('100Mi'), NONE),
  },
  {
    pod: pod('pod-max-local-ephemeral-storage-request-limit', 2, rr(local('250Mi'), local('500Mi'))),
    limits: P(NONE, local('1Gi')),
  },
  { pod: pod('pod-max-local-ephemeral-storage-limit', 2, rr(NONE, local('500Mi'))), limits: P(NONE, local('1Gi')) },
  {
    pod: pod('pod-max-local-ephemeral-storage-ratio', 3, rr(local('300Mi'), local('450Mi'))),
    limits: P(NONE, local('2Gi'), local('1.5')),
  },
];

const ERROR_CASES: PodCase[] = [
  {
    pod: pod('ctr-min-cpu-request', 1, rr(compute('40m', ''), NONE)),
    limits: C(compute('50m', ''), NONE),
    message: 'minimum cpu usage per Container is 50m, but request is 40m',
  },
  {
    pod: pod('ctr-min-cpu-request-limit', 1, rr(compute('40m', ''), compute('200m', ''))),
    limits: C(compute('50m', ''), NONE),
    message: 'minimum cpu usage per Container is 50m, but request is 40m',
  },
  {
    pod: pod('ctr-min-cpu-no-request-limit', 1, {}),
    limits: C(compute('50m', ''), NONE),
    message: 'minimum cpu usage per Container is 50m.  No request is specified',
  },
  {
    pod: pod('ctr-min-memory-request', 1, rr(compute('', '40Mi'), NONE)),
    limits: C(compute('', '50Mi'), NONE),
    message: 'minimum memory usage per Container is 50Mi, but request is 40Mi',
  },
  {
    pod: pod('ctr-min-memory-request-limit', 1, rr(compute('', '40Mi'), compute('', '100Mi'))),
    limits: C(compute('', '50Mi'), NONE),
    message: 'minimum memory usage per Container is 50Mi, but request is 40Mi',
  },
  {
    pod: pod('ctr-min-memory-no-request-limit', 1, {}),
    limits: C(compute('', '50Mi'), NONE),
    message: 'minimum memory usage per Container is 50Mi.  No request is specified',
  },
  {
    pod: pod('ctr-max-cpu-request-limit', 1, rr(compute('500m', ''), compute('2500m', ''))),
    limits: C(NONE, compute('2', '')),
    message: 'maximum cpu usage per Container is 2, but limit is 2500m',
  },
  {
    pod: pod('ctr-max-cpu-limit', 1, rr(NONE, compute('2500m', ''))),
    limits: C(NONE, compute('2', '')),
    message: 'maximum cpu usage per Container is 2, but limit is 2500m',
  },
  {
    pod: pod('ctr-max-cpu-no-request-limit', 1, {}),
    limits: C(NONE, compute('2', '')),
    message: 'maximum cpu usage per Container is 2.  No limit is specified',
  },
  {
    pod: pod('ctr-max-cpu-ratio', 1, rr(compute('1250m', ''), compute('2500m', ''))),
    limits: C(NONE, NONE, compute('1', '')),
    message: 'cpu max limit to request ratio per Container is 1, but provided ratio is 2.000000',
  },
  {
    pod: pod('ctr-max-mem-request-limit', 1, rr(compute('', '250Mi'), compute('', '2Gi'))),
    limits: C(NONE, compute('', '1Gi')),
    message: 'maximum memory usage per Container is 1Gi, but limit is 2Gi',
  },
  {
    pod: pod('ctr-max-mem-limit', 1, rr(NONE, compute('', '2Gi'))),
    limits: C(NONE, compute('', '1Gi')),
    message: 'maximum memory usage per Container is 1Gi, but limit is 2Gi',
  },
  {
    pod: pod('ctr-max-mem-no-request-limit', 1, {}),
    limits: C(NONE, compute('', '1Gi')),
    message: 'maximum memory usage per Container is 1Gi.  No limit is specified',
  },
  {
    pod: pod('pod-min-cpu-request', 1, rr(compute('75m', ''), NONE)),
    limits: P(compute('100m', ''), NONE),
    message: 'minimum cpu usage per Pod is 100m, but request is 75m',
  },
  {
    pod: pod('pod-min-cpu-request-limit', 1, rr(compute('75m', ''), compute('200m', ''))),
    limits: P(compute('100m', ''), NONE),
    message: 'minimum cpu usage per Pod is 100m, but request is 75m',
  },
  {
    pod: pod('pod-min-memory-request', 1, rr(compute('', '60Mi'), NONE)),
    limits: P(compute('', '100Mi'), NONE),
    message: 'minimum memory usage per Pod is 100Mi, but request is 60Mi',
  },
  {
    pod: pod('pod-min-memory-request-limit', 1, rr(compute('', '60Mi'), compute('', '100Mi'))),
    limits: P(compute('', '100Mi'), NONE),
    message: 'minimum memory usage per Pod is 100Mi, but request is 60Mi',
  },
  {
    pod: pod('pod-max-cpu-request-limit', 3, rr(compute('500m', ''), compute('1', ''))),
    limits: P(NONE, compute('2', '')),
    message: 'maximum cpu usage per Pod is 2, but limit is 3',
  },
  {
    pod: pod('pod-max-cpu-limit', 3, rr(NONE, compute('1', ''))),
    limits: P(NONE, compute('2', '')),
    message: 'maximum cpu usage per Pod is 2, but limit is 3',
  },
  {
    pod: pod('pod-max-mem-request-limit', 3, rr(compute('', '250Mi'), compute('', '500Mi'))),
    limits: P(NONE, compute('', '1Gi')),
    message: 'maximum memory usage per Pod is 1Gi, but limit is 1500Mi',
  },
  {
    pod: pod('pod-max-mem-limit', 3, rr(NONE, compute('', '500Mi'))),
    limits: P(NONE, compute('', '1Gi')),
    message: 'maximum memory usage per Pod is 1Gi, but limit is 1500Mi',
  },
  {
    pod: withInit(pod('pod-init-max-mem-limit', 1, rr(NONE, compute('', '500Mi'))), rr(NONE, compute('', '1.5Gi'))),
    limits: P(NONE, compute('', '1Gi')),
    message: 'maximum memory usage per Pod is 1Gi, but limit is 1536Mi',
  },
  {
    pod: pod('pod-max-mem-ratio', 3, rr(compute('', '250Mi'), compute('', '500Mi'))),
    limits: P(NONE, compute('', '2Gi'), compute('', '1.5')),
    message: 'memory max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000',
  },
  {
    pod: pod('ctr-1-min-local-ephemeral-storage-request', 1, rr(local('40Mi'), NONE)),
    limits: C(local('50Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
  },
  {
    pod: pod('ctr-1-min-local-ephemeral-storage-request-limit', 1, rr(local('40Mi'), local('100Mi'))),
    limits: C(local('50Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
  },
  {
    pod: pod('ctr-1-min-local-ephemeral-storage-no-request-limit', 1, {}),
    limits: C(local('50Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Container is 50Mi.  No request is specified',
  },
  {
    pod: pod('ctr-1-max-local-ephemeral-storage-request-limit', 1, rr(local('250Mi'), local('2Gi'))),
    limits: C(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
  },
  {
    pod: pod('ctr-1-max-local-ephemeral-storage-limit', 1, rr(NONE, local('2Gi'))),
    limits: C(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
  },
  {
    pod: pod('ctr-1-max-local-ephemeral-storage-no-request-limit', 1, {}),
    limits: C(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Container is 1Gi.  No limit is specified',
  },
  // Two containers break the same rule: the aggregate names it once, as utilerrors does.
  {
    pod: pod('ctr-2-min-local-ephemeral-storage-request', 2, rr(local('40Mi'), NONE)),
    limits: C(local('50Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
  },
  {
    pod: pod('ctr-2-min-local-ephemeral-storage-request-limit', 2, rr(local('40Mi'), local('100Mi'))),
    limits: C(local('50Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Container is 50Mi, but request is 40Mi',
  },
  {
    pod: pod('ctr-2-min-local-ephemeral-storage-no-request-limit', 2, {}),
    limits: C(local('50Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Container is 50Mi.  No request is specified',
  },
  {
    pod: pod('ctr-2-max-local-ephemeral-storage-request-limit', 2, rr(local('250Mi'), local('2Gi'))),
    limits: C(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
  },
  {
    pod: pod('ctr-2-max-local-ephemeral-storage-limit', 2, rr(NONE, local('2Gi'))),
    limits: C(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Container is 1Gi, but limit is 2Gi',
  },
  {
    pod: pod('ctr-2-max-local-ephemeral-storage-no-request-limit', 2, {}),
    limits: C(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Container is 1Gi.  No limit is specified',
  },
  {
    pod: pod('pod-min-local-ephemeral-storage-request', 1, rr(local('60Mi'), NONE)),
    limits: P(local('100Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Pod is 100Mi, but request is 60Mi',
  },
  {
    pod: pod('pod-min-local-ephemeral-storage-request-limit', 1, rr(local('60Mi'), local('100Mi'))),
    limits: P(local('100Mi'), NONE),
    message: 'minimum ephemeral-storage usage per Pod is 100Mi, but request is 60Mi',
  },
  {
    pod: pod('pod-max-local-ephemeral-storage-request-limit', 3, rr(local('250Mi'), local('500Mi'))),
    limits: P(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1500Mi',
  },
  {
    pod: pod('pod-max-local-ephemeral-storage-limit', 3, rr(NONE, local('500Mi'))),
    limits: P(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1500Mi',
  },
  {
    pod: withInit(
      pod('pod-init-max-local-ephemeral-storage-limit', 1, rr(NONE, local('500Mi'))),
      rr(NONE, local('1.5Gi')),
    ),
    limits: P(NONE, local('1Gi')),
    message: 'maximum ephemeral-storage usage per Pod is 1Gi, but limit is 1536Mi',
  },
  {
    pod: pod('pod-max-local-ephemeral-storage-ratio', 3, rr(local('250Mi'), local('500Mi'))),
    limits: P(NONE, local('2Gi'), local('1.5')),
    message: 'ephemeral-storage max limit to request ratio per Pod is 1500m, but provided ratio is 2.000000',
  },
  // A sidecar's request adds to the containers' (1000m + 1500m) while its limit is unset.
  {
    pod: withRestartableInit(
      compute('1500m', ''),
      NONE,
      pod('ctr-max-cpu-limit-restartable-init-container', 1, rr(compute('1000m', ''), compute('1500m', ''))),
    ),
    limits: P(NONE, compute('2', '')),
    message: 'maximum cpu usage per Pod is 2, but request is 2500m',
  },
];

describe('TestPodLimitFunc', () => {
  it('ports every case of both tables', () => {
    expect(SUCCESS_CASES).toHaveLength(37);
    expect(ERROR_CASES).toHaveLength(42);
  });

  it.each(SUCCESS_CASES.map((c) => [(c.pod.metadata?.name as string) ?? '', c] as const))(
    'success: %s',
    async (_, { pod: input, limits }) => {
      const ns = await namespaceWith([limits]);
      const admitted = await mutate(inNamespace(input, ns));
      expect(allowedOf(await validate(admitted))).toBe(true);
    },
  );

  it.each(ERROR_CASES.map((c) => [(c.pod.metadata?.name as string) ?? '', c] as const))(
    'error: %s',
    async (name, { pod: input, limits, message }) => {
      const ns = await namespaceWith([limits]);
      const admitted = await mutate(inNamespace(input, ns));
      expect(refusal(await validate(admitted))).toBe(`pods "${name}" is forbidden: ${message}`);
    },
  );
});

describe('TestPodLimitFuncApplyDefault', () => {
  it('containers and init containers get the defaults, and the pod then passes Validate', async () => {
    const ns = await namespaceWith(VALID_ITEMS);
    const admitted = await mutate(withInit(pod('foo', 1, {}, ns), {}));
    const expected = { requests: compute('50m', '5Mi'), limits: compute('75m', '10Mi') };
    expect(resourcesOf(admitted)).toEqual([expected]);
    expect(resourcesOf(admitted, 'initContainers')).toEqual([expected]);
    expect(allowedOf(await validate(admitted))).toBe(true);
  });
});

const EVERY_VIOLATION =
  'pods "testPod" is forbidden: [minimum cpu usage per Pod is 50m.  No request is specified, ' +
  'minimum memory usage per Pod is 2Mi.  No request is specified, ' +
  'maximum cpu usage per Pod is 200m.  No limit is specified, ' +
  'maximum memory usage per Pod is 4Gi.  No limit is specified, ' +
  'minimum cpu usage per Container is 25m.  No request is specified, ' +
  'minimum memory usage per Container is 1Mi.  No request is specified, ' +
  'maximum cpu usage per Container is 100m.  No limit is specified, ' +
  'maximum memory usage per Container is 2Gi.  No limit is specified]';

/** Both tests' shared part: Admit sets nothing, Validate refuses the create only. */
async function createIsJudgedUpdatesAndSubresourcesAreNot() {
  const ns = await namespaceWith(NO_DEFAULTS_ITEMS);
  const testPod = pod('testPod', 1, {}, ns);
  expect(await mutate(testPod)).toEqual(testPod);
  expect(refusal(await validate(testPod))).toBe(EVERY_VIOLATION);
  expect(allowedOf(await validate(testPod, invoke, { operation: 'UPDATE', oldObject: testPod }))).toBe(true);
  const status = { operation: 'UPDATE', oldObject: testPod, subResource: 'status' } as const;
  expect(allowedOf(await validate(testPod, invoke, status))).toBe(true);
}

describe('TestLimitRangerIgnoresSubresource', () => {
  it('Admit sets nothing, Validate refuses the create; updates and subresources are not judged', async () => {
    await createIsJudgedUpdatesAndSubresourcesAreNot();
  });
});

describe('TestLimitRangerAdmitPod', () => {
  it('Admit sets nothing, Validate refuses the create; updates and subresources are not judged', async () => {
    await createIsJudgedUpdatesAndSubresourcesAreNot();
  });

  it('a pod marked for deletion is never blocked', async () => {
    const ns = await namespaceWith(NO_DEFAULTS_ITEMS);
    const live = pod('terminatingPod', 1, {}, ns);
    const terminating = { ...live, metadata: { ...live.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    expect(allowedOf(await validate(terminating, invoke, { operation: 'UPDATE', oldObject: terminating }))).toBe(true);
    // Also where an update is judged: an in-place resize.
    const resize = { operation: 'UPDATE', oldObject: terminating, subResource: 'resize' } as const;
    expect(allowedOf(await validate(terminating, invoke, resize))).toBe(true);
    expect(refusal(await validate(live, invoke, { ...resize, oldObject: live }))).toMatch(
      /^pods "terminatingPod" is forbidden: \[/,
    );
  });
});

describe('TestPersistentVolumeClaimLimitFunc', () => {
  const PVC = (min: List, max: List) => item('PersistentVolumeClaim', min, max);
  const success: [string, List, Item][] = [
    ['pvc-is-min-storage-request', storage('1Gi'), PVC(storage('1Gi'), NONE)],
    ['pvc-is-max-storage-request', storage('1Gi'), PVC(NONE, storage('1Gi'))],
    ['pvc-no-minmax-storage-request', storage('100Gi'), PVC(storage(''), storage(''))],
    ['pvc-within-minmax-storage-request', storage('5Gi'), PVC(storage('1Gi'), storage('10Gi'))],
  ];
  const errors: [string, List, Item, string][] = [
    [
      'pvc-below-min-storage-request',
      storage('500Mi'),
      PVC(storage('1Gi'), NONE),
      'minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    ],
    [
      'pvc-exceeds-max-storage-request',
      storage('100Gi'),
      PVC(storage('1Gi'), storage('1Gi')),
      'maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Gi',
    ],
  ];
  it.each(success)('success: %s', async (name, requests, limits) => {
    const ns = await namespaceWith([limits]);
    const result = await invoke('validate', claimReview(claim(name, requests, ns)));
    expect(allowedOf(result)).toBe(true);
  });
  it.each(errors)('error: %s', async (name, requests, limits, message) => {
    const ns = await namespaceWith([limits]);
    const result = await invoke('validate', claimReview(claim(name, requests, ns)));
    expect(refusal(result)).toBe(`persistentvolumeclaims "${name}" is forbidden: ${message}`);
  });

  it('claims are judged on update too (a resize past the maximum), and never mutated', async () => {
    const ns = await namespaceWith([PVC(NONE, storage('10Gi'))]);
    const before = claim('grow', storage('5Gi'), ns);
    const after = claim('grow', storage('20Gi'), ns);
    expect(refusal(await invoke('validate', claimReview(after, { operation: 'UPDATE', oldObject: before })))).toBe(
      'persistentvolumeclaims "grow" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi',
    );
    const mutated = await invoke('mutate', claimReview(claim('c', NONE, ns)));
    expect(mutated.review?.response?.patch).toBeUndefined();
  });
});

describe('TestLimitRanger_GetLimitRangesFixed22422 (where it applies)', () => {
  // Upstream's test counts live lookups after an informer miss (singleflight). There is no live
  // lookup here: each request reads its namespace's LimitRanges in one Query. What carries over:
  // concurrent requests in namespaces "test" and "test1" (one a prefix of the other) each see
  // their own namespace's LimitRanges only.
  it('concurrent requests in test and test1 each read one Query of their own namespace', async () => {
    const own = await testStore('limit-ranger-22422');
    stores.push(own);
    const to = lambdaFor(plugin, own);
    await learn(to, limitRange('test', NO_DEFAULTS_ITEMS));
    own.reset();
    const requests = Array.from({ length: 10 }, () => [
      validate(pod('testPod', 1, {}, 'test'), to),
      validate(pod('testPod', 1, {}, 'test1'), to),
    ]).flat();
    const results = await Promise.all(requests);
    // In "test" (even indices) the learned LimitRange refuses the pod; "test1" has none.
    expect(results.map(allowedOf)).toEqual(results.map((_, i) => i % 2 === 1));
    expect(own.sent.filter((c) => c === 'Query')).toHaveLength(20);
    expect(own.writes()).toBe(0);
  });
});

// --- beyond upstream's tables -------------------------------------------------------------------

describe("upstream's messages and annotation, as the issue quotes them", () => {
  it('nginx gets cpu and memory requests and limits, and a pod under a minimum is refused', async () => {
    const ns = await namespaceWith([
      item('Container', compute('100m', ''), NONE, compute('500m', '512Mi'), compute('200m', '256Mi')),
    ]);
    const nginx: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: ns },
      spec: { containers: [{ name: 'nginx', image: 'nginx' }] },
    };
    const admitted = await mutate(nginx);
    expect(annotationOf(admitted)).toBe(
      'LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for container nginx',
    );
    expect(allowedOf(await validate(admitted))).toBe(true);
    const small = {
      ...nginx,
      spec: { containers: [{ name: 'nginx', image: 'nginx', resources: { requests: { cpu: '50m' } } }] },
    };
    expect(refusal(await validate(await mutate(small)))).toBe(
      'pods "web" is forbidden: minimum cpu usage per Container is 100m, but request is 50m',
    );
  });

  it('quantities compare by value: 0.1 CPU is 100m', async () => {
    const ns = await namespaceWith([C(compute('100m', ''), compute('1', ''))]);
    const input = pod('p', 1, rr(compute('0.1', ''), compute('1000m', '')), ns);
    expect(allowedOf(await validate(input))).toBe(true);
  });

  it('several LimitRanges: each defaults in turn (the last one that set anything names it), the first violated answers', async () => {
    const ns = await namespaceWith(
      [item('Container', NONE, NONE, compute('', '64Mi'), NONE)],
      [item('Container', NONE, NONE, compute('300m', ''), NONE)],
    );
    const admitted = await mutate(pod('two', 1, {}, ns));
    expect(resourcesOf(admitted)).toEqual([{ limits: compute('300m', '64Mi') }]);
    expect(annotationOf(admitted)).toBe('LimitRanger plugin set: cpu limit for container foo-0');
    const strict = await namespaceWith([C(NONE, compute('2', ''))], [C(compute('', '10Mi'), NONE)]);
    expect(refusal(await validate(pod('p', 1, {}, strict)))).toBe(
      'pods "p" is forbidden: maximum cpu usage per Container is 2.  No limit is specified',
    );
  });

  it('in a namespace with no learned LimitRange there is nothing to do, and nothing is refused', async () => {
    const result = await invoke('mutate', podReview(pod('free', 1, {}, 'never-learned')));
    expect(result.review?.response?.patch).toBeUndefined();
    expect(allowedOf(await validate(pod('free', 1, {}, 'never-learned')))).toBe(true);
  });
});

describe('in-place resize (pods/resize) and pod-level resources', () => {
  it('a resize is judged as upstream judges it (kubernetes#128266): past the maximum is refused', async () => {
    const ns = await namespaceWith([C(NONE, compute('1', ''))]);
    const before = pod('r', 1, rr(compute('500m', ''), compute('1', '')), ns);
    const after = pod('r', 1, rr(compute('500m', ''), compute('2', '')), ns);
    const resize = { operation: 'UPDATE', oldObject: before, subResource: 'resize' } as const;
    expect(refusal(await validate(after, invoke, resize))).toBe(
      'pods "r" is forbidden: maximum cpu usage per Container is 1, but limit is 2',
    );
    expect(allowedOf(await validate(before, invoke, resize))).toBe(true);
  });

  it('pod-level requests and limits (PodLevelResources) override the containers for cpu and memory', async () => {
    const ns = await namespaceWith([P(NONE, compute('1', '1Gi'))]);
    const input = pod('pl', 2, rr(compute('100m', ''), compute('800m', '')), ns);
    expect(refusal(await validate(input))).toBe(
      'pods "pl" is forbidden: [maximum cpu usage per Pod is 1, but limit is 1600m, maximum memory usage per Pod is 1Gi.  No limit is specified]',
    );
    const podLevel = { ...input, spec: { ...(input.spec as object), resources: { limits: compute('1', '512Mi') } } };
    expect(allowedOf(await validate(podLevel))).toBe(true);
  });
});

describe('learned LimitRanges follow their writes', () => {
  it('an UPDATE changes the constraints, a DELETE removes them', async () => {
    const ns = await namespaceWith([C(compute('100m', ''), NONE)]);
    const small = pod('small', 1, rr(compute('50m', ''), NONE), ns);
    expect(allowedOf(await validate(small))).toBe(false);
    await learn(invoke, limitRange(ns, [C(compute('10m', ''), NONE)], 'lr-0'), 'UPDATE');
    expect(allowedOf(await validate(small))).toBe(true);
    await learn(invoke, limitRange(ns, [C(compute('100m', ''), NONE)], 'lr-0'), 'UPDATE');
    await learn(invoke, limitRange(ns, [], 'lr-0'), 'DELETE');
    expect(allowedOf(await validate(small))).toBe(true);
  });

  it('a dry-run LimitRange write sends zero writes and teaches nothing', async () => {
    const ns = `dry-${++namespaces}`;
    store.reset();
    const write = classWrite('limitranges', limitRange(ns, [C(compute('1', ''), NONE)]), 'CREATE', { dryRun: true });
    expect(allowedOf(await invoke('learn', write))).toBe(true);
    expect(store.writes()).toBe(0);
    expect(allowedOf(await validate(pod('p', 1, {}, ns)))).toBe(true);
  });

  it('a dry-run pod is defaulted and judged, and sends zero writes', async () => {
    const ns = await namespaceWith(VALID_ITEMS);
    store.reset();
    const admitted = await mutate(pod('dry', 1, {}, ns), invoke, { dryRun: true });
    expect(resourcesOf(admitted)[0]?.limits).toEqual(compute('75m', '10Mi'));
    expect(allowedOf(await validate(admitted, invoke, { dryRun: true }))).toBe(true);
    expect(store.writes()).toBe(0);
  });

  it('the learning rule is every write of v1 limitranges, namespaced', () => {
    expect(learningRules(plugin.metadata)).toEqual([
      {
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['limitranges'],
        scope: 'Namespaced',
      },
    ]);
  });
});

describe('`npm run sync` loads the LimitRanges that predate the webhook', () => {
  it('a listing of every namespace is complete: listed ones are learned, others removed', async () => {
    const own = await testStore('limit-ranger-sync');
    stores.push(own);
    const to = lambdaFor(plugin, own);
    await learn(to, limitRange('stale', [C(compute('1', ''), NONE)], 'old'));
    const dir = mkdtempSync(join(tmpdir(), 'limit-ranger-'));
    try {
      const file = join(dir, 'limitranges.json');
      const listed = (object: KubeObject) => ({ apiVersion: 'v1', kind: 'LimitRange', ...object });
      const items = [listed(limitRange('a', [C(compute('100m', ''), NONE)])), listed(limitRange('ab', VALID_ITEMS))];
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
      let stderr = '';
      const code = await syncCommand(['--from', file], {
        stdout: () => undefined,
        stderr: (t) => {
          stderr += t;
        },
        env: { DYNAMODB_ENDPOINT: own.endpoint, STATE_TABLE: own.tableName },
      });
      expect(code).toBe(0);
      expect(stderr).toContain('limitranges: 2 recorded (complete listing), 1 removed');
      expect(refusal(await validate(pod('p', 1, {}, 'a'), to))).toBe(
        'pods "p" is forbidden: minimum cpu usage per Container is 100m.  No request is specified',
      );
      expect(resourcesOf(await mutate(pod('p', 1, {}, 'ab'), to))[0]?.requests).toEqual(compute('50m', '5Mi'));
      expect(allowedOf(await validate(pod('p', 1, {}, 'stale'), to))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('configuration.defaultLimitRange: a cluster-wide default (kubernetes#80537, #132320)', () => {
  const configuration = {
    defaultLimitRange: {
      limits: [
        {
          type: 'Container',
          default: { cpu: '0.5', memory: '256Mi' },
          defaultRequest: { cpu: '100m', memory: '128Mi' },
          max: { cpu: 2 },
        },
        { type: 'PersistentVolumeClaim', max: { storage: '50Gi' } },
      ],
    },
  };
  const config = configure(configuration);
  const withDefault = () => lambdaFor(plugin, store, config);

  it('applies in namespaces with no learned LimitRange, in canonical quantities', async () => {
    const to = withDefault();
    const admitted = await mutate(pod('d', 1, {}, `bare-${++namespaces}`), to);
    expect(resourcesOf(admitted)).toEqual([{ requests: compute('100m', '128Mi'), limits: compute('500m', '256Mi') }]);
    expect(annotationOf(admitted)).toBe(
      'LimitRanger plugin set: cpu, memory request for container foo-0; cpu, memory limit for container foo-0',
    );
    expect(refusal(await validate(pod('big', 1, rr(NONE, compute('3', '')), 'elsewhere'), to))).toBe(
      'pods "big" is forbidden: maximum cpu usage per Container is 2, but limit is 3',
    );
    expect(refusal(await to('validate', claimReview(claim('c', storage('100Gi'), 'elsewhere'))))).toBe(
      'persistentvolumeclaims "c" is forbidden: maximum storage usage per PersistentVolumeClaim is 50Gi, but request is 100Gi',
    );
  });

  it("never in a namespace with a learned LimitRange of its own: the namespace's wins whole", async () => {
    const ns = await namespaceWith([item('Container', NONE, NONE, compute('', '1Gi'), NONE)]);
    const admitted = await mutate(pod('own', 1, rr(NONE, compute('3', '')), ns), withDefault());
    expect(resourcesOf(admitted)).toEqual([{ limits: compute('3', '1Gi') }]);
    expect(allowedOf(await validate(admitted, withDefault()))).toBe(true);
  });

  it('is read strictly: unknown fields, types, quantities and orderings fail naming the field', () => {
    const cases: [unknown, string][] = [
      [
        { defaultLimitRange: { limit: [] } },
        'LimitRanger: defaultLimitRange.limit: unknown field "limit"; did you mean "limits"?',
      ],
      [
        { defaultLimitRange: { limits: [] } },
        'LimitRanger: defaultLimitRange.limits: Required value: at least one item',
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'container' }] } },
        'LimitRanger: defaultLimitRange.limits[0].type: Unsupported value: "container": supported values: "Pod", "Container", "PersistentVolumeClaim"',
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'Container', max: { cpu: 'lots' } }] } },
        'LimitRanger: defaultLimitRange.limits[0].max.cpu: Invalid value: "lots": quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'Pod', default: { cpu: '1' } }] } },
        "LimitRanger: defaultLimitRange.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }] } },
        'LimitRanger: defaultLimitRange.limits[0].min.cpu: Invalid value: "2": min value 2 is greater than max value 1',
      ],
      [
        {
          defaultLimitRange: {
            limits: [{ type: 'Container', default: { memory: '1Gi' }, defaultRequest: { memory: '2Gi' } }],
          },
        },
        'LimitRanger: defaultLimitRange.limits[0].defaultRequest.memory: Invalid value: "2Gi": default request value 2Gi is greater than default limit value 1Gi',
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'Container', maxLimitRequestRatio: { cpu: '0.5' } }] } },
        'LimitRanger: defaultLimitRange.limits[0].maxLimitRequestRatio.cpu: Invalid value: "500m": ratio 500m is less than 1',
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'PersistentVolumeClaim', max: { cpu: '1' } }] } },
        'LimitRanger: defaultLimitRange.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
      ],
      [
        { defaultLimitRange: { limits: [{ type: 'Container', max: { cpuu: '1' } }] } },
        'LimitRanger: defaultLimitRange.limits[0].max.cpuu: Invalid value: "cpuu": must be a standard resource for containers; did you mean "cpu"?',
      ],
      [
        {
          defaultLimitRange: {
            limits: [{ type: 'Container', min: { cpu: '1' }, max: { cpu: '2' }, maxLimitRequestRatio: { cpu: '3' } }],
          },
        },
        'LimitRanger: defaultLimitRange.limits[0].maxLimitRequestRatio.cpu: Invalid value: "3": ratio 3 is greater than max/min = 2.000000',
      ],
      [
        {
          defaultLimitRange: {
            limits: [
              { type: 'Container', default: { 'hugepages-2Mi': '4Mi' }, defaultRequest: { 'hugepages-2Mi': '2Mi' } },
            ],
          },
        },
        'LimitRanger: defaultLimitRange.limits[0].defaultRequest.hugepages-2Mi: Invalid value: "2Mi": default value 4Mi must equal to defaultRequest value 2Mi in hugepages-2Mi',
      ],
      [
        {
          defaultLimitRange: { limits: [{ type: 'Container', min: { memory: '1Gi' }, default: { memory: '512Mi' } }] },
        },
        'LimitRanger: defaultLimitRange.limits[0].default.memory: Invalid value: "1Gi": min value 1Gi is greater than default value 512Mi',
      ],
    ];
    for (const [raw, message] of cases) {
      expect(() => configure(raw)).toThrow(ConfigError);
      expect(() => configure(raw)).toThrow(message);
    }
    expect(configure(undefined)).toEqual({});
  });
});

describe('metadata: on by default, and safe so', () => {
  it('is active without an entry: it never refuses for lack of learning, and every webhook fails open', () => {
    // The shipped config/admission.yaml: `plugins: []`.
    const set = loadPluginSet(plugins, { ADMISSION_CONFIG: 'config/admission.yaml' });
    expect(activePlugins(set).map((p) => p.plugin.metadata.name)).toContain('limit-ranger');
    expect(plugin.metadata.mutating?.failurePolicy).toBe('Ignore');
    expect(plugin.metadata.mutating?.reinvocationPolicy).toBe('IfNeeded');
    expect(plugin.metadata.validating?.failurePolicy).toBe('Ignore');
    expect(plugin.metadata.validating?.rules.map((r) => `${r.operations.join('+')} ${r.resources.join()}`)).toEqual([
      'CREATE pods',
      'UPDATE pods/resize',
      'CREATE+UPDATE persistentvolumeclaims',
    ]);
  });
});
