import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CpuProfile } from './cpu-profile.js';
import { entriesText, summarizeProfile } from './cpu-profile.js';

const frame = (id: number, functionName: string, url: string, lineNumber: number, children: number[] = []) => ({
  id,
  callFrame: { functionName, url, lineNumber, columnNumber: 0 },
  children,
});

// A cold start in miniature: the handler's bundle requires node:crypto, whose load compiles
// node:stream; the bundle then runs a function of its own; the process idles at the end.
const PROFILE: CpuProfile = {
  nodes: [
    frame(1, '(root)', '', -1, [2, 8]),
    frame(2, '', '/var/task/handler.cjs', 0, [3, 7]),
    frame(3, '', 'node:crypto', 0, [4]),
    frame(4, 'compileForInternalLoader', 'node:internal/bootstrap/realm', 383, [5]),
    frame(5, '', 'node:stream', 0, [6]),
    frame(6, 'compileForInternalLoader', 'node:internal/bootstrap/realm', 383),
    frame(7, 'configure', '/var/task/handler.cjs', 9),
    frame(8, '(idle)', '', -1),
  ],
  // Each sample's time is the next delta (µs).
  samples: [3, 4, 6, 7, 7, 8, 2],
  timeDeltas: [0, 1000, 2000, 3000, 500, 1500, 4000],
};

describe('summarizeProfile', () => {
  const summary = summarizeProfile(PROFILE);

  it('charges a built-in module with what its load compiled, once, under its outermost load', () => {
    // node:crypto: its body 1 ms, the compile under it 2 ms, node:stream's compile 3 ms.
    expect(summary.builtins).toEqual([{ name: 'node:crypto', ms: 6 }]);
  });

  it('ranks functions by self time, adding samples of one function, leaving idle time out', () => {
    expect(summary.topSelf).toEqual([
      { name: 'compileForInternalLoader realm:384', ms: 5 },
      { name: 'configure handler.cjs:10', ms: 2 },
      { name: '(anonymous) node:crypto:1', ms: 1 },
    ]);
    // The idle sample (4 ms) is not time the start spent; the last sample's length is unknown.
    expect(summary.totalMs).toBe(8);
  });

  it('keeps only the heaviest entries asked for', () => {
    expect(summarizeProfile(PROFILE, 1).topSelf).toEqual([{ name: 'compileForInternalLoader realm:384', ms: 5 }]);
  });

  it('writes entries as one field', () => {
    expect(entriesText(summary.topSelf.slice(0, 2))).toBe(
      'compileForInternalLoader realm:384 5 ms; configure handler.cjs:10 2 ms',
    );
  });
});

describe('summarizeProfile on a real profile', () => {
  it('names node:crypto in a process that required it', () => {
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
      const summary = summarizeProfile(JSON.parse(readFileSync(join(dir, 'start.cpuprofile'), 'utf8')));
      expect(summary.builtins.map((b) => b.name)).toContain('node:crypto');
      expect(summary.topSelf.length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
