// Child process of the throughput bench: the floor, a bare Node https server with the mTLS
// settings of `npm start` (its PKI, a client certificate required) that parses the review and
// answers a fixed allowed body, and nothing else. Prints its URL, ends when stdin closes.
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DEFAULT_PKI_DIR, ensureLocalPki } from '../../infra/pki/pki.js';

const pki = ensureLocalPki(DEFAULT_PKI_DIR);
const floor = createServer(
  {
    key: pki.server.keyPem,
    cert: pki.server.certPem,
    ca: pki.ca.certPem,
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  },
  (req, res) => {
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
  },
);
await new Promise<void>((resolve) => floor.listen(0, '127.0.0.1', resolve));
process.stdout.write(`${JSON.stringify({ url: `https://127.0.0.1:${(floor.address() as AddressInfo).port}` })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
