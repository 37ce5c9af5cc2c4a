// `npm run check` answers what the cluster would: the same manifests, under the same
// AdmissionConfiguration, dispatched by the same chain once to the Lambda handlers in process
// (state in memory) and once over HTTPS to the local server (client certificate, state in DynamoDB
// Local), through the webhook URLs the emitter writes for it. Every object's verdict, every
// plugin's decision, warning and patch must agree.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { setLogSink } from '../../lib/http/log.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import { parseManifests } from '../../infra/check/manifests.js';
import type { ObjectResult } from '../../infra/check/runner.js';
import { AdmissionChain, answerOf, namespacesFirst } from '../../infra/check/runner.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';
import { post } from '../support/https-client.js';
import { testPki } from '../support/pki.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: AlwaysPullImages
  exemptions:
    namespaces: [legacy]
- name: DenyServiceExternalIPs
  enforcement: Warn
- name: PodTolerationRestriction
  exemptions:
    namespaceSelector: {matchLabels: {tolerations: free}}
- name: ResourceQuota
`;

const MANIFESTS = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team-a}
spec:
  containers: [{name: c, image: nginx, imagePullPolicy: IfNotPresent}]
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {tolerations: free}}
---
apiVersion: v1
kind: Namespace
metadata: {name: legacy}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: pods, namespace: team-a}
spec: {hard: {pods: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: team-a}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: legacy}
spec:
  containers: [{name: c, image: nginx, imagePullPolicy: Never}]
---
apiVersion: v1
kind: Service
metadata: {name: edge, namespace: team-a}
spec:
  externalIPs: [192.0.2.10]
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: legacy}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: c, image: api}]}
`;

const pki = testPki();
const apiserver = { caPem: pki.ca.certPem, certPem: pki.client.certPem, keyPem: pki.client.keyPem };
let dir: string;
let store: TestStore;
let server: LocalServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'check-parity-'));
  writeFileSync(join(dir, 'admission.yaml'), CONFIG);
  store = await testStore('check-parity');
  setLogSink(() => {});
  // The local server as `npm start` builds it, for the plugins this configuration activates.
  const active = new AdmissionChain({ configFile: join(dir, 'admission.yaml'), env: {} }).active;
  const handlers = new Map<string, AdmissionHandler>(
    active.map(({ plugin, config, enforcement, exemptions }) => [
      plugin.metadata.name,
      createPluginHandler(plugin as AnyAdmissionPlugin, {
        config,
        enforcement,
        exemptions,
        callerAuth: { mode: 'mtls', allowedSubjects: [] },
        state: (request) => store.state(request),
      }),
    ]),
  );
  server = await startLocalServer({
    handlers,
    tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
    requireClientCertificate: true,
    port: 0,
  });
});

afterAll(async () => {
  setLogSink(undefined);
  await server?.close();
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function admitAll(chain: AdmissionChain): Promise<ObjectResult[]> {
  const results: ObjectResult[] = [];
  for (const { object, source } of namespacesFirst(parseManifests(MANIFESTS, 'manifests.yaml')))
    results.push(await chain.admit(object, source));
  return results;
}

/** What an operator reads: verdicts, status, each plugin's decision, warnings and patches. */
const decisions = (results: readonly ObjectResult[]) =>
  results.map((r) => ({
    object: `${r.ref.kind} ${r.ref.namespace}/${r.ref.name}`,
    allowed: r.allowed,
    code: r.status?.code,
    message: r.status?.message,
    warnings: r.warnings,
    plugins: Object.fromEntries(r.plugins.map((p) => [p.plugin, { decision: p.decision, patch: p.patch }])),
  }));

describe('npm run check and the local server', () => {
  it('give every object the same verdict, and every plugin the same decision, warnings and patch', async () => {
    const offline = decisions(await admitAll(new AdmissionChain({ configFile: join(dir, 'admission.yaml'), env: {} })));
    const served = decisions(
      await admitAll(
        new AdmissionChain({
          configFile: join(dir, 'admission.yaml'),
          env: {},
          baseUrl: server.url,
          call: async (webhook, request) => {
            const review = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
            const answer = await post(`${webhook.url}?timeout=10s`, review, apiserver);
            return answerOf(answer.status, answer.body);
          },
        }),
      ),
    );
    expect(served).toEqual(offline);

    // And the run says something worth agreeing on: each kind of decision occurs.
    const byName = new Map(offline.map((d) => [d.object, d]));
    expect(byName.get('Pod team-a/web')?.plugins['always-pull-images']?.decision).toBe('patched');
    expect(byName.get('Pod team-a/web')?.allowed).toBe(true);
    // The quota learned from the ResourceQuota in the run holds one pod: the second is refused.
    expect(byName.get('Pod team-a/web-2')).toMatchObject({ allowed: false, code: 403 });
    expect(byName.get('Pod team-a/web-2')?.plugins['resource-quota']?.decision).toBe('denied');
    // Exempt by namespace name: AlwaysPullImages never judges the legacy pod.
    expect(byName.get('Pod legacy/old')?.plugins['always-pull-images']).toBeUndefined();
    expect(byName.get('Pod legacy/old')?.allowed).toBe(true);
    // Warn: admitted, the refusal a warning.
    expect(byName.get('Service team-a/edge')).toMatchObject({ allowed: true });
    expect(byName.get('Service team-a/edge')?.plugins['deny-service-external-ips']?.decision).toBe('warned');
    expect(byName.get('Service team-a/edge')?.warnings.join('\n')).toMatch(/external IPs/);
  });
});
