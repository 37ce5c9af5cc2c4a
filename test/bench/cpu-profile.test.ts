import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CpuProfile } from './cpu-profile.js';
import { entriesText, readProfile, summarizeProfile } from './cpu-profile.js';

const CWD = '/work/project';
const frame = (functionName: string, url = '', lineNumber = -1) => ({ functionName, url, lineNumber });
const SERVER = `file://${CWD}/infra/local/server.ts`;

// root ─┬─ serve (server.ts:5) ── parse (server.ts:10) ── parse (recursing)
//       ├─ (idle)
//       └─ (garbage collector)
// Each sample stands for the time until the next one: the deltas after the first, then the end.
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 5] },
    { id: 2, callFrame: frame('serve', SERVER, 4), children: [3] },
    { id: 3, callFrame: frame('parse', SERVER, 9), children: [6] },
    { id: 4, callFrame: frame('(idle)') },
    { id: 5, callFrame: frame('(garbage collector)') },
    { id: 6, callFrame: frame('parse', SERVER, 9) },
  ],
  samples: [4, 2, 3, 6, 5, 4],
  timeDeltas: [5_000, 10_000, 20_000, 30_000, 40_000, 50_000],
  startTime: 0,
  endTime: 215_000, // the last sample (idle) stands for 60 ms
};

const names = (entries: { name: string }[]) => entries.map((e) => e.name);

describe('summarizeProfile', () => {
  it('weighs each sample by the time until the next, and leaves idle time out of busy', () => {
    const summary = summarizeProfile(PROFILE, { cwd: CWD });
    expect(summary.ms).toBe(210);
    expect(summary['busy ms']).toBe(140);
    expect(summary.self).toEqual([
      { name: 'infra/local/server.ts:10 parse', ms: 70, '% of busy': 50 },
      { name: '(garbage collector)', ms: 50, '% of busy': 35.7 },
      { name: 'infra/local/server.ts:5 serve', ms: 20, '% of busy': 14.3 },
    ]);
  });

  it('counts a function once per sample in total time, however deep it recurses', () => {
    const { total } = summarizeProfile(PROFILE, { cwd: CWD });
    expect(total.map((e) => [e.name, e.ms])).toEqual([
      ['infra/local/server.ts:5 serve', 90],
      ['infra/local/server.ts:10 parse', 70],
      ['(garbage collector)', 50],
    ]);
  });

  it("lists total time of JavaScript files' functions apart, without V8's and Node's own entries", () => {
    const profile: CpuProfile = {
      ...PROFILE,
      nodes: PROFILE.nodes.map((node) =>
        node.id === 3 ? { ...node, callFrame: frame('writeGeneric', 'node:net', 935) } : node,
      ),
    };
    const { code } = summarizeProfile(profile, { cwd: CWD });
    expect(code.map((e) => [e.name, e.ms])).toEqual([
      ['infra/local/server.ts:5 serve', 90],
      ['infra/local/server.ts:10 parse', 40],
    ]);
  });

  it('adds self time by file, V8 entries standing as their own', () => {
    const { files } = summarizeProfile(PROFILE, { cwd: CWD });
    expect(files.map((e) => [e.name, e.ms])).toEqual([
      ['infra/local/server.ts', 90],
      ['(garbage collector)', 50],
    ]);
  });

  it('counts from the first sample with `from` on its stack, leaving the start-up out', () => {
    const summary = summarizeProfile(PROFILE, { cwd: CWD, from: ' parse' });
    expect(summary.ms).toBe(180);
    expect(summary['busy ms']).toBe(120);
    expect(names(summary.self)).toEqual(['infra/local/server.ts:10 parse', '(garbage collector)']);
  });

  it('says time per request when given how many were served', () => {
    const summary = summarizeProfile(PROFILE, { cwd: CWD, requests: 7_000 });
    expect(summary['busy µs/request']).toBe(20);
    expect(summary.self[0]['µs/request']).toBe(10);
  });

  it('keeps the top entries only, and names node_modules files from the package on', () => {
    const profile: CpuProfile = {
      ...PROFILE,
      nodes: PROFILE.nodes.map((node) =>
        node.id === 2
          ? { ...node, callFrame: frame('runRequest', `file://${CWD}/node_modules/@middy/core/index.js`, 162) }
          : node,
      ),
    };
    const { total } = summarizeProfile(profile, { cwd: CWD, top: 1 });
    expect(names(total)).toEqual(['node_modules/@middy/core/index.js:163 runRequest']);
  });
});

// A cold start in miniature: the handler's bundle requires node:crypto, whose load compiles
// node:stream; the bundle then runs a function of its own; the process idles at the end.
const COLD: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 8] },
    { id: 2, callFrame: frame('', '/var/task/handler.cjs', 0), children: [3, 7] },
    { id: 3, callFrame: frame('', 'node:crypto', 0), children: [4] },
    { id: 4, callFrame: frame('compileForInternalLoader', 'node:internal/bootstrap/realm', 383), children: [5] },
    { id: 5, callFrame: frame('', 'node:stream', 0), children: [6] },
    { id: 6, callFrame: frame('compileForInternalLoader', 'node:internal/bootstrap/realm', 383) },
    { id: 7, callFrame: frame('configure', '/var/task/handler.cjs', 9) },
    { id: 8, callFrame: frame('(idle)') },
  ],
  samples: [3, 4, 6, 7, 7, 8],
  timeDeltas: [0, 1000, 2000, 3000, 500, 1500],
  startTime: 0,
  endTime: 12_000, // the last sample (idle) stands for 4 ms
};

describe('summarizeProfile: the built-in modules a start loaded', () => {
  it('charges a built-in module with what its load compiled, once, under its outermost load', () => {
    // node:crypto: its body 1 ms, the compile under it 2 ms, node:stream's body and compile 3 ms.
    const summary = summarizeProfile(COLD, { cwd: CWD });
    expect(summary.builtins).toEqual([{ name: 'node:crypto', ms: 6, '% of busy': 75 }]);
    expect(summary['busy ms']).toBe(8);
  });

  it('names node:crypto in a real profile of a process that required it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cpu-profile-'));
    try {
      // A file, as a handler is: node -e can load node:crypto before its script runs.
      writeFileSync(join(dir, 'start.cjs'), "require('node:crypto');\n");
      execFileSync(process.execPath, [
        '--cpu-prof',
        '--cpu-prof-interval=50',
        `--cpu-prof-dir=${dir}`,
        '--cpu-prof-name=start.cpuprofile',
        join(dir, 'start.cjs'),
      ]);
      const summary = summarizeProfile(readProfile(join(dir, 'start.cpuprofile')));
      expect(names(summary.builtins)).toContain('node:crypto');
      expect(summary.self.length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes entries as one field of the results', () => {
    const summary = summarizeProfile(COLD, { cwd: '/var/task', top: 2 });
    expect(entriesText(summary.self)).toBe(
      'node:internal/bootstrap/realm:384 compileForInternalLoader 5 ms; handler.cjs:10 configure 2 ms',
    );
  });
});
