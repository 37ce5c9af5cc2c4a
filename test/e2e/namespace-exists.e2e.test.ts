// namespace-exists through a real kube-apiserver, beside the built-in NamespaceExists; both control
// planes run without NamespaceLifecycle (on by default), which would answer first. A namespace the
// webhook learned is admitted as the built-in admits it; a missing one gets the built-in's NotFound
// from the apiserver itself, which resolves the webhook's namespaceSelector before calling it; a
// namespace that predates the webhook (never learned) is admitted with a warning naming the sync.
// A dry run, and an outage (the webhook fails open).
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { admittedShape, create, get } from './support/kube.js';
import { duringOutage, namespaceWithAccount, removeEverywhere } from './support/same-answer.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: NamespaceExists
`;
const NEVER_SEEN =
  'NamespaceExists: namespace "default" is not learned yet, so its existence was not checked; ' +
  "load the cluster's existing namespaces with npm run sync (docs/seed-state.md)";

let webhooks: WebhookCluster;
let builtin: ControlPlane;
let both: ControlPlane[];

const configMap = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { k: 'v' },
});

beforeAll(async () => {
  [webhooks, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['NamespaceLifecycle'] },
    }),
    startControlPlane({
      controllerManager: false,
      enableAdmissionPlugins: ['NamespaceExists'],
      disableAdmissionPlugins: ['NamespaceLifecycle'],
    }),
  ]);
  both = [webhooks.cluster, builtin];
  // Created once the webhooks are in place: the plugin learns namespaces from its learning webhook.
  await Promise.all(both.map((c) => namespaceWithAccount(c, 'apps')));
});
afterAll(async () => {
  await Promise.all([webhooks?.stop(), builtin?.stop()]);
});

const onBoth = <T>(of: (c: ControlPlane) => Promise<T>) => Promise.all([of(webhooks.cluster), of(builtin)]);
const seen = (a: Answer) => [a.status, a.reason, a.message];

describe('namespace-exists', () => {
  it('admits a write in a learned namespace, as the built-in does', async () => {
    const cm = configMap('apps', 'settings');
    onTestFinished(() => removeEverywhere(both, [cm]));
    const [webhook, reference] = await onBoth((c) => create(c, cm));
    expect(webhook.status, webhook.message).toBe(201);
    expect(reference.status, reference.message).toBe(201);
    expect(webhook.warnings).toEqual([]);
    expect(admittedShape(await get(webhooks.cluster, cm))).toEqual(admittedShape(await get(builtin, cm)));
  });

  it("answers a write in a missing namespace with the built-in's NotFound, even in an outage", async () => {
    const cm = configMap('nope', 'settings');
    const [webhook, reference] = await onBoth((c) => create(c, cm));
    expect(seen(reference)).toEqual([404, 'NotFound', 'namespaces "nope" not found']);
    // No webhook prefix: the apiserver looks the namespace up for the webhook's namespaceSelector
    // and answers NotFound itself (docs/design/e2e-exceptions.md), whether or not the server is up.
    expect(seen(webhook)).toEqual(seen(reference));
    expect(seen(await duringOutage(webhooks, () => create(webhooks.cluster, cm)))).toEqual(seen(reference));
    expect(await get(webhooks.cluster, cm)).toBeUndefined();
  });

  it('admits a write in a namespace it never learned with a warning naming the sync; the built-in, silently', async () => {
    const cm = configMap('default', 'unlearned');
    onTestFinished(() => removeEverywhere(both, [cm]));
    const [webhook, reference] = await onBoth((c) => create(c, cm));
    expect(reference.status, reference.message).toBe(201);
    expect(reference.warnings).toEqual([]);
    expect(webhook.status, webhook.message).toBe(201);
    expect(webhook.warnings).toEqual([NEVER_SEEN]);
  });

  it('judges a dry run alike and stores nothing', async () => {
    const cm = configMap('default', 'dry');
    const dry = await create(webhooks.cluster, cm, { dryRun: true });
    expect(dry.status, dry.message).toBe(201);
    expect(dry.warnings).toEqual([NEVER_SEEN]);
    expect(await get(webhooks.cluster, cm)).toBeUndefined();
  });

  it('during an outage the webhook (Ignore) is skipped: the write is admitted without its warning', async () => {
    const cm = configMap('default', 'outage');
    onTestFinished(() => removeEverywhere([webhooks.cluster], [cm]));
    const answer = await duringOutage(webhooks, () => create(webhooks.cluster, cm));
    expect(answer.status, answer.message).toBe(201);
    expect(answer.warnings).toEqual([]);
  });
});
