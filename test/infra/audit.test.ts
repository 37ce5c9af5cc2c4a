// `npm run audit`: the reports it writes are wgpolicyk8s.io/v1alpha2 PolicyReports and a
// ClusterPolicyReport that the CRD's OpenAPI schema accepts (validated with Ajv, and with the
// apiserver's pruning made an error: a field the CRD does not declare would be silently dropped
// by `kubectl apply`, so here it fails), whose results and summaries say what the plugins decide.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCommand } from '../../infra/check/audit-cli.js';

const SCHEMA = new URL('../fixtures/policy-report/wgpolicyk8s.io-v1alpha2.schema.yaml', import.meta.url);

/** Structural-schema pruning as an error: every object that declares properties allows no other. */
function withoutPruning(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  if (schema.properties && schema.additionalProperties === undefined) out.additionalProperties = false;
  if (schema.properties)
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [
        k,
        withoutPruning(v),
      ]),
    );
  if (schema.items) out.items = withoutPruning(schema.items as Record<string, unknown>);
  return out;
}

const ajv = new Ajv({ allErrors: true, formats: { int32: true, int64: true } });
const validateReport = ajv.compile(withoutPruning(parse(readFileSync(SCHEMA, 'utf8')) as Record<string, unknown>));

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: AlwaysPullImages
- name: DenyServiceExternalIPs
  enforcement: Warn
- name: TaintNodesByCondition
`;

const list = (items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
const NAMESPACES = list([
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', uid: 'ns-a' }, status: { phase: 'Active' } },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b', uid: 'ns-b' }, status: { phase: 'Active' } },
]);
const WORKLOADS = list([
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a', uid: 'pod-web', resourceVersion: '7', managedFields: [] },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] },
    status: { phase: 'Running' },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'edge', namespace: 'team-b', uid: 'svc-edge' },
    spec: { externalIPs: ['192.0.2.10'], ports: [{ port: 80 }] },
  },
  {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', uid: 'node-1' },
    spec: {},
  },
]);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'audit-'));
  writeFileSync(join(dir, 'admission.yaml'), CONFIG);
  writeFileSync(join(dir, 'namespaces.json'), NAMESPACES);
  writeFileSync(join(dir, 'workloads.json'), WORKLOADS);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await auditCommand(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: {},
    now: () => new Date('2026-11-23T04:00:00.250Z'),
  });
  return { code, stdout, stderr };
}

interface Report {
  kind: string;
  metadata: { name: string; namespace?: string };
  summary: Record<string, number>;
  results: { policy: string; rule: string; result: string; message: string; resources: { name: string }[] }[];
}

const from = () => ['--from', join(dir, 'namespaces.json'), '--from', join(dir, 'workloads.json')];

describe('npm run audit', () => {
  it('writes reports that the PolicyReport CRD schema accepts, one per namespace and one for the cluster', async () => {
    const { code, stdout, stderr } = await run(...from(), '--config', join(dir, 'admission.yaml'));
    expect(code).toBe(0);
    const reports = parseAllDocuments(stdout).map((d) => d.toJSON() as Report);
    expect(reports.map((r) => [r.kind, r.metadata.namespace ?? ''])).toEqual([
      ['PolicyReport', 'team-a'],
      ['PolicyReport', 'team-b'],
      ['ClusterPolicyReport', ''],
    ]);
    for (const report of reports) {
      expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
      // The summary counts the results.
      const counted = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 } as Record<string, number>;
      for (const r of report.results) counted[r.result]++;
      expect(report.summary).toEqual(counted);
    }
    // The running pod was never fixed by AlwaysPullImages' mutation: its validating half fails it.
    const teamA = reports[0].results.find((r) => r.policy === 'always-pull-images');
    expect(teamA).toMatchObject({
      rule: 'always-pull-images.validate.serverless-admission.io',
      result: 'fail',
      resources: [{ name: 'web' }],
    });
    expect(teamA?.message).toContain('spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent"');
    // Warn: the refusal is a warning.
    const edge = reports[1].results.find((r) => r.policy === 'deny-service-external-ips');
    expect(edge).toMatchObject({ result: 'warn' });
    expect(edge?.message).toMatch(/external IPs/);
    expect(reports[2].results.every((r) => r.resources[0].name === 'n1')).toBe(true);
    expect(stderr).toMatch(/PLUGIN +PASS +FAIL +WARN +ERROR\n/);
    expect(stderr).toMatch(/\ndeny-service-external-ips +0 +0 +1 +0\n/);
  });

  it('is a failed validation when a report carries a field the CRD does not declare', () => {
    const report = {
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      metadata: { name: 'x' },
      results: [{ policy: 'p', result: 'fail', severity: 'critical' }],
      extra: true,
    };
    expect(validateReport(report)).toBe(false);
    expect(validateReport.errors?.map((e) => e.instancePath || e.params)).toEqual(
      expect.arrayContaining(['/results/0/severity']),
    );
  });

  it('--out writes one file per report', async () => {
    const out = join(dir, 'reports');
    const { code, stdout } = await run(...from(), '--config', join(dir, 'admission.yaml'), '--out', out);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(readdirSync(out).sort()).toEqual([
      'clusterpolicyreport.yaml',
      'policyreport-team-a.yaml',
      'policyreport-team-b.yaml',
    ]);
    const teamB = parse(readFileSync(join(out, 'policyreport-team-b.yaml'), 'utf8')) as Report;
    expect(teamB.metadata).toMatchObject({ name: 'serverless-admission', namespace: 'team-b' });
    expect(validateReport(teamB)).toBe(true);
  });

  it.each([
    ['no --from', [], /--from FILE is required/],
    ['a listing that is not JSON', ['--from', 'package-lock.json.missing'], /cannot be read/],
  ])('exits 2 on %s', async (_what, argv, message) => {
    const { code, stderr } = await run(...(argv as string[]));
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
