// Where a cold start's CPU went, from one `node --cpu-prof` profile (V8's .cpuprofile JSON): the
// functions with the most self time, and each built-in module the process compiled with the time
// spent loading it (its own body and everything it loaded in turn). The bench records both beside
// a function's figures, so a start above its target names what it pays for.

/** The parts of V8's CPU profile format read here. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
      readonly columnNumber: number;
    };
    readonly children?: readonly number[];
  }[];
  /** The node sampled at each tick. */
  readonly samples: readonly number[];
  /** Microseconds from the previous sample to this one (the first from the profile's start). */
  readonly timeDeltas: readonly number[];
}

export interface ProfileEntry {
  readonly name: string;
  readonly ms: number;
}

export interface ProfileSummary {
  /** Every sample's time but the idle ones. */
  readonly totalMs: number;
  /** The functions with the most self time, heaviest first. */
  readonly topSelf: readonly ProfileEntry[];
  /** Built-in modules (`node:*`) loaded, each with the time under its outermost load, heaviest first. */
  readonly builtins: readonly ProfileEntry[];
}

const fileName = (url: string) => url.slice(url.lastIndexOf('/') + 1);

/** `name file:line`; V8's names for its own work ((program), (garbage collector)) as they are. */
function frameName(frame: CpuProfile['nodes'][number]['callFrame']): string {
  if (frame.url === '') return frame.functionName || '(anonymous)';
  return `${frame.functionName || '(anonymous)'} ${fileName(frame.url)}:${frame.lineNumber + 1}`;
}

/** A public built-in module's body: the top frame of `node:x`, line 0 (not Node's `node:internal/`). */
const builtinBody = (frame: CpuProfile['nodes'][number]['callFrame']) =>
  frame.url.startsWith('node:') &&
  !frame.url.startsWith('node:internal/') &&
  frame.functionName === '' &&
  frame.lineNumber === 0
    ? frame.url
    : undefined;

export function summarizeProfile(profile: CpuProfile, top = 8): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // A sample's time is the delta to the next sample; the last sample's is unknown (0).
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  });

  let totalMs = 0;
  const selfByName = new Map<string, number>();
  const builtins = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id);
    if (node === undefined || node.callFrame.functionName === '(idle)') continue;
    totalMs += ms;
    const name = frameName(node.callFrame);
    selfByName.set(name, (selfByName.get(name) ?? 0) + ms);
    // Charged to the outermost built-in module body above this sample, if any.
    let outermost: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      const body = frame && builtinBody(frame);
      if (body !== undefined) outermost = body;
    }
    if (outermost !== undefined) builtins.set(outermost, (builtins.get(outermost) ?? 0) + ms);
  }
  const heaviest = (entries: Map<string, number>, count: number) =>
    [...entries]
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, ms]) => ({ name, ms: Math.round(ms * 100) / 100 }));
  return {
    totalMs: Math.round(totalMs * 100) / 100,
    topSelf: heaviest(selfByName, top),
    builtins: heaviest(builtins, Number.POSITIVE_INFINITY),
  };
}

/** `a 1.2 ms; b 0.8 ms`: a summary's entries as one field of the results JSON. */
export const entriesText = (entries: readonly ProfileEntry[]): string =>
  entries.map((e) => `${e.name} ${e.ms} ms`).join('; ');
