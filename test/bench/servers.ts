// Child process of the throughput bench: the local server with every stateless plugin, and a
// floor server with the same mTLS settings that only parses the review and answers allowed.
import { usesStore } from '../../lib/admission/plugin.js';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { plugins } from '../../functions/index.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { startLocalServer } from '../../infra/local/server.js';
import { ensureLocalPki } from '../../infra/pki/pki.js';

const pki = ensureLocalPki('.local/bench/pki');
const tls = {
  key: pki.server.keyPem,
  cert: pki.server.certPem,
  ca: pki.ca.certPem,
  requestCert: true,
  rejectUnauthorized: true,
  minVersion: 'TLSv1.2' as const,
};
const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/admission.yaml' });
const handlers = new Map<string, AdmissionHandler>();
for (const plugin of plugins) {
  if (usesStore(plugin.metadata)) continue;
  handlers.set(
    plugin.metadata.name,
    createAdmissionHandler(plugin, {
      config: configurePlugin(plugin, configuration),
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
    }),
  );
}
const local = await startLocalServer({
  handlers,
  tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
  requireClientCertificate: true,
  port: 0,
});

const floor = createServer(tls, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const body = JSON.stringify({
      apiVersion: review.apiVersion,
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: true },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
await new Promise<void>((resolve) => floor.listen(0, '127.0.0.1', resolve));
process.stdout.write(
  `${JSON.stringify({ local: local.url, floor: `https://127.0.0.1:${(floor.address() as AddressInfo).port}`, pki: pki.dir })}\n`,
);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
