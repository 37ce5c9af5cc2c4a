// A request to the control plane as admin that keeps what control-plane.ts's request() drops: each
// Warning header (one per warning, from rawHeaders) and the Audit-Id that finds the request's
// audit event; and the audit events of a log file, by audit ID.
import { existsSync, readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { ControlPlane } from './control-plane.js';

export interface FullAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly warnings: readonly string[];
  readonly auditId: string;
}

/** RFC 7234 warn-text: `299 - "text"`, with \" and \\ escaped. */
export function warningText(header: string): string {
  const match = /^\d{3} \S+ "((?:[^"\\]|\\.)*)"/.exec(header);
  return match ? match[1].replace(/\\(.)/g, '$1') : header;
}

export function fullRequest(
  cluster: ControlPlane,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<FullAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${cluster.url}${path}`,
      {
        method,
        ca: cluster.ca.certPem,
        cert: cluster.admin.certPem,
        key: cluster.admin.keyPem,
        agent: false,
        headers: {
          accept: 'application/json',
          ...(payload !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const warnings: string[] = [];
          let auditId = '';
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i].toLowerCase();
            if (name === 'warning') warnings.push(warningText(res.rawHeaders[i + 1]));
            if (name === 'audit-id') auditId = res.rawHeaders[i + 1];
          }
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {}, warnings, auditId });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** The ResponseComplete events of an audit log, by audit ID: their annotations. */
export function auditAnnotations(file: string): Map<string, Record<string, string>> {
  const events = new Map<string, Record<string, string>>();
  if (!existsSync(file)) return events;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as { auditID: string; stage: string; annotations?: Record<string, string> };
    if (event.stage === 'ResponseComplete') events.set(event.auditID, event.annotations ?? {});
  }
  return events;
}

/** An audit policy that records every request's metadata (annotations included) once it is answered. */
export const METADATA_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
`;
