// taint-nodes-by-condition natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// `emit --native` compiles, applied to a real apiserver, store upstream's Test_nodeTaints nodes
// (test/support/cases) and the rows test/native/creation-marks.test.ts adds as the webhooks do on
// another apiserver. The built-in TaintNodesByCondition (on by default) is off on both, so the
// plugin alone decides; the update and the status row act on a Node stored before the install.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, requestAt } from './support/kube.js';
import { expectSameAnswer, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { labelled, modify, seedObject, startNativePair } from './support/native-pair.js';
import { NODE_TAINTS_CASES, node, notReadyTaint } from '../support/cases/taint-nodes-by-condition.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: TaintNodesByCondition
`;

type CaseObject = Parameters<typeof node>[0] & { metadata?: object };
/** A case's Node under another name (each row creates its own). */
const named = (object: CaseObject, name: string): KubeObject =>
  ({ ...object, metadata: { ...object.metadata, name } }) as KubeObject;
const taintsOf = (object: KubeObject | undefined) => (object?.spec as { taints?: unknown[] } | undefined)?.taints;

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    controlPlane: { disableAdmissionPlugins: ['TaintNodesByCondition'] },
    seed: async (cluster) => void (await seedObject(cluster, named(node(), 'stored'))),
    inForce: async (cluster) =>
      taintsOf((await create(cluster, named(node(), 'probe'), { dryRun: true })).object) !== undefined,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const rows: { name: string; request: (cluster: ControlPlane) => Promise<Answer>; taints: unknown[] | undefined }[] = [
  ...NODE_TAINTS_CASES.map(({ name, node: object, expectedTaints }, index) => ({
    name,
    request: (cluster: ControlPlane) => create(cluster, named(object, `row-${index}`)),
    taints: [...expectedTaints],
  })),
  {
    name: 'other taints are kept',
    request: (cluster) =>
      create(cluster, named(node({ spec: { taints: [{ key: 'a', effect: 'NoExecute' }] } }), 'other')),
    taints: [{ key: 'a', effect: 'NoExecute' }, notReadyTaint],
  },
  {
    name: 'an update is left alone',
    request: (cluster) => modify(cluster, named(node(), 'stored'), labelled({ changed: 'yes' })),
    taints: undefined,
  },
  {
    name: 'the status subresource is left alone',
    request: async (cluster) => {
      const stored = (await cluster.request('GET', '/api/v1/nodes/stored')).json<KubeObject>();
      return requestAt(cluster, 'PUT', '/api/v1/nodes/stored/status', {
        ...stored,
        status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Test', message: 'test' }] },
      });
    },
    taints: undefined,
  },
];

describe('taint-nodes-by-condition (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const { name, request, taints } of rows) {
    it(`stores what the webhooks store: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      expect(webhook.status, webhook.message).toBeLessThan(300);
      expect(taintsOf(webhook.object)).toEqual(taints);
      // The node controller (the native side's controller-manager) may have noted the stored node's
      // conditions meanwhile; admission decides the spec.
      if (name.endsWith('left alone')) expect(native.object?.spec).toEqual(webhook.object?.spec);
      else expectSameAnswer(webhook, native);
    });
  }
});
