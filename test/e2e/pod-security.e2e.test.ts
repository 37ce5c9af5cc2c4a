// pod-security through a real kube-apiserver (its own PodSecurity disabled, so the webhook alone
// decides), beside the built-in PodSecurity configured with the same PodSecurityConfiguration in
// the apiserver's AdmissionConfiguration: an unlabelled namespace judged by the defaults (baseline
// enforced, restricted warned), a namespace label, an exempt namespace, dry runs, and an outage.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, pod } from './support/kube.js';
import {
  duringOutage,
  expectSameRefusal,
  failedCallingWebhook,
  namespaceWithAccount,
  removeEverywhere,
} from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodSecurity
    configuration:
      apiVersion: pod-security.admission.config.k8s.io/v1
      kind: PodSecurityConfiguration
      defaults:
        enforce: baseline
        enforce-version: latest
        audit: restricted
        audit-version: latest
        warn: restricted
        warn-version: latest
      exemptions:
        usernames: []
        runtimeClasses: []
        namespaces: [exempt]
`;
const VALIDATE = 'pod-security.validate.serverless-admission.io';

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['PodSecurity'] },
    }),
    startControlPlane({ admissionConfiguration: CONFIG, controllerManager: false }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns namespaces' labels from its learning webhook.
  await Promise.all(
    both.flatMap((c) => [
      namespaceWithAccount(c, 'apps'),
      namespaceWithAccount(c, 'exempt'),
      namespaceWithAccount(c, 'strict', { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } }),
    ]),
  );
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);

const privileged = (namespace: string, name: string): KubeObject =>
  pod(namespace, name, {
    containers: [{ name: 'c', image: 'registry.example/app:1', securityContext: { privileged: true } }],
  });

const RESTRICTED_WARNING =
  'would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set ' +
  'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set ' +
  'securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set ' +
  'securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set ' +
  'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

describe('pod-security', () => {
  it('admits a baseline pod in an unlabelled namespace with the restricted warning, as the built-in does', async () => {
    const p = pod('apps', 'plain');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(reference.warnings).toEqual([RESTRICTED_WARNING]);
    expect(webhook.warnings).toEqual(reference.warnings);
    expect(admittedShape(await get(webhooks.cluster, p))).toEqual(admittedShape(await get(builtin, p)));
  });

  it('refuses a privileged pod under the baseline default with the built-in message', async () => {
    const p = privileged('apps', 'priv');
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe(
      'pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    );
    expect(reference.reason).toBe('Forbidden');
    expectSameRefusal(webhook, reference, VALIDATE);
    expect(await get(webhooks.cluster, p)).toBeUndefined();
  });

  it("enforces a namespace's enforce label over the defaults, with the built-in message", async () => {
    const p = pod('strict', 'plain');
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(reference.message).toBe(
      `pods "plain" is forbidden: ${RESTRICTED_WARNING.replace('would violate', 'violates')}`,
    );
    expectSameRefusal(webhook, reference, VALIDATE);
  });

  it('admits a privileged pod in an exempt namespace, as the built-in does', async () => {
    const p = privileged('exempt', 'priv');
    onTestFinished(() => removeEverywhere(both, [p]));
    const [webhook, reference] = await onBoth((c) => create(c, p));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(webhook.warnings).toEqual(reference.warnings);
    expect(admittedShape(await get(webhooks.cluster, p))).toEqual(admittedShape(await get(builtin, p)));
  });

  it("refuses a namespace with an invalid level label with the built-in's field error", async () => {
    const ns = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'bogus', labels: { 'pod-security.kubernetes.io/enforce': 'strictest' } },
    };
    const [webhook, reference] = await onBoth((c) => create(c, ns));
    expect([reference.status, reference.reason]).toEqual([422, 'Invalid']);
    expect(reference.message).toBe(
      'Namespace "bogus" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strictest": must be one of privileged, baseline, restricted',
    );
    expectSameRefusal(webhook, reference, 'pod-security.validate-ignore.serverless-admission.io');
  });

  it('judges dry runs as real requests and stores nothing', async () => {
    const [webhook, reference] = await onBoth((c) => create(c, privileged('apps', 'dry'), { dryRun: true }));
    expectSameRefusal(webhook, reference, VALIDATE);
    const admitted = await create(webhooks.cluster, pod('apps', 'dry'), { dryRun: true });
    expect(admitted.status, admitted.message).toBe(201);
    expect(admitted.warnings).toEqual([RESTRICTED_WARNING]);
    expect(await get(webhooks.cluster, pod('apps', 'dry'))).toBeUndefined();
  });

  it('during an outage the pod webhook (Fail) refuses', async () => {
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, pod('apps', 'outage')));
    expect(answer.status).toBe(500);
    expect(answer.message).toMatch(failedCallingWebhook(VALIDATE, 'pod-security', 'validate'));
  });
});
