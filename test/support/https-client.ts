// A real HTTPS client for the end-to-end suites: loopback only, with or without a client
// certificate, answering status, headers and body (or the TLS error that refused us).
import { request } from 'node:https';

export interface ClientIdentity {
  readonly caPem: string;
  readonly certPem?: string;
  readonly keyPem?: string;
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export function post(
  url: string,
  body: string | Buffer,
  identity: ClientIdentity,
  options: { method?: string; contentType?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'POST',
        ca: identity.caPem,
        cert: identity.certPem,
        key: identity.keyPem,
        headers: {
          'content-type': options.contentType ?? 'application/json',
          'user-agent': 'kube-apiserver-admission',
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
