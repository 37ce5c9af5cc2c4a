// Prints one scenario's artillery report as a few lines: latency percentiles, requests by status,
// admission outcomes and errors. Usage: node infra/load/summary.mjs REPORT.json NAME RESULT
import { readFileSync } from 'node:fs';

const [file, name, result] = process.argv.slice(2);
const { aggregate } = JSON.parse(readFileSync(file, 'utf8'));
const counters = aggregate.counters ?? {};
const latency = aggregate.summaries?.['http.response_time'] ?? {};
const pick = (prefix) =>
  Object.entries(counters)
    .filter(([k]) => k.startsWith(prefix))
    .map(([k, v]) => `${k.slice(prefix.length)} ${v}`);
const ms = (v) => (v === undefined ? '-' : `${Math.round(v * 10) / 10} ms`);

const lines = [
  `${name}: ${result}`,
  `  latency   p50 ${ms(latency.p50 ?? latency.median)}  p95 ${ms(latency.p95)}  p99 ${ms(latency.p99)}  max ${ms(latency.max)}  (${latency.count ?? 0} responses)`,
  `  requests  ${counters['http.requests'] ?? 0}  codes: ${pick('http.codes.').join(', ') || 'none'}`,
  `  admission allowed ${counters['admission.allowed'] ?? 0}, denied ${counters['admission.denied'] ?? 0}, patches applied ${counters['admission.patched'] ?? 0}`,
  `  users     ${counters['vusers.created'] ?? 0} created, ${counters['vusers.completed'] ?? 0} completed, ${counters['vusers.failed'] ?? 0} failed`,
  `  errors    ${pick('errors.').join(', ') || 'none'}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
