// Reads a V8 CPU profile (`node --cpu-prof` writes one .cpuprofile per process at exit) and says
// where the samples went: self time by function (file:line function) and by file, and total time
// (the function or anything it called) by function. `npx tsx test/bench/cpu-profile.ts FILE [N
// [FROM [REQUESTS]]]` prints the top N of each, from the first sample in FROM (a function's name),
// per request when given how many were served; the throughput bench keeps the top entries of `npm start`'s profile.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  /** 0-based, as V8 writes it. */
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas?: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface ProfileEntry {
  /** `file:line function`, the file relative to the working directory; V8's own entries as V8 names them. */
  readonly name: string;
  readonly ms: number;
  /** Of the time the main thread was busy (not `(idle)`, waiting for events). */
  readonly '% of busy': number;
  /** With `requests`: the time per request served while profiled. */
  readonly 'µs/request'?: number;
}

export interface ProfileSummary {
  /** The time the summary covers (from `from`'s first sample), and how much of it was busy. */
  readonly ms: number;
  readonly 'busy ms': number;
  /** With `requests`: busy time per request. */
  readonly 'busy µs/request'?: number;
  /** Self time by function. */
  readonly self: ProfileEntry[];
  /** Self time by file (V8's (garbage collector), (program) and the like stand as files). */
  readonly files: ProfileEntry[];
  /** Total time by function: the samples in which it was anywhere on the stack, counted once each. */
  readonly total: ProfileEntry[];
  /** Total time by function of JavaScript files (the project's and its packages'): Node's internals and V8's entries left out. */
  readonly code: ProfileEntry[];
  /**
   * Each public built-in module (`node:crypto`, not `node:internal/...`) the process loaded, with
   * the time under its outermost load (its body and every module it loaded in turn): what a cold
   * start pays for what it requires.
   */
  readonly builtins: ProfileEntry[];
}

/** A public built-in module's body (the top frame of `node:x`, line 0): the module's name, else undefined. */
function builtinBody(frame: CallFrame): string | undefined {
  return frame.url.startsWith('node:') &&
    !frame.url.startsWith('node:internal/') &&
    frame.functionName === '' &&
    frame.lineNumber === 0
    ? frame.url
    : undefined;
}

/** V8's pseudo-frames: not code, but the time spent outside it. */
const IDLE = '(idle)';

function fileOf(url: string, cwd: string): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const shown = path.startsWith('/') ? relative(cwd, path) : path;
  // node_modules paths are long; what matters is the package and the file.
  const modules = shown.lastIndexOf('node_modules/');
  return modules === -1 ? shown : shown.slice(modules);
}

function frameName(frame: CallFrame, cwd: string): string {
  const file = fileOf(frame.url, cwd);
  const fn = frame.functionName || '(anonymous)';
  return file === '' ? fn : `${file}:${frame.lineNumber + 1} ${fn}`;
}

/** A function of a JavaScript file: not Node's own (`node:`), nor V8's entries (`(program)`, `writev`). */
function isCode(name: string): boolean {
  return name.includes(':') && !name.startsWith('node:');
}

function fileName(frame: CallFrame, cwd: string): string {
  return fileOf(frame.url, cwd) || frame.functionName || '(anonymous)';
}

export interface SummaryOptions {
  /** How many entries each list keeps. */
  readonly top?: number;
  /**
   * Counts only the samples from the first one with a frame whose `file:line function` contains
   * this text (the first request served, say): a server's start-up (loading and compiling its
   * modules) is not what it spends under load.
   */
  readonly from?: string;
  /** What file names are shown relative to. */
  readonly cwd?: string;
  /** The requests served in the time the summary covers: each entry says its µs per request. */
  readonly requests?: number;
}

/** Self and total time by function and by file, and the built-in modules' loads: the `top` largest of each. */
export function summarizeProfile(profile: CpuProfile, options: SummaryOptions = {}): ProfileSummary {
  const { top = 15, from, cwd = process.cwd(), requests } = options;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stackOf = (id: number): CallFrame[] => {
    const frames: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame !== undefined && frame.functionName !== '(root)') frames.push(frame);
    }
    return frames;
  };
  let first = 0;
  if (from !== undefined) {
    const marks = new Set(
      profile.nodes.filter((node) => frameName(node.callFrame, cwd).includes(from)).map((node) => node.id),
    );
    const marked = (id: number) => {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (marks.has(at)) return true;
      return false;
    };
    first = profile.samples.findIndex(marked);
    if (first === -1) first = profile.samples.length;
  }
  // A sample stands for the time until the next one (as Chrome's DevTools count it): under load
  // the sampler is late as often as not, so counting samples would weigh the late ones too little.
  const deltas = profile.timeDeltas;
  const durationOf = (i: number): number => {
    if (deltas === undefined || deltas.length !== profile.samples.length) return 1_000; // as if 1 ms apart
    if (i + 1 < deltas.length) return Math.max(0, deltas[i + 1]);
    let at = profile.startTime;
    for (const delta of deltas) at += delta;
    return Math.max(0, profile.endTime - at);
  };
  const hits = new Map<number, number>(); // node id → µs
  let counted = 0;
  for (let i = first; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    const duration = durationOf(i);
    hits.set(id, (hits.get(id) ?? 0) + duration);
    counted += duration;
  }

  const self = new Map<string, number>();
  const files = new Map<string, number>();
  const total = new Map<string, number>();
  const builtins = new Map<string, number>();
  let idle = 0;
  for (const [id, us] of hits) {
    const node = byId.get(id);
    if (node === undefined) continue;
    if (node.callFrame.functionName === IDLE) idle += us;
    const name = frameName(node.callFrame, cwd);
    self.set(name, (self.get(name) ?? 0) + us);
    const file = fileName(node.callFrame, cwd);
    files.set(file, (files.get(file) ?? 0) + us);
    // Every function on the sample's stack once, however often it recurses.
    const stack = stackOf(id);
    const onStack = new Set(stack.map((frame) => frameName(frame, cwd)));
    for (const name of onStack) total.set(name, (total.get(name) ?? 0) + us);
    const loads = stack.map(builtinBody).filter((module) => module !== undefined);
    const outermost = loads.at(-1);
    if (outermost !== undefined) builtins.set(outermost, (builtins.get(outermost) ?? 0) + us);
  }
  const busy = counted - idle;
  const round1 = (x: number) => Math.round(x * 10) / 10;
  const perRequest = (us: number) => (requests ? { 'µs/request': round1(us / requests) } : {});
  const ranked = (times: Map<string, number>): ProfileEntry[] =>
    [...times]
      .filter(([name]) => name !== IDLE)
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: round1(us / 1000),
        '% of busy': busy === 0 ? 0 : round1((100 * us) / busy),
        ...perRequest(us),
      }));
  return {
    ms: round1(counted / 1000),
    'busy ms': round1(busy / 1000),
    ...(requests ? { 'busy µs/request': round1(busy / requests) } : {}),
    self: ranked(self),
    files: ranked(files),
    total: ranked(total),
    code: ranked(new Map([...total].filter(([name]) => isCode(name)))),
    builtins: ranked(builtins),
  };
}

/** `name 1.2 ms; name 0.8 ms`: entries as one field of the results JSON. */
export const entriesText = (entries: readonly ProfileEntry[]): string =>
  entries.map((e) => `${e.name} ${e.ms} ms`).join('; ');

export function readProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top, from, requests] = process.argv.slice(2);
  if (file === undefined) {
    process.stderr.write('Usage: npx tsx test/bench/cpu-profile.ts FILE.cpuprofile [TOP [FROM [REQUESTS]]]\n');
    process.exit(2);
  }
  const summary = summarizeProfile(readProfile(file), {
    top: Number(top ?? 25),
    from: from || undefined,
    requests: requests === undefined ? undefined : Number(requests),
  });
  const lines = (title: string, entries: ProfileEntry[]) => [
    `${title}:`,
    ...entries.map(
      (e) =>
        `  ${String(e['% of busy']).padStart(5)}%  ${e['µs/request'] === undefined ? '' : `${String(e['µs/request']).padStart(5)} µs  `}${e.name}`,
    ),
  ];
  process.stdout.write(
    [
      `${summary.ms} ms profiled, ${summary['busy ms']} busy${summary['busy µs/request'] === undefined ? '' : ` (${summary['busy µs/request']} µs/request)`}; % of busy`,
      ...lines('self, by function', summary.self),
      ...lines('self, by file', summary.files),
      ...lines('total, by function', summary.total),
      ...lines('total, by function of JavaScript files', summary.code),
      ...lines('built-in modules loaded, with what they loaded', summary.builtins),
      '',
    ].join('\n'),
  );
}
