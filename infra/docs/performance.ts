// The performance page's figures and chart, quoted from the committed bench/results.json (written by
// `npm run bench -- --out bench/results.json`): every number the documentation gives about speed
// comes from that one run, and the page names its date once. A field the bench stops writing fails
// the generator, naming it, rather than leaving a stale figure behind.
import { READER_WATCH_MS } from '../../lib/cluster/scheduled.js';
import { READER_TIMEOUT_SECONDS, readerMemoryFor, readerMemorySetting } from '../serverless/cluster-reader.js';
import {
  ARCHITECTURE,
  billedMs,
  estimatedMs,
  MEMORY_STEP_MB,
  monthlyCost,
  ONE_VCPU_MB,
  PRICES,
  RSS_HEADROOM,
  SECONDS_PER_MONTH,
} from '../serverless/cost.js';
import { functionMemory } from '../serverless/functions.js';

type Row = Record<string, unknown>;

export interface BenchResults {
  readonly date: string;
  readonly node: string;
  readonly cpus: number;
  readonly cpuModel?: string;
  readonly handlers: readonly Row[];
  readonly coldStart: readonly Row[];
  readonly logger: readonly Row[];
  readonly throughput: { readonly summary: Row; readonly profile?: Row };
  readonly cel: Row;
  readonly map: Row;
  readonly store: readonly Row[];
  readonly quotaBurst: { readonly summary: Row; readonly throughServer?: Record<string, { readonly summary: Row }> };
  readonly flood: readonly Row[];
  /** `--only apiserver`: through a real kube-apiserver, with the date of its own run. */
  readonly apiserver?: ApiserverResults;
  /** `--only cost`: each function's peak RSS and CPU under a burst, with the date of its own run. */
  readonly cost?: CostResults;
  /** `--only reader`: the cluster reader's peak RSS and CPU at growing cluster sizes, with its run's date. */
  readonly reader?: ReaderResults;
}

export interface ReaderResults {
  readonly date: string;
  /** How long each invocation watched, s. */
  readonly watchSeconds: number;
  /** Peak RSS growth per 1,000 pods, MB (least squares over the sizes). */
  readonly rssMbPer1000Pods: number;
  readonly rows: readonly Row[];
}

export interface CostResults {
  readonly date: string;
  /** CPU ms of one raw store call from Node (a GetItem on a kept connection to DynamoDB Local). */
  readonly storeCallCpuMs?: number;
  readonly rows: readonly Row[];
}

export interface ApiserverResults {
  readonly date: string;
  readonly rows: readonly Row[];
  /** Each target's ratio, verdict and, where unmet, its floor (runs before targets were kept have none). */
  readonly targets?: readonly Row[];
  readonly rounds?: number;
  readonly requests?: number;
  /** The quota burst through the apiserver (runs of the whole section only). */
  readonly quotaBurst?: { readonly summary: Row };
}

export class BenchResultsError extends Error {
  override readonly name = 'BenchResultsError';
}

function num(row: Row, field: string, where: string): number {
  const value = row[field];
  if (typeof value !== 'number') throw new BenchResultsError(`bench/results.json: ${where} has no number "${field}"`);
  return value;
}

function text(row: Row, field: string, where: string): string {
  const value = row[field];
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new BenchResultsError(`bench/results.json: ${where} has no "${field}"`);
  return String(value);
}

/** `1.11–1.15` (the bench's spread strings) as numbers. */
function spread(value: string): [number, number] {
  const [low, high = low] = value.split(/[–-]/).map(Number);
  return [low, high];
}

/** One of the chart's key ratios: the median of the figures it covers, their range, and its target. */
export interface KeyRatio {
  readonly label: string;
  readonly value: number;
  readonly min: number;
  readonly max: number;
  /** The ratio the project aims at, if it has one. */
  readonly target?: number;
  /** Throughput: more is better. Everything else: less is better. */
  readonly higherIsBetter?: true;
  /** What the ratio is taken against. */
  readonly floor: string;
  /** Where the target is not met: the measured floor beneath it, and where the rest goes. */
  readonly sitsOn?: string;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

function ranged(label: string, values: readonly number[], extra: Omit<KeyRatio, 'label' | 'value' | 'min' | 'max'>) {
  if (values.length === 0) throw new BenchResultsError(`bench/results.json: no figures for "${label}"`);
  return {
    label,
    value: round(median(values)),
    min: round(Math.min(...values)),
    max: round(Math.max(...values)),
    ...extra,
  };
}

const isPodRow = (row: Row) => row.resource === 'pods';
/** The plugins whose configuration is policies compiled at start: the CEL plugins and PodSecurity. */
const isPolicyPlugin = (fn: unknown) =>
  fn === 'validating-admission-policy' || fn === 'mutating-admission-policy' || fn === 'pod-security';

/** Stateful functions (those the bench also measured with the AWS SDK's client): they have a store floor. */
/** Each function's ESM bundle as the bench builds it (every function, beside its floors). */
const packaged = (results: BenchResults) =>
  results.coldStart.filter((r) => r.variant === 'bench build' || r.variant === 'as packaged');
/** The zips `npm run package` makes, unzipped and run as deployed (the default-on functions). */
const zips = (results: BenchResults) => results.coldStart.filter((r) => r.variant === 'packaged zip');
const stateful = (row: Row) => row['vs target (wall)'] !== undefined;

/** The size floor of these cold starts: bare node compiling a bundle of their size that runs none of it. */
function sizeFloor(rows: readonly Row[]): string {
  const ratios = rows
    .filter((r) => typeof r['size floor cpu ratio'] === 'number')
    .map((r) => num(r, 'size floor cpu ratio', `coldStart ${r.function}`));
  if (ratios.length === 0) throw new BenchResultsError('bench/results.json: coldStart has no "size floor cpu ratio"');
  const low = round(Math.min(...ratios));
  const high = round(Math.max(...ratios));
  return `bare node compiling a handler of the same size that runs none of it: ${low === high ? low : `${low}–${high}`}× (CPU)`;
}

/** Where the local server's CPU per request goes beside the floor's, measured in the same run. */
function throughputGap(summary: Row): string {
  const us = (key: string) => num(summary, key, 'throughput.summary');
  return `the floor's own ${us('floor cpu µs/req')} µs of CPU per request (TLS, HTTP, parsing); beyond it ${us('gap cpu µs/req')} µs: the request log ${us('gap: request log µs/req')}, the Lambda handler's work beyond parsing ${us('gap: handler µs/req')}, the rest of the path (the API Gateway event, the answer) ${us('gap: rest of the path µs/req')} ([where](#the-local-server))`;
}

/** A ratio a bench summary states with its spread (`a–b`): the summary's median and range. */
function summaryRatio(
  label: string,
  summary: Row,
  where: string,
  keys: { readonly ratio: string; readonly spread: string },
  rest: Omit<KeyRatio, 'label' | 'value' | 'min' | 'max'>,
): KeyRatio {
  const [min, max] = spread(text(summary, keys.spread, where));
  return { label, value: num(summary, keys.ratio, where), min, max, ...rest };
}

export function keyRatios(results: BenchResults): KeyRatio[] {
  const handlers = results.handlers;
  const podSecurity = handlers.find((r) => r.plugin === 'pod-security');
  if (!podSecurity) throw new BenchResultsError('bench/results.json: handlers has no pod-security row');
  const cold = packaged(results);
  const throughput = results.throughput.summary;
  const burst = results.quotaBurst.summary;
  const burstThroughServer = results.quotaBurst.throughServer?.inMemory?.summary;
  const apiserverBurst = results.apiserver?.quotaBurst?.summary;
  const withLogs = handlers
    .filter((r) => r['EMF cost % with logs on'] !== undefined)
    .map((r) => 1 + num(r, 'EMF cost % with logs on', `handlers ${r.plugin}`) / 100);
  return [
    ranged(
      'Handler, pod plugins',
      handlers.filter(isPodRow).map((r) => num(r, 'p50 ratio', `handlers ${r.plugin}`)),
      { target: 1.5, floor: 'JSON.parse + JSON.stringify of the same review' },
    ),
    ranged(
      'Handler, Services, Namespaces, PVCs, Nodes',
      handlers.filter((r) => !isPodRow(r) && r !== podSecurity).map((r) => num(r, 'p50 ratio', `handlers ${r.plugin}`)),
      { floor: 'JSON.parse + JSON.stringify of the same review' },
    ),
    {
      label: 'Handler, PodSecurity (restricted pod, 5 containers)',
      value: num(podSecurity, 'p50 ratio', 'handlers pod-security'),
      min: num(podSecurity, 'p50 ratio', 'handlers pod-security'),
      max: num(podSecurity, 'p50 ratio', 'handlers pod-security'),
      target: 2,
      floor: 'JSON.parse + JSON.stringify of the same review',
    },
    {
      label: 'Handler, MutatingAdmissionPolicy',
      value: round(num(results.map, 'ratio_p50', 'map')),
      min: round(num(results.map, 'ratio_min', 'map')),
      max: round(num(results.map, 'ratio_max', 'map')),
      target: 3,
      floor: 'JSON.parse + JSON.stringify of the same review',
    },
    ranged(
      'Metrics (EMF) with the request log on',
      withLogs.map((v) => round(v, 3)),
      { target: 1.1, floor: 'the same handler with metrics off' },
    ),
    ranged(
      'Cold start, stateless functions (CPU)',
      cold.filter((r) => !stateful(r)).map((r) => num(r, 'cpu ratio', `coldStart ${r.function}`)),
      { target: 1.5, floor: 'bare `node -e 0`' },
    ),
    ranged(
      'Cold start, stateful functions (wall)',
      cold
        .filter((r) => stateful(r) && !isPolicyPlugin(r.function))
        .map((r) => num(r, 'vs target (wall)', `coldStart ${r.function}`)),
      { target: 1, floor: 'bare node plus one raw store round trip' },
    ),
    ...(zips(results).length > 0
      ? [
          ranged(
            'Cold start, packaged zips, stateless (wall)',
            zips(results)
              .filter((r) => !stateful(r))
              .map((r) => num(r, 'wall ratio', `coldStart zip ${r.function}`)),
            { target: 1.2, floor: 'bare `node -e 0`', sitsOn: sizeFloor(cold.filter((r) => !stateful(r))) },
          ),
          ranged(
            'Cold start, packaged zips, stateful (wall)',
            zips(results)
              .filter(stateful)
              .map((r) => num(r, 'vs target (wall)', `coldStart zip ${r.function}`)),
            { target: 1, floor: 'bare node plus one raw store round trip' },
          ),
        ]
      : []),
    ranged(
      'Cold start, policy plugins (CPU)',
      cold.filter((r) => isPolicyPlugin(r.function)).map((r) => num(r, 'cpu ratio', `coldStart ${r.function}`)),
      {
        target: 1.5,
        floor: 'bare `node -e 0`',
        sitsOn: `${sizeFloor(cold.filter((r) => isPolicyPlugin(r.function)))}; beyond it, the CEL library's start-up (its protobuf runtime) and the policies, compiled at start so that a bad configuration fails there (each start's profile: \`profile top self\` in bench/results.json)`,
      },
    ),
    summaryRatio(
      'Quota burst p99, 64 creates against pods: 32',
      burst,
      'quotaBurst.summary',
      { ratio: 'p99 / floor', spread: 'ratio spread' },
      {
        target: 1.5,
        floor: 'the same store calls, uncoordinated',
        sitsOn: `the same calls with each create's first write the one queue append the namespace's creates share (the store applies one item's writes one at a time): the burst is ${num(burst, 'p99 / floor with the shared append', 'quotaBurst.summary')}× that floor`,
      },
    ),
    ...(burstThroughServer
      ? [
          summaryRatio(
            'Quota burst p99, through npm start over mTLS',
            burstThroughServer,
            'quotaBurst.throughServer.inMemory',
            { ratio: 'p99 / floor', spread: 'ratio spread' },
            {
              target: 1.5,
              floor: 'the same store calls, uncoordinated',
              sitsOn: `the same 64 creates through \`npm start\`, each into a namespace of its own so nothing coordinates them (the connections a burst opens, the server's own work): the burst is ${num(burstThroughServer, 'p99 / floor through the server', 'quotaBurst.throughServer.inMemory')}× that floor`,
            },
          ),
        ]
      : []),
    ...(apiserverBurst && typeof apiserverBurst['client p99 / floor'] === 'number'
      ? [
          summaryRatio(
            'Quota burst p99, through kube-apiserver and the webhooks',
            apiserverBurst,
            'apiserver.quotaBurst.summary',
            { ratio: 'client p99 / floor', spread: 'floor ratio spread' },
            {
              target: 1.5,
              floor: `the same creates each into a namespace of its own (${num(apiserverBurst, 'floor p99 / built-in', 'apiserver.quotaBurst.summary')}× the built-in ResourceQuota's burst)`,
            },
          ),
        ]
      : []),
    summaryRatio(
      'Local server throughput',
      throughput,
      'throughput.summary',
      { ratio: 'throughput ratio', spread: 'ratio spread' },
      {
        target: 0.9,
        higherIsBetter: true,
        floor: 'bare Node https with the same mTLS settings',
        sitsOn: throughputGap(throughput),
      },
    ),
  ];
}

const times = (v: number) => `${v}×`;

function rangeText(ratio: KeyRatio): string {
  return ratio.min === ratio.max ? times(ratio.value) : `${times(ratio.value)} (${ratio.min}–${ratio.max})`;
}

const metEverywhere = (ratio: KeyRatio) =>
  ratio.target === undefined || (ratio.higherIsBetter ? ratio.min >= ratio.target : ratio.max <= ratio.target);

function verdict(ratio: KeyRatio): string {
  if (ratio.target === undefined) return 'no target';
  const met = ratio.higherIsBetter ? ratio.value >= ratio.target : ratio.value <= ratio.target;
  const all = metEverywhere(ratio);
  const comparison = `${ratio.higherIsBetter ? '≥' : '≤'} ${ratio.target}×`;
  return `${comparison}: ${all ? 'met' : met ? 'met at the median, not everywhere' : 'not met'}`;
}

const table = (header: readonly string[], rows: readonly (readonly (string | number)[])[]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

const APISERVER_PATHS = ['webhook mTLS', 'webhook capability', 'native', 'native floor'] as const;

/**
 * One row's figure under its name in either shape the bench has written: ratios `/ baseline` (the
 * built-in, or no plugin where there is none) and per-request means, or the first run's `/ built-in`
 * and `mean` names.
 */
function apiserverFigure(
  row: Row,
  key: 'client p50 ms' | 'admission',
  where: string,
): { value: number; ratio: string } {
  const names =
    key === 'admission' ? ['admission ms per request', 'admission mean ms'] : ['client p50 ms', 'client p50 ms'];
  const name = names.find((n) => typeof row[n] === 'number');
  if (!name) throw new BenchResultsError(`bench/results.json: ${where} has no number "${names[0]}"`);
  const ratioName = [`${name} / baseline`, `${name} / built-in`].find((n) => typeof row[n] === 'number');
  if (!ratioName) throw new BenchResultsError(`bench/results.json: ${where} has no "${name} / baseline"`);
  return {
    value: num(row, name, where),
    ratio: `${times(num(row, ratioName, where))} (${text(row, `${ratioName} spread`, where)})`,
  };
}

/** Per plugin: its baseline's client p50, and each other path's client p50 and admission time against it. */
export function apiserverRegion(apiserver: ApiserverResults): string {
  const plugins = [...new Set(apiserver.rows.map((r) => text(r, 'plugin', 'apiserver')))];
  const perRound = apiserver.requests ?? 100;
  const lines = [
    `Measured through kube-apiserver v1.36.2 by the bench's \`apiserver\` section (alone: \`npm run bench -- --only apiserver\`; its date is in bench/results.json's \`apiserver\` section): medians of rounds of ${perRound} requests per path; each path against the baseline round by round (the built-in plugin, or no plugin where kube-apiserver has none), range in brackets. A cell reads client p50 ms, then its ratio; *admission* is the apiserver's admission time per request against the baseline's.`,
    '',
    table(
      ['plugin', 'baseline', 'baseline p50 ms', ...APISERVER_PATHS.flatMap((p) => [p, `${p} admission`])],
      plugins.map((plugin) => {
        const rows = apiserver.rows.filter((r) => r.plugin === plugin);
        const baselineName = typeof rows[0].baseline === 'string' ? rows[0].baseline : 'built-in';
        const baseline = rows.find((r) => r.path === baselineName);
        if (!baseline)
          throw new BenchResultsError(`bench/results.json: apiserver ${plugin} has no ${baselineName} row`);
        const where = `apiserver ${plugin} ${baselineName}`;
        return [
          `\`${plugin}\``,
          baselineName,
          apiserverFigure(baseline, 'client p50 ms', where).value,
          ...APISERVER_PATHS.flatMap((path) => {
            const row = rows.find((r) => r.path === path);
            if (!row) return ['—', '—'];
            const client = apiserverFigure(row, 'client p50 ms', `apiserver ${plugin} ${path}`);
            const admission = apiserverFigure(row, 'admission', `apiserver ${plugin} ${path}`);
            return [`${client.value} ms, ${client.ratio}`, admission.ratio];
          }),
        ];
      }),
    ),
  ];
  if (apiserver.targets?.length)
    lines.push(
      '',
      table(
        ['plugin', 'target', 'ratio (range)', 'verdict', 'the floor it sits on'],
        apiserver.targets.map((t) => [
          `\`${text(t, 'plugin', 'apiserver targets')}\``,
          text(t, 'target', 'apiserver targets'),
          `${times(num(t, 'ratio', 'apiserver targets'))} (${text(t, 'spread', 'apiserver targets')})`,
          text(t, 'verdict', 'apiserver targets'),
          typeof t.floor === 'string' ? t.floor : '—',
        ]),
      ),
    );
  return lines.join('\n');
}

const dollars = (v: number) => `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const thousands = (v: number) => v.toLocaleString('en-US');

/** The two steady rates the page prices, requests per second. */
export const COST_RATES = [10, 100] as const;

/**
 * Per function: what the burst measured, the memory it is deployed with (functions.ts), what that
 * setting buys as an estimate, and a month at 10 and 100 requests a second; the arithmetic once,
 * on the first function. `memoryOf`: the deployed setting (functions.ts's table).
 */
export function costRegion(cost: CostResults, memoryOf: (name: string) => number = functionMemory): string {
  const where = (r: Row) => `cost ${text(r, 'function', 'cost')}`;
  const priced = cost.rows.map((r) => {
    const name = text(r, 'function', 'cost');
    const memory = memoryOf(name);
    const warm = estimatedMs(num(r, 'CPU ms/request', where(r)), memory);
    return {
      row: r,
      name,
      memory,
      warm,
      cold: estimatedMs(num(r, 'cold CPU ms', where(r)), memory),
      months: COST_RATES.map((rate) => monthlyCost(rate, memory, warm)),
    };
  });
  if (priced.length === 0) throw new BenchResultsError('bench/results.json: cost has no rows');
  const first = priced[0];
  const month = first.months[0];
  const gb = first.memory / 1024;
  const requests = Number(first.row.requests ?? 0);
  const rounds = Number(first.row.rounds ?? 0);
  const odd = priced.filter((p) => {
    const statuses = typeof p.row.statuses === 'string' ? p.row.statuses.split(' ') : [];
    return statuses.some((s) => !s.startsWith('200:'));
  });
  return [
    `Measured by \`npm run bench -- --only cost\` (its date is in bench/results.json's \`cost\` section): each function's bundle, loaded by a fresh Node as Lambda loads a CommonJS handler, answered a burst of ${requests} reviews one after another with its request log on${rounds > 1 ? `, medians of ${rounds} rounds` : ''}; the floor is an empty handler loaded and sent the same burst. CPU is user + system time on the bench machine's CPU. *Estimated* figures are computed, not measured on Lambda: CPU ms × ${thousands(ONE_VCPU_MB)} / memory, as Lambda gives a function one vCPU at ${thousands(ONE_VCPU_MB)} MB and a proportional share below it; a stateful function's store round trips come on top of its warm estimate.`,
    '',
    table(
      [
        'function',
        'peak RSS MB (floor)',
        'CPU ms/request (floor)',
        'cold CPU ms (floor)',
        'memory MB',
        'est. warm ms',
        'est. cold start ms',
        ...COST_RATES.map((rate) => `$/month at ${rate}/s (Lambda)`),
      ],
      priced.map((p) => [
        `\`${p.name}\`${odd.includes(p) ? ' †' : ''}`,
        `${num(p.row, 'peak RSS MB', where(p.row))} (${num(p.row, 'floor peak RSS MB', where(p.row))})`,
        `${num(p.row, 'CPU ms/request', where(p.row))} (${num(p.row, 'floor CPU ms/request', where(p.row))})`,
        `${num(p.row, 'cold CPU ms', where(p.row))} (${num(p.row, 'floor cold CPU ms', where(p.row))})`,
        p.memory,
        round(p.warm, 2),
        Math.round(p.cold),
        ...p.months.map((m) => `${dollars(m.total)} (${dollars(m.lambdaDuration + m.lambdaRequests)})`),
      ]),
    ),
    ...(cost.storeCallCpuMs !== undefined
      ? [
          '',
          `A stateful function's CPU per request includes its store calls ([how many](#store-calls-per-request)): one raw store call, a GetItem sent with Node's http on a kept connection to DynamoDB Local and nothing else, took ${cost.storeCallCpuMs} ms of CPU on the same machine.`,
        ]
      : []),
    ...(odd.length > 0
      ? [
          '',
          `† Not every answer of the burst was 200 (${odd.map((p) => `\`${p.name}\`: ${String(p.row.statuses)}`).join('; ')}): the configuration the functions are packaged with does not configure ${odd.length === 1 ? 'it' : 'them'}.`,
        ]
      : []),
    '',
    `Prices: AWS's published ${PRICES.region} on-demand prices (read on the day \`infra/serverless/cost.ts\` names), without free tiers: Lambda on ${ARCHITECTURE} (serverless.yml's architecture) $${PRICES.lambdaGbSecond[ARCHITECTURE]} per GB-second and $${PRICES.lambdaRequestsPerMillion.toFixed(2)} per million requests; API Gateway REST $${PRICES.restApiPerMillion[0][1].toFixed(2)} per million calls (the first ${thousands(PRICES.restApiPerMillion[0][0] / 1e6)} million a month). A month is 30 days. The arithmetic, for \`${first.name}\` at ${COST_RATES[0]} requests a second: ${COST_RATES[0]} × ${thousands(SECONDS_PER_MONTH)} s = ${thousands(month.requests)} requests; each estimated at ${round(first.warm, 2)} ms, billed ${billedMs(first.warm)} ms (Lambda rounds up to the millisecond) at ${first.memory} MB = ${round(gb, 4)} GB, so ${thousands(month.requests)} × ${round(gb, 4)} GB × ${billedMs(first.warm) / 1000} s = ${thousands(round(month.gbSeconds, 0))} GB-s × $${PRICES.lambdaGbSecond[ARCHITECTURE]} = ${dollars(month.lambdaDuration)}; requests ${round(month.requests / 1e6, 2)} million × $${PRICES.lambdaRequestsPerMillion.toFixed(2)} = ${dollars(month.lambdaRequests)}; API Gateway ${round(month.requests / 1e6, 2)} million × $${PRICES.restApiPerMillion[0][1].toFixed(2)} = ${dollars(month.apiGateway)}; in all ${dollars(month.total)} (Lambda's part in brackets in the table).`,
  ].join('\n');
}

/** The local server against its floor: throughput, CPU per request split, and its profile's top entries. */
export function throughputRegion(throughput: BenchResults['throughput']): string {
  const summary = throughput.summary;
  const n = (key: string) => num(summary, key, 'throughput.summary');
  const lines = [
    table(
      ['server', 'requests per second', 'CPU µs per request'],
      [
        ['`npm start` (request log on)', n('npm start req/s'), n('npm start cpu µs/req')],
        ['`npm start`, `LOG_LEVEL=silent`', n('log off req/s'), n('log off cpu µs/req')],
        ['floor: bare Node https, same mTLS settings', n('floor req/s'), n('floor cpu µs/req')],
      ],
    ),
    '',
    `Medians of ${n('rounds')} rounds of ${n('connections')} autocannon connections each. Beside the floor, \`npm start\` spends ${n('gap cpu µs/req')} µs more CPU per request: its request log ${n('gap: request log µs/req')} µs (on minus off), the Lambda handler's work beyond the floor's ${n('gap: handler µs/req')} µs (the handler alone took ${n('handler alone µs/req')} µs a review, the floor's parse and answer alone ${n('floor work alone µs/req')} µs), and the rest of the path, the API Gateway event and the answer, ${n('gap: rest of the path µs/req')} µs.`,
  ];
  const profile = throughput.profile;
  if (profile !== undefined) {
    const entries = (profile.self as Row[]).slice(0, 12);
    lines.push(
      '',
      `\`npm start\` under \`--cpu-prof\` after the rounds (${num(profile, 'requests profiled', 'throughput.profile')} requests; the profiler's own cost included), its heaviest functions by self time:`,
      '',
      table(
        ['function (file, name)', 'µs per request', '% of busy time'],
        entries.map((e) => [
          // tsx, which runs `npm start`, compiles each file anew: the profile's lines are not the source's.
          `\`${text(e, 'name', 'throughput.profile').replace(/:\d+ /, ' ')}\``,
          num(e, 'µs/request', 'throughput.profile'),
          num(e, '% of busy', 'throughput.profile'),
        ]),
      ),
    );
  }
  return lines.join('\n');
}

/** A month of the reader's schedule: one run a minute. */
const READER_RUNS_PER_MONTH = SECONDS_PER_MONTH / 60;

/**
 * The cluster reader at each measured size, what its setting (serverless.yml's memorySize) covers,
 * the setting for a larger cluster, and what a month of runs costs at it. `memory`: the deployed
 * setting.
 */
export function readerRegion(reader: ReaderResults, memory: number = readerMemorySetting()): string {
  const rows = [...reader.rows].sort((a, b) => num(a, 'pods', 'reader') - num(b, 'pods', 'reader'));
  if (rows.length === 0) throw new BenchResultsError('bench/results.json: reader has no rows');
  const where = (r: Row) => `reader ${text(r, 'pods', 'reader')} pods`;
  const largest = rows[rows.length - 1];
  const largestPods = num(largest, 'pods', where(largest));
  const largestRss = num(largest, 'peak RSS MB', where(largest));
  const perThousand = reader.rssMbPer1000Pods;
  // The peak at a pod count, on the line through the largest size with the measured growth.
  const rssAt = (pods: number) => largestRss + (perThousand * (pods - largestPods)) / 1000;
  const covers =
    perThousand > 0
      ? Math.floor((largestPods + ((memory * RSS_HEADROOM - largestRss) / perThousand) * 1000) / 100) * 100
      : undefined;
  const example = 10_000;
  const runSeconds = READER_WATCH_MS / 1000;
  const monthAt = (mb: number) =>
    READER_RUNS_PER_MONTH * runSeconds * (mb / 1024) * PRICES.lambdaGbSecond[ARCHITECTURE];
  const rounds = Number(rows[0].rounds ?? 0);
  const errors = rows.filter((r) => num(r, 'errors', where(r)) > 0);
  return [
    `Measured by \`npm run bench -- --only reader\` (its date is in bench/results.json's \`reader\` section): the reader's handler, built as packaged and loaded by a fresh Node as Lambda loads a CommonJS handler with the deployed function's environment, read a real kube-apiserver v1.36.2 into DynamoDB Local from an empty table, as its first run does: every kind the default configuration's plugins read listed and stored, then watched; a second invocation in the same process resumed from the checkpoint, as the next minute's run does. Each invocation watched ${reader.watchSeconds} s instead of ${runSeconds}: the list, not the watch, grows with the cluster. The cluster: pods of two containers, 25 to a namespace, each namespace with a ResourceQuota, a node per 30 pods. ${rounds > 1 ? `Medians of ${rounds} rounds; the` : 'The'} floor is an empty handler loaded and invoked the same way. CPU is user + system time on the bench machine's CPU; the last column stretches the first run's CPU to the setting's share of a vCPU (an estimate, not a measurement on Lambda), which must stay well within the function's ${READER_TIMEOUT_SECONDS} s.`,
    '',
    table(
      [
        'pods',
        'namespaces',
        'nodes',
        'peak RSS MB (floor)',
        'load CPU ms (floor)',
        'first run CPU ms',
        'first list s',
        'store writes',
        'memory it needs MB',
        `first run CPU at ${memory} MB, s (est.)`,
      ],
      rows.map((r) => [
        thousands(num(r, 'pods', where(r))),
        num(r, 'namespaces', where(r)),
        num(r, 'nodes', where(r)),
        `${num(r, 'peak RSS MB', where(r))} (${num(r, 'floor peak RSS MB', where(r))})`,
        `${num(r, 'load CPU ms', where(r))} (${num(r, 'floor load CPU ms', where(r))})`,
        thousands(num(r, 'first run CPU ms', where(r))),
        num(r, 'first list s', where(r)),
        thousands(num(r, 'store writes', where(r))),
        readerMemoryFor(num(r, 'peak RSS MB', where(r))).memoryMb,
        round(estimatedMs(num(r, 'first run CPU ms', where(r)), memory) / 1000, 1),
      ]),
    ),
    ...(errors.length > 0
      ? [
          '',
          `Runs reported errors at ${errors.map((r) => `${text(r, 'pods', 'reader')} pods`).join(', ')}: those figures are not a clean read.`,
        ]
      : []),
    '',
    `The peak RSS grows by about ${perThousand} MB per 1,000 pods. The reader's setting, ${memory} MB (serverless.yml's \`memorySize\`), holds the peak${covers === undefined ? '' : ` of a cluster up to about ${thousands(covers)} pods`} with a quarter to spare; for a larger one, pass \`--param="memorySize=..."\` with the peak at its pod count over ${RSS_HEADROOM}, rounded up to ${MEMORY_STEP_MB} MB: ${thousands(example)} pods, about ${Math.round(rssAt(example))} MB at peak, need ${readerMemoryFor(rssAt(example)).memoryMb} MB. A run bills about ${runSeconds} s every minute whatever the cluster's size: ${thousands(READER_RUNS_PER_MONTH)} runs a month × ${runSeconds} s × ${round(memory / 1024, 4)} GB × $${PRICES.lambdaGbSecond[ARCHITECTURE]} = ${dollars(monthAt(memory))} a month at ${memory} MB, and ${dollars(monthAt(MEMORY_STEP_MB))} more for each further ${MEMORY_STEP_MB} MB.`,
  ].join('\n');
}

/** The generated regions of docs/performance.md, by name. */
export function performanceRegions(results: BenchResults): Record<string, string> {
  const ratios = keyRatios(results);
  const day = results.date.slice(0, 10);
  const cpu = results.cpuModel ? ` (${results.cpuModel})` : '';
  const cold = packaged(results);
  const sdk = results.coldStart.filter((r) => r.variant === 'AWS SDK client');
  return {
    'performance-run': `Measured on ${day} with Node ${results.node} on ${results.cpus} CPUs${cpu}, by \`npm run bench -- --out bench/results.json --cpu-prof\` (KUBEBUILDER_ASSETS set: the apiserver and reader sections run a real kube-apiserver).`,
    'performance-summary': table(
      ['what', 'ratio: median (range)', 'against', 'target', 'not met: the floor it sits on'],
      ratios.map((r) => [r.label, rangeText(r), r.floor, verdict(r), metEverywhere(r) ? '—' : (r.sitsOn ?? '—')]),
    ),
    'performance-handlers': table(
      ['plugin', 'phase', 'review', 'p50 µs', 'floor p50 µs', 'ratio'],
      results.handlers.map((r) => [
        `\`${r.plugin}\``,
        text(r, 'phase', 'handlers'),
        text(r, 'resource', 'handlers'),
        num(r, 'p50 µs', 'handlers'),
        num(r, 'floor p50 µs', 'handlers'),
        times(num(r, 'p50 ratio', 'handlers')),
      ]),
    ),
    'performance-cold-start': table(
      ['function', 'bundle KB', 'CPU vs bare node', 'size floor: CPU vs bare node', 'wall vs target'],
      cold.map((r) => [
        `\`${r.function}\``,
        num(r, 'bundle KB', `coldStart ${r.function}`),
        times(num(r, 'cpu ratio', `coldStart ${r.function}`)),
        typeof r['size floor cpu ratio'] === 'number' ? times(r['size floor cpu ratio']) : '—',
        stateful(r) ? times(num(r, 'vs target (wall)', `coldStart ${r.function}`)) : '(stateless)',
      ]),
    ),
    'performance-sdk': `With the AWS SDK's DynamoDB client bundled in their place, the same ${sdk.length} stateful functions weigh ${Math.min(...sdk.map((r) => num(r, 'bundle KB', 'coldStart')))}–${Math.max(...sdk.map((r) => num(r, 'bundle KB', 'coldStart')))} KB and start at ${Math.min(...sdk.map((r) => num(r, 'vs target (wall)', 'coldStart')))}–${Math.max(...sdk.map((r) => num(r, 'vs target (wall)', 'coldStart')))}× the stateful target (wall).`,
    'performance-throughput': throughputRegion(results.throughput),
    'performance-store': table(
      ['plugin', 'store calls per request', 'writes', 'dry run: calls', 'dry run: writes', 'operations'],
      results.store
        .filter((r) => typeof r['calls/request'] === 'number')
        .map((r) => [
          `\`${r.plugin}\``,
          num(r, 'calls/request', 'store'),
          num(r, 'writes/request', 'store'),
          num(r, 'dry-run calls', 'store'),
          num(r, 'dry-run writes', 'store'),
          text(r, 'commands', 'store') || '—',
        ]),
    ),
    'performance-cel': [
      `- The demo policy, evaluated in full: ${num(results.cel, 'matching_policy_validate_p50_us', 'cel')} µs p50; one expression: ${num(results.cel, 'expression_eval_p50_us', 'cel')} µs.`,
      `- A request no policy names: ${num(results.cel, 'no_match_1_policy_p50_us', 'cel')} µs with 1 policy loaded, ${num(results.cel, 'no_match_1000_policies_p50_us', 'cel')} µs with 1,000.`,
      `- MutatingAdmissionPolicy's handler, a label-adding ApplyConfiguration on a pod: ${num(results.map, 'label_apply_configuration_pod_handler_p50_us', 'map')} µs p50 against a ${num(results.map, 'parse_floor_p50_us', 'map')} µs floor; a request no policy names: ${num(results.map, 'no_match_1_policy_handler_p50_us', 'map')} µs with 1 policy, ${num(results.map, 'no_match_1000_policies_handler_p50_us', 'map')} µs with 1,000.`,
    ].join('\n'),
    'performance-flood': table(
      ['callers', 'flood', 'flood per second', 'refused', 'accepted', 'real reviews', 'failed', 'p50 ms', 'p99 ms'],
      results.flood.map((r) => [
        text(r, 'mode', 'flood'),
        text(r, 'flood', 'flood'),
        num(r, 'flood attempted/s', 'flood'),
        num(r, 'flood refused', 'flood'),
        num(r, 'flood accepted', 'flood'),
        num(r, 'real sent', 'flood'),
        num(r, 'real failed', 'flood'),
        num(r, 'real p50 ms', 'flood'),
        num(r, 'real p99 ms', 'flood'),
      ]),
    ),
    'performance-apiserver': results.apiserver
      ? apiserverRegion(results.apiserver)
      : 'Not measured yet: `npm run bench -- --only apiserver --merge bench/results.json` (needs KUBEBUILDER_ASSETS).',
    'performance-cost': results.cost
      ? costRegion(results.cost)
      : 'Not measured yet: `npm run bench -- --only cost --merge bench/results.json`.',
    'performance-reader': results.reader
      ? readerRegion(results.reader)
      : 'Not measured yet: `npm run bench -- --only reader --merge bench/results.json` (needs KUBEBUILDER_ASSETS).',
    'performance-logger': table(
      ['request log', 'µs per record (p50)', 'bundle KB'],
      results.logger.map((r) => [
        text(r, 'logger', 'logger'),
        num(r, 'p50 µs per record', 'logger'),
        num(r, 'bundle KB', 'logger'),
      ]),
    ),
  };
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The key ratios as a horizontal bar chart: the median as a bar, the range as a whisker, the target
 * as a dashed red tick. Plain SVG, no script, so GitHub renders it in the page.
 */
export function performanceSvg(results: BenchResults): string {
  const ratios = keyRatios(results);
  const labelWidth = 330;
  const plotWidth = 380;
  const rowHeight = 30;
  const top = 40;
  const height = top + ratios.length * rowHeight + 40;
  const width = labelWidth + plotWidth + 140;
  // A wide spread (a busy machine in one round) would squeeze every bar: the axis stops at 4×, and a
  // whisker that goes further ends in an arrow.
  const scaleMax = Math.min(4, Math.ceil(Math.max(...ratios.flatMap((r) => [r.max, r.target ?? 0])) * 2 + 0.5) / 2);
  const x = (v: number) => round(labelWidth + (Math.min(v, scaleMax) / scaleMax) * plotWidth, 1);
  const ticks = Array.from({ length: scaleMax * 2 + 1 }, (_, i) => i / 2);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">Key ratios against their floors (median, range; dashed red: target)</text>`,
  ];
  for (const t of ticks) {
    parts.push(
      `<line x1="${x(t)}" y1="${top - 6}" x2="${x(t)}" y2="${top + ratios.length * rowHeight}" stroke="#dddddd"/>`,
      `<text x="${x(t)}" y="${top + ratios.length * rowHeight + 16}" text-anchor="middle" fill="#555555">${t}×</text>`,
    );
  }
  ratios.forEach((ratio, i) => {
    const y = top + i * rowHeight;
    const mid = y + rowHeight / 2;
    const label = `${ratio.label}${ratio.higherIsBetter ? ' (higher is better)' : ''}`;
    parts.push(
      `<text x="${labelWidth - 8}" y="${mid + 4}" text-anchor="end">${escapeXml(label)}</text>`,
      `<rect x="${x(0)}" y="${mid - 7}" width="${round(x(ratio.value) - x(0), 1)}" height="14" fill="#4a7fb5"/>`,
      `<line x1="${x(ratio.min)}" y1="${mid}" x2="${x(ratio.max)}" y2="${mid}" stroke="#1f3b57" stroke-width="1.5"/>`,
      `<line x1="${x(ratio.min)}" y1="${mid - 4}" x2="${x(ratio.min)}" y2="${mid + 4}" stroke="#1f3b57" stroke-width="1.5"/>`,
      ratio.max > scaleMax
        ? `<path d="M${x(scaleMax) - 6},${mid - 4} L${x(scaleMax)},${mid} L${x(scaleMax) - 6},${mid + 4}" fill="none" stroke="#1f3b57" stroke-width="1.5"/>`
        : `<line x1="${x(ratio.max)}" y1="${mid - 4}" x2="${x(ratio.max)}" y2="${mid + 4}" stroke="#1f3b57" stroke-width="1.5"/>`,
    );
    if (ratio.target !== undefined)
      parts.push(
        `<line x1="${x(ratio.target)}" y1="${mid - 11}" x2="${x(ratio.target)}" y2="${mid + 11}" stroke="#c0392b" stroke-width="2" stroke-dasharray="3,2"/>`,
      );
    parts.push(
      `<text x="${x(Math.max(ratio.max, ratio.target ?? 0)) + 8}" y="${mid + 4}" fill="#222222">${ratio.value}×${ratio.max > scaleMax ? ` (to ${ratio.max}×)` : ''}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
