// What the plugins would refuse among the objects that already run: every object of the
// `kubectl get -o json` listings `npm run sync` reads, created again, now, through the validating
// webhooks only (the state loaded from the same listings, read-only: nothing is charged or
// learned), with the answers written as wgpolicyk8s.io/v1alpha2 PolicyReports (one per namespace)
// and a ClusterPolicyReport (cluster-scoped objects): what Kyverno's background scan and
// Kubewarden's audit scanner write, so any PolicyReport viewer shows them.
import type { KubeObject } from '../../lib/admission/types.js';
import type { WebhookCall } from '../../lib/admission/chain.js';
import { AUDIT_REFUSAL_KEY } from '../../lib/http/enforcement.js';
import type { Listing } from '../sync/sync.js';
import { applyListings } from '../sync/sync.js';
import type { AdmissionChain, CheckWebhook, ObjectResult } from './runner.js';

export const REPORT_API_VERSION = 'wgpolicyk8s.io/v1alpha2';
/** The `source` of every result: the engine that wrote it. */
export const REPORT_SOURCE = 'serverless-admission';
/** The name of our report in each namespace, and of our ClusterPolicyReport. */
export const REPORT_NAME = 'serverless-admission';

export type ResultKind = 'pass' | 'fail' | 'warn' | 'error' | 'skip';

export interface ReportResult {
  readonly policy: string;
  readonly rule: string;
  readonly result: ResultKind;
  readonly message: string;
  readonly source: string;
  readonly scored: boolean;
  readonly timestamp: { readonly seconds: number; readonly nanos: number };
  readonly resources: readonly Record<string, string>[];
  readonly properties?: Readonly<Record<string, string>>;
}

export interface PolicyReport {
  readonly apiVersion: string;
  readonly kind: 'PolicyReport' | 'ClusterPolicyReport';
  readonly metadata: { name: string; namespace?: string; labels: Record<string, string> };
  readonly summary: Record<ResultKind, number>;
  readonly results: ReportResult[];
}

/** A listed object as a CREATE would carry it: no status, no server-side bookkeeping. */
export function asCreated(object: KubeObject): KubeObject {
  const { status: _status, ...rest } = object;
  const {
    resourceVersion: _rv,
    managedFields: _mf,
    generation: _g,
    selfLink: _s,
    ...metadata
  } = (object.metadata ?? {}) as Record<string, unknown>;
  return { ...rest, metadata } as KubeObject;
}

/** One validating call as a result: refused fails, softened (Warn, Audit) or warned warns. */
function resultOf(call: WebhookCall<CheckWebhook>): { result: ResultKind; message: string; code?: number } {
  if (call.outcome === 'denied')
    return { result: 'fail', message: call.status?.message ?? 'refused', code: call.status?.code };
  if (call.outcome === 'failed' || call.outcome === 'failed-open')
    return { result: 'error', message: call.error ?? '' };
  const audited = call.auditAnnotations[AUDIT_REFUSAL_KEY];
  if (call.warnings.length > 0 || audited !== undefined)
    return { result: 'warn', message: [...call.warnings, ...(audited !== undefined ? [audited] : [])].join('; ') };
  return { result: 'pass', message: 'admitted' };
}

/** The results of one object: one per judging webhook that was called. */
export function objectResults(result: ObjectResult, object: KubeObject, at: Date): ReportResult[] {
  const uid = typeof object.metadata?.uid === 'string' ? object.metadata.uid : undefined;
  const resource = {
    apiVersion: result.ref.apiVersion,
    kind: result.ref.kind,
    name: result.ref.name,
    ...(result.ref.namespace !== '' && { namespace: result.ref.namespace }),
    ...(uid && { uid }),
  };
  const ms = at.getTime();
  return result.calls
    .filter((call) => call.webhook.role === 'judge')
    .map((call) => {
      const { result: kind, message, code } = resultOf(call);
      return {
        policy: call.webhook.plugin,
        rule: call.webhook.name,
        result: kind,
        message,
        source: REPORT_SOURCE,
        scored: true,
        timestamp: { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 },
        resources: [resource],
        ...(code !== undefined && { properties: { code: String(code) } }),
      };
    });
}

function emptySummary(): Record<ResultKind, number> {
  return { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
}

/** One report per namespace (sorted), then the ClusterPolicyReport when any object is cluster-scoped. */
export function policyReports(byNamespace: ReadonlyMap<string, readonly ReportResult[]>): PolicyReport[] {
  const labels = { 'app.kubernetes.io/managed-by': REPORT_SOURCE };
  const report = (namespace: string, results: readonly ReportResult[]): PolicyReport => {
    const summary = emptySummary();
    for (const r of results) summary[r.result]++;
    return {
      apiVersion: REPORT_API_VERSION,
      kind: namespace === '' ? 'ClusterPolicyReport' : 'PolicyReport',
      metadata: { name: REPORT_NAME, ...(namespace !== '' && { namespace }), labels },
      summary,
      results: [...results],
    };
  };
  const namespaces = [...byNamespace.keys()].filter((ns) => ns !== '').sort();
  return [
    ...namespaces.map((ns) => report(ns, byNamespace.get(ns) ?? [])),
    ...(byNamespace.has('') ? [report('', byNamespace.get('') ?? [])] : []),
  ];
}

/** Plugin × result counts, for the summary table. */
export function summaryTable(reports: readonly PolicyReport[]): string {
  const counts = new Map<string, Record<ResultKind, number>>();
  for (const r of reports.flatMap((report) => report.results)) {
    const row = counts.get(r.policy) ?? emptySummary();
    row[r.result]++;
    counts.set(r.policy, row);
  }
  const shown: ResultKind[] = ['pass', 'fail', 'warn', 'error'];
  const width = Math.max('PLUGIN'.length, ...[...counts.keys()].map((k) => k.length));
  const line = (name: string, cells: readonly (string | number)[]) =>
    `${name.padEnd(width)}  ${cells.map((c) => String(c).padStart(5)).join('  ')}`;
  const rows = [...counts.keys()].sort().map((plugin) =>
    line(
      plugin,
      shown.map((k) => counts.get(plugin)?.[k] ?? 0),
    ),
  );
  return `${[
    line(
      'PLUGIN',
      shown.map((k) => k.toUpperCase()),
    ),
    ...rows,
  ].join('\n')}\n`;
}

export type AuditProgress = (line: string) => void;

/** Loads the listings into the chain's (read-only) state, then judges every listed object. */
export async function auditListings(
  chain: AdmissionChain,
  listings: readonly Listing[],
  progress: AuditProgress,
  now: () => Date = () => new Date(),
): Promise<PolicyReport[]> {
  await applyListings(listings, chain.memory.listingTarget(), `audit-${Date.now()}`, progress);
  const objects = listings.flatMap((listing) =>
    [...listing.byKind.values()].flat().map((object, i) => ({ object, source: `${listing.file}[${i}]` })),
  );
  const byNamespace = new Map<string, ReportResult[]>();
  let skipped = 0;
  for (const [i, { object, source }] of objects.entries()) {
    if (typeof object.apiVersion !== 'string') {
      skipped++;
      continue;
    }
    const result = await chain.admit(asCreated(object), source, 'validate');
    const results = objectResults(result, object, now());
    if (results.length > 0)
      byNamespace.set(result.ref.namespace, [...(byNamespace.get(result.ref.namespace) ?? []), ...results]);
    if (objects.length > 100 && (i + 1) % 100 === 0) progress(`audit: ${i + 1}/${objects.length} objects`);
  }
  if (skipped > 0) progress(`audit: ${skipped} listed objects without apiVersion skipped`);
  return policyReports(byNamespace);
}
