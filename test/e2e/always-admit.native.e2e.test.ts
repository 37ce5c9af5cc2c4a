// always-admit natively: the ValidatingAdmissionPolicy `emit --native` compiles, applied to a real
// apiserver, answers every operation of upstream's TestAdmissionNonNilAttribute/TestHandles (as
// test/native/always.test.ts runs them in process) as the webhook does on another apiserver: a
// pod's CREATE, UPDATE and DELETE, and a CONNECT (pods/exec), which both admit and the apiserver
// then answers itself (the pod runs on no node).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer } from './support/kube.js';
import { create, pod, remove } from './support/kube.js';
import { expectSameAnswer, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { labelled, modify, namespaceWithAccount, seedObject, startNativePair } from './support/native-pair.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: AlwaysAdmit
`;

const seeded = (name: string) => pod('team-a', name);

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    seed: async (cluster) => {
      await namespaceWithAccount(cluster, 'team-a');
      for (const name of ['updated', 'deleted', 'exec']) await seedObject(cluster, seeded(name));
    },
    // A policy that admits everything has no effect to wait for: type-checked (startNativeCluster
    // waits for that) is as far as a request can tell.
    inForce: async () => true,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const OPERATIONS: [string, (cluster: ControlPlane) => Promise<Answer>][] = [
  ['CREATE', (cluster) => create(cluster, seeded('created'))],
  ['UPDATE', (cluster) => modify(cluster, seeded('updated'), labelled({ changed: 'yes' }))],
  ['DELETE', (cluster) => remove(cluster, seeded('deleted'))],
];

describe('always-admit (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const [operation, request] of OPERATIONS) {
    it(`admits a ${operation} as the webhook does`, async () => {
      const [webhook, native] = await pair.both(request);
      expect(webhook.status, webhook.message).toBeLessThan(300);
      expectSameAnswer(webhook, native);
    });
  }

  it('admits a CONNECT as the webhook does: the apiserver answers it itself', async () => {
    const [webhook, native] = await pair.both(async (cluster) => {
      const raw = await cluster.request('POST', '/api/v1/namespaces/team-a/pods/exec/exec?command=true&stdout=true');
      const body = JSON.parse(raw.body) as { message?: string };
      return { status: raw.status, message: body.message, warnings: [], raw };
    });
    expect(webhook.message).not.toMatch(/forbidden|denied/);
    expect([native.status, native.message]).toEqual([webhook.status, webhook.message]);
  });
});
