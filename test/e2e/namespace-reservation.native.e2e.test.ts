// namespace-reservation natively: the ValidatingAdmissionPolicy `emit --native` compiles for
// OpenShift's reservation (test/support/cases/namespace-reservation.ts), applied to a real
// apiserver, answers the Namespace rows of test/native/namespace-reservation.test.ts as the webhook
// does on another apiserver: creates by name and by generateName, an update of a stored namespace
// and its finalize subresource. The ProjectRequest rows stay with the in-process proof: no
// project.openshift.io API is served here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create } from './support/kube.js';
import { expectSameAnswer, policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { labelled, modify, seedObject, startNativePair } from './support/native-pair.js';
import { OPENSHIFT_RESERVATION } from '../support/cases/namespace-reservation.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: NamespaceReservation
    configuration: ${JSON.stringify(OPENSHIFT_RESERVATION)}
`;

const namespace = (name: string, generateName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: generateName ? { generateName } : { name },
});

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    // A reserved namespace that exists from before the install.
    seed: async (cluster) => void (await seedObject(cluster, namespace('kube-x'))),
    inForce: async (cluster) => (await create(cluster, namespace('kube'), { dryRun: true })).status === 403,
  });
});
afterAll(async () => {
  await pair?.stop();
});

const rows: { name: string; refused: boolean; request: (cluster: ControlPlane) => Promise<Answer> }[] = [
  ...(
    [
      ['a reserved name', 'kube', true],
      ['a reserved prefix', 'kube-y', true],
      ['another reserved prefix', 'openshift-infra', true],
      ['kubernetes', 'kubernetes', true],
      ['a free name', 'team-a', false],
      ['a name that only starts with a reserved name', 'kubex', false],
    ] as const
  ).map(([name, object, refused]) => ({
    name,
    refused,
    request: (cluster: ControlPlane) => create(cluster, namespace(object)),
  })),
  // The apiserver generates the name before validating admission: both judge `kube-<random>`.
  {
    name: 'a reserved generateName prefix',
    refused: true,
    request: async (cluster) => {
      const answer = await create(cluster, namespace('', 'kube-'));
      // The generated suffix is random: compare the messages without it.
      return { ...answer, message: answer.message?.replaceAll(/kube-[a-z0-9]{5}/g, 'kube-*') };
    },
  },
  {
    name: 'a free generateName',
    refused: false,
    request: async (cluster) => {
      const answer = await create(cluster, namespace('', 'team-'));
      if (!answer.object) return answer;
      const { name, labels, ...metadata } = answer.object.metadata;
      void name;
      void labels;
      return { ...answer, object: { ...answer.object, metadata } };
    },
  },
  {
    name: 'an update (creates only)',
    refused: false,
    request: (cluster) => modify(cluster, namespace('kube-x'), labelled({ changed: 'yes' })),
  },
  {
    name: 'a subresource (finalize)',
    refused: false,
    request: async (cluster) => {
      const stored = (await cluster.request('GET', '/api/v1/namespaces/kube-x')).json<KubeObject>();
      const raw = await cluster.request('PUT', '/api/v1/namespaces/kube-x/finalize', stored);
      return { status: raw.status, object: raw.json<KubeObject>(), warnings: [], raw };
    },
  },
];

describe('namespace-reservation (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  for (const { name, refused, request } of rows) {
    it(`answers as the webhook does: ${name}`, async () => {
      const [webhook, native] = await pair.both(request);
      expect(webhook.status >= 300, webhook.message ?? 'admitted').toBe(refused);
      expectSameAnswer(webhook, native);
      if (refused)
        expect(policyDenial(native.message)?.message).toMatch(
          /^cannot create a namespace (with the name|starting with) "/,
        );
    });
  }
});
