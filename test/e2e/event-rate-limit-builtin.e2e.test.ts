// EventRateLimit's refusal, read from a real v1.36 kube-apiserver twice: once from its built-in
// plugin, once from ours served as a webhook by the local server. The apiserver prints a webhook's
// denial as `admission webhook "NAME" denied the request: MESSAGE`, with the status code and reason
// the webhook gave; so the webhook's message must be exactly the built-in's, and the user's line
// differs from the built-in's only by that prefix.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import eventRateLimit from '../../functions/event-rate-limit/plugin.js';
import { apiserverAdmissionConfiguration, webhookKubeconfig } from '../../infra/emit/apiserver.js';
import { webhookConfigurations, webhookName } from '../../infra/emit/webhooks.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { testPki } from '../support/pki.js';
import type { ControlPlane, KubectlResult } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';

const LIMITS = {
  apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1',
  kind: 'Configuration',
  // One token a second per namespace: creates sent back to back run out at once.
  limits: [{ type: 'Namespace', qps: 1, burst: 1 }],
};
const NAMESPACE = 'shop';
const WEBHOOK = webhookName(eventRateLimit.metadata.name, 'validate');

const event = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: NAMESPACE },
  involvedObject: { kind: 'Pod', name: 'web', namespace: NAMESPACE },
  reason: 'Probe',
  message: 'probe',
});

interface Status {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
}

interface Refusal {
  /** The Status the apiserver answered the first refused create with. */
  readonly status: Status;
  /** What kubectl printed for the next refused create. */
  readonly kubectl: KubectlResult;
}

/** Creates Events in NAMESPACE until one is refused (a slow machine may see a token refill first). */
async function firstRefusal(cluster: ControlPlane): Promise<Refusal> {
  expect((await cluster.kubectl(['create', 'namespace', NAMESPACE])).code).toBe(0);
  let status: Status | undefined;
  for (let i = 0; i < 50 && status === undefined; i++) {
    const answer = await cluster.request('POST', `/api/v1/namespaces/${NAMESPACE}/events`, event(`api-${i}`));
    if (answer.status !== 201) status = answer.json<Status>();
  }
  if (status === undefined) throw new Error('50 Events in a row were admitted: the limit is not in force');
  let kubectl: KubectlResult | undefined;
  for (let i = 0; i < 50 && kubectl === undefined; i++) {
    const result = await cluster.kubectl(['create', '-f', '-'], JSON.stringify(event(`cli-${i}`)));
    if (result.code !== 0) kubectl = result;
  }
  if (kubectl === undefined) throw new Error('kubectl: 50 Events in a row were admitted');
  return { status, kubectl };
}

let builtIn: Refusal;
let webhook: Refusal;
let server: LocalServer | undefined;
let store: TestStore | undefined;
let kubeconfigDir: string | undefined;

beforeAll(async () => {
  const builtInPlane = await startControlPlane({
    controllerManager: false,
    enableAdmissionPlugins: ['EventRateLimit'],
    admissionConfiguration: stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [{ name: 'EventRateLimit', configuration: LIMITS }],
    }),
  });
  try {
    builtIn = await firstRefusal(builtInPlane);
  } finally {
    await builtInPlane.stop();
  }

  const pki = testPki();
  store = await testStore('event-rate-limit');
  const handler = createStatefulAdmissionHandler(eventRateLimit, {
    config: eventRateLimit.configure?.(LIMITS, { file: 'this test', baseDir: '.' }),
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    state: (request) => (store as TestStore).state(request),
  });
  server = await startLocalServer({
    handlers: new Map([[eventRateLimit.metadata.name, handler]]),
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
    requireClientCertificate: true,
    host: '127.0.0.1',
    port: 0,
  });
  const baseUrl = server.url;
  // The cluster side of mTLS, as `npm run emit -- --out` writes it: the apiserver presents the
  // local CA's client certificate to the webhook host.
  // The apiserver wants an absolute kubeConfigFile, so it lives outside the plane's own directory.
  kubeconfigDir = mkdtempSync(join(tmpdir(), 'event-rate-limit-e2e-'));
  const kubeconfig = join(kubeconfigDir, 'webhook-kubeconfig.yaml');
  writeFileSync(kubeconfig, stringify(webhookKubeconfig(baseUrl, pki.client)), { mode: 0o600 });
  const webhookPlane = await startControlPlane({
    controllerManager: false,
    admissionConfiguration: stringify(apiserverAdmissionConfiguration(kubeconfig)),
  });
  try {
    const [configuration] = webhookConfigurations([eventRateLimit], {
      baseUrl,
      auth: { mode: 'mtls' },
      caBundle: Buffer.from(pki.ca.certPem).toString('base64'),
    });
    // failurePolicy Fail here: a webhook that cannot be reached must fail the test, not admit.
    const webhooks = configuration.webhooks?.map((w) => ({ ...w, failurePolicy: 'Fail' }));
    const created = await webhookPlane.request(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      { ...configuration, webhooks },
    );
    expect(created.status).toBe(201);
    webhook = await firstRefusal(webhookPlane);
  } finally {
    await webhookPlane.stop();
  }
});

afterAll(async () => {
  await server?.close();
  store?.close();
  if (kubeconfigDir) rmSync(kubeconfigDir, { recursive: true, force: true });
});

describe('EventRateLimit over the limit: the built-in plugin and the webhook say the same', () => {
  it('the built-in plugin on v1.36 answers 429 TooManyRequests with one "Too many requests:" prefix', () => {
    expect(builtIn.status).toMatchObject({
      code: 429,
      reason: 'TooManyRequests',
      message: `Too many requests: limit reached on type Namespace for key ${NAMESPACE}`,
    });
  });

  it("the webhook's refusal is the built-in's Status behind the apiserver's webhook prefix", () => {
    expect(webhook.status).toMatchObject({
      code: builtIn.status.code,
      reason: builtIn.status.reason,
      message: `admission webhook "${WEBHOOK}" denied the request: ${builtIn.status.message}`,
    });
  });

  it("kubectl's line differs from the built-in's only by that prefix", () => {
    expect(builtIn.kubectl.stderr).toBe(
      `Error from server (TooManyRequests): error when creating "STDIN": ${builtIn.status.message}\n`,
    );
    expect(webhook.kubectl.stderr).toBe(
      builtIn.kubectl.stderr.replace(
        builtIn.status.message,
        `admission webhook "${WEBHOOK}" denied the request: ${builtIn.status.message}`,
      ),
    );
  });
});
