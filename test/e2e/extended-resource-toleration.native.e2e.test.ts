// extended-resource-toleration natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// `emit --native` compiles, applied to a real apiserver, store upstream's TestAdmit pods
// (test/support/cases) and the rows test/native/tolerations.test.ts adds as the webhooks do on
// another apiserver, and leave TestHandles' DELETE and CONNECT (pods/exec) of a pod stored before
// the install alone. The apiserver's validation wants an extended resource's limit equal to its
// request, so each container that requests one limits it too (the plugin reads requests only).
// Rows the apiserver's validation refuses after mutation (422) are compared as such; the plugin's
// answer to them stays with the in-process proof.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, pod, remove, requestAt } from './support/kube.js';
import { typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { expectSameOutcome, namespaceWithAccount, seedObject, startNativePair } from './support/native-pair.js';
import type { PodSpec } from '../support/cases/extended-resource-toleration.js';
import {
  ADMIT_CASES,
  containerRequestingExtendedResource1,
  exists,
  extendedResource1,
} from '../support/cases/extended-resource-toleration.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ExtendedResourceToleration
`;

type Container = { resources?: { requests?: Record<string, string> } };
/** Limits equal to the extended resources' requests (what validation asks), nothing else changed. */
const limited = (containers: readonly unknown[] | undefined) =>
  containers?.map((c) => {
    const requests = (c as Container).resources?.requests ?? {};
    const limits = Object.fromEntries(Object.entries(requests).filter(([name]) => name.includes('/')));
    return Object.keys(limits).length === 0
      ? c
      : { ...(c as object), resources: { ...(c as Container).resources, limits } };
  });
const podOf = (name: string, requested: PodSpec): KubeObject =>
  pod('team-a', name, {
    ...requested,
    ...(requested.containers && { containers: limited(requested.containers) }),
    ...(requested.initContainers && { initContainers: limited(requested.initContainers) }),
  });
const tolerationsOf = (object: KubeObject | undefined) =>
  (object?.spec as { tolerations?: unknown[] } | undefined)?.tolerations;
const requesting = podOf('stored', { containers: [containerRequestingExtendedResource1] });
const storedAs = (name: string) => ({ ...requesting, metadata: { ...requesting.metadata, name } });

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    // DefaultTolerationSeconds (on by default) would add its tolerations to every pod.
    controlPlane: { disableAdmissionPlugins: ['DefaultTolerationSeconds'] },
    seed: async (cluster) => {
      await namespaceWithAccount(cluster, 'team-a');
      for (const name of ['deleted', 'exec']) await seedObject(cluster, storedAs(name));
    },
    inForce: async (cluster) =>
      tolerationsOf((await create(cluster, storedAs('probe'), { dryRun: true })).object)?.length === 1,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const requestingNames = (requests: Record<string, string>) => ({ name: 'c', image: 'i', resources: { requests } });
const MORE = [
  {
    description: 'a match with tolerationSeconds is replaced',
    requested: {
      containers: [containerRequestingExtendedResource1],
      tolerations: [{ ...exists(extendedResource1), tolerationSeconds: 5 }],
    },
    expected: [exists(extendedResource1)],
  },
  {
    description: 'native and quota names are not extended',
    requested: {
      containers: [requestingNames({ 'kubernetes.io/x': '1', 'requests.example.com/y': '1', 'hugepages-2Mi': '1' })],
    },
    expected: undefined,
  },
];

const rows: { name: string; request: (cluster: ControlPlane) => Promise<Answer>; tolerations?: unknown }[] = [
  ...[...ADMIT_CASES, ...MORE].map(({ description, requested, expected }, index) => ({
    name: description,
    request: (cluster: ControlPlane) => create(cluster, podOf(`row-${index}`, requested)),
    tolerations: expected ?? null,
  })),
  { name: 'TestHandles: DELETE is not handled', request: (cluster) => remove(cluster, storedAs('deleted')) },
  {
    name: 'TestHandles: CONNECT is not handled',
    request: (cluster) =>
      requestAt(cluster, 'POST', '/api/v1/namespaces/team-a/pods/exec/exec?command=true&stdout=true'),
  },
];

describe('extended-resource-toleration (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const { name, request, tolerations } of rows) {
    it(`answers as the webhooks do: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      if (tolerations !== undefined && webhook.object)
        expect(tolerationsOf(webhook.object) ?? null).toEqual(tolerations);
      expectSameOutcome(webhook, native);
    });
  }
});
