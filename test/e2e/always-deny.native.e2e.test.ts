// always-deny natively: the ValidatingAdmissionPolicy `emit --native` compiles, applied to a real
// apiserver, refuses every operation of upstream's TestAdmission/TestHandles (as
// test/native/always.test.ts runs them in process) as the webhook does on another apiserver, with
// upstream's message after the apiserver's prefix: a pod's CREATE, UPDATE and DELETE, and a
// CONNECT (pods/exec).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer } from './support/kube.js';
import { create, pod, remove } from './support/kube.js';
import { expectSameAnswer, policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { labelled, modify, namespaceWithAccount, seedObject, startNativePair } from './support/native-pair.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysDeny
`;

const seeded = (name: string) => pod('team-a', name);

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    seed: async (cluster) => {
      await namespaceWithAccount(cluster, 'team-a');
      for (const name of ['updated', 'deleted', 'exec']) await seedObject(cluster, seeded(name));
    },
    inForce: async (cluster) => (await create(cluster, seeded('probe'), { dryRun: true })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const OPERATIONS: [string, (cluster: ControlPlane) => Promise<Answer>][] = [
  ['CREATE', (cluster) => create(cluster, seeded('created'))],
  ['UPDATE', (cluster) => modify(cluster, seeded('updated'), labelled({ changed: 'yes' }))],
  ['DELETE', (cluster) => remove(cluster, seeded('deleted'))],
  [
    'CONNECT',
    async (cluster) => {
      const raw = await cluster.request('POST', '/api/v1/namespaces/team-a/pods/exec/exec?command=true&stdout=true');
      const body = JSON.parse(raw.body) as { message?: string };
      return { status: raw.status, message: body.message, warnings: [], raw };
    },
  ],
];

describe('always-deny (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const [operation, request] of OPERATIONS) {
    it(`refuses a ${operation} as the webhook does`, async () => {
      const [webhook, native] = await pair.both(request);
      expect(webhook.status, webhook.message).toBe(403);
      expectSameAnswer(webhook, native);
      expect(policyDenial(native.message)?.message).toBe('admission control is denying all modifications');
    });
  }
});
