// default-toleration-seconds natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// `emit --native` compiles, applied to a real apiserver, store upstream's TestForgivenessAdmission
// pods (test/support/cases) as the webhooks do on another apiserver, and leave TestHandles' other
// requests (a status write of a pod stored before the install, a delete) alone; an update of
// such a pod gains the tolerations, as upstream's handler takes updates too. The
// built-in DefaultTolerationSeconds (on by default) is off on both, so the plugin alone decides.
// Three of upstream's rows carry tolerationSeconds on a toleration that is not NoExecute, which
// the apiserver's validation refuses after mutation (422 on both sides alike); the plugin's answer
// to them stays with the in-process proof, as does the configured-seconds row (one configuration
// per control plane).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, pod, remove, requestAt } from './support/kube.js';
import { typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import {
  expectSameOutcome,
  labelled,
  modify,
  namespaceWithAccount,
  seedObject,
  startNativePair,
} from './support/native-pair.js';
import { FORGIVENESS_CASES } from '../support/cases/default-toleration-seconds.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: DefaultTolerationSeconds
`;

const tolerationsOf = (object: KubeObject | undefined) =>
  (object?.spec as { tolerations?: unknown[] } | undefined)?.tolerations;
const stored = (name: string) => pod('team-a', name);

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    controlPlane: { disableAdmissionPlugins: ['DefaultTolerationSeconds'] },
    seed: async (cluster) => {
      await namespaceWithAccount(cluster, 'team-a');
      for (const name of ['updated', 'status', 'deleted']) await seedObject(cluster, stored(name));
    },
    inForce: async (cluster) =>
      tolerationsOf((await create(cluster, stored('probe'), { dryRun: true })).object)?.length === 2,
  });
});
afterAll(async () => {
  await pair?.stop();
});

/** Valid for the apiserver: tolerationSeconds only on NoExecute tolerations. */
const validTolerations = (tolerations: readonly unknown[] | undefined) =>
  (tolerations ?? []).every(
    (t) =>
      (t as { tolerationSeconds?: number; effect?: string }).tolerationSeconds === undefined ||
      (t as { effect?: string }).effect === 'NoExecute',
  );

const rows: { name: string; request: (cluster: ControlPlane) => Promise<Answer>; tolerations?: readonly unknown[] }[] =
  [
    ...FORGIVENESS_CASES.map(({ description, requested, expected }, index) => ({
      name: description,
      request: (cluster: ControlPlane) =>
        create(cluster, pod('team-a', `row-${index}`, requested === undefined ? {} : { tolerations: requested })),
      ...(validTolerations(requested) && { tolerations: expected }),
    })),
    {
      name: 'TestHandles: UPDATE',
      request: (cluster) => modify(cluster, stored('updated'), labelled({ changed: 'yes' })),
    },
    {
      name: 'TestHandles: status',
      request: async (cluster) => {
        const path = '/api/v1/namespaces/team-a/pods/status';
        const current = (await cluster.request('GET', path)).json<KubeObject>();
        return requestAt(cluster, 'PUT', `${path}/status`, {
          ...current,
          status: { phase: 'Pending', message: 'test' },
        });
      },
    },
    { name: 'TestHandles: DELETE', request: (cluster) => remove(cluster, stored('deleted')) },
  ];

describe('default-toleration-seconds (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const { name, request, tolerations } of rows) {
    it(`answers as the webhooks do: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      if (name === 'TestHandles: UPDATE') {
        // Upstream handles updates too: the stored pod gains both tolerations.
        expect(webhook.status, webhook.message).toBe(200);
        expect(tolerationsOf(webhook.object)).toEqual(FORGIVENESS_CASES[0].expected);
      } else if (name.startsWith('TestHandles')) {
        expect(webhook.status, webhook.message).toBe(200);
        expect(tolerationsOf(webhook.object)).toBeUndefined();
      } else if (tolerations) expect(tolerationsOf(webhook.object)).toEqual(tolerations);
      else expect(webhook.status, webhook.message).toBe(422);
      expectSameOutcome(webhook, native);
    });
  }
});
