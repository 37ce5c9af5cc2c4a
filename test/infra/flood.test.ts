// Abuse, probed: while an apiserver-like client sends real reviews, a flood sends what an attacker
// can (url-secret: capabilities no key made, each on a new TLS connection; mTLS: handshakes without
// a client certificate). Every real review is answered and nothing of the flood is accepted. The
// latency the probe reports is a figure for `npm run flood` and the bench, not asserted here.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import alwaysPullImages from '../../functions/always-pull-images/plugin.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import type { CallerAuth } from '../../lib/http/caller-identity.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { runFlood } from '../../infra/load/flood.js';
import { capabilityPath, OLD_KEY, urlSecretAuth } from '../support/capability.js';
import { testPki } from '../support/pki.js';

const pki = testPki();
const review = readFileSync(
  new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
  'utf8',
);
const tls = { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem };
const servers: LocalServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

async function serve(callerAuth: CallerAuth): Promise<LocalServer> {
  const handler = createAdmissionHandler(alwaysPullImages, { config: undefined, callerAuth });
  const server = await startLocalServer({
    handlers: new Map([[alwaysPullImages.metadata.name, handler]]),
    tls,
    requireClientCertificate: callerAuth.mode === 'mtls',
    port: 0,
  });
  servers.push(server);
  return server;
}

describe('a flood of wrong capabilities (url-secret mode)', () => {
  let server: LocalServer;
  beforeAll(async () => {
    server = await serve(urlSecretAuth());
  });

  it('answers every real review and refuses every forged capability', async () => {
    const report = await runFlood({
      baseUrl: server.url,
      caPem: pki.ca.certPem,
      realPath: capabilityPath('always-pull-images', 'validate', OLD_KEY, server.url),
      realBody: review,
      flood: 'wrong-capability',
      floodRate: 150,
      realRate: 20,
      seconds: 1.5,
    });
    expect(report.real.sent).toBeGreaterThan(0);
    expect(report.real.failed).toBe(0);
    expect(report.real.answered).toBe(report.real.sent);
    expect(report.flood.accepted).toBe(0);
    expect(report.flood.otherErrors).toBe(0);
    expect(report.flood.refused).toBeGreaterThan(0);
    expect(report.flood.refused + report.flood.skipped).toBe(report.flood.attempted);
  });
});

describe('a flood of handshakes without a certificate (mTLS mode)', () => {
  let server: LocalServer;
  beforeAll(async () => {
    server = await serve({ mode: 'mtls', allowedSubjects: [] });
  });

  it('answers every real review and refuses every handshake without a certificate', async () => {
    const report = await runFlood({
      baseUrl: server.url,
      caPem: pki.ca.certPem,
      realPath: '/always-pull-images/validate',
      realBody: review,
      client: { certPem: pki.client.certPem, keyPem: pki.client.keyPem },
      flood: 'no-certificate',
      floodRate: 150,
      realRate: 20,
      seconds: 1.5,
    });
    expect(report.real.failed).toBe(0);
    expect(report.real.answered).toBe(report.real.sent);
    expect(report.flood.accepted).toBe(0);
    expect(report.flood.refused).toBeGreaterThan(0);
    expect(report.flood.refused + report.flood.skipped).toBe(report.flood.attempted);
  });

  it('refuses a flood aimed anywhere but loopback', async () => {
    await expect(
      runFlood({
        baseUrl: 'https://192.0.2.1:8443',
        caPem: pki.ca.certPem,
        realPath: '/x/validate',
        realBody: '{}',
        flood: 'no-certificate',
        floodRate: 1,
        realRate: 1,
        seconds: 0.1,
      }),
    ).rejects.toThrow(/not a loopback address/);
  });
});
