// deny-service-external-ips natively: the ValidatingAdmissionPolicy `emit --native` compiles,
// applied to a real apiserver, refuses and admits the Services of upstream's TestAdmission as the
// webhook does on another, with the same message after the apiserver's policy prefix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { create, eventually, get, update } from './support/kube.js';
import type { NativeCluster } from './support/native.js';
import { expectSameAnswer, policyDenial, startNativeCluster, typeCheckingWarnings } from './support/native.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';
import { ADMISSION_CASES } from '../support/cases/deny-service-external-ips.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: DenyServiceExternalIPs
`;

let webhooks: WebhookCluster;
let native: NativeCluster;

function service(name: string, externalIPs: readonly string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'team-a' },
    spec: { ports: [{ port: 80 }], ...(externalIPs.length > 0 && { externalIPs: [...externalIPs] }) },
  };
}

/** The namespace, and each update case's Service as it was, stored before the install. */
async function seed(cluster: ControlPlane): Promise<void> {
  await create(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
  for (const [index, { oldIPs }] of ADMISSION_CASES.entries()) {
    if (oldIPs === undefined) continue;
    const seeded = await create(cluster, service(`s${index}`, oldIPs));
    if (seeded.status !== 201) throw new Error(`seeding s${index}: ${seeded.message}`);
  }
}

beforeAll(async () => {
  [webhooks, native] = await Promise.all([
    startWebhookCluster({ admissionConfiguration: CONFIG, controlPlane: { controllerManager: false }, before: seed }),
    startNativeCluster(CONFIG, { before: seed }),
  ]);
  await eventually('the policy is in force', async () => {
    const answer = await create(native.cluster, service('probe', ['1.1.1.1']), { dryRun: true });
    return answer.status === 403 ? true : undefined;
  });
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), native?.stop()]);
});

describe('deny-service-external-ips (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(native)).toEqual([]);
  });

  ADMISSION_CASES.forEach(({ name, newIPs, oldIPs, fail }, index) => {
    it(`answers as the webhook does: ${name}`, async () => {
      const object = service(`s${index}`, newIPs);
      const write = async (on: ControlPlane) => {
        if (oldIPs === undefined) return create(on, object);
        const current = await get(on, object);
        return update(on, {
          ...object,
          metadata: { ...object.metadata, resourceVersion: current!.metadata.resourceVersion },
        });
      };
      const [webhook, policy] = await Promise.all([write(webhooks.cluster), write(native.cluster)]);
      expect(webhook.status !== 200 && webhook.status !== 201, webhook.message ?? 'admitted').toBe(fail);
      expectSameAnswer(webhook, policy);
      if (fail) expect(policyDenial(policy.message)?.policy).toBe('serverless-admission-deny-service-external-ips');
    });
  });
});
