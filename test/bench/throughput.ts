// Throughput and p99 through the local server at 16 connections, next to a bare Node https
// server with the same mTLS settings that only parses and answers, run alternately.
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { capturedPodReview } from './samples.js';
import { distribution, median, round, spread } from './stats.js';

interface Round {
  readonly target: string;
  readonly requests: number;
  readonly errors: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
}

function post(agent: Agent, url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function drive(target: string, url: string, agent: Agent, connections: number, seconds: number): Promise<Round> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const t = performance.now();
        try {
          if ((await post(agent, url, capturedPodReview)) !== 200) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const d = distribution(latencies);
  return { target, requests: latencies.length, errors, seconds: round(elapsed, 2), p50: d.p50, p99: d.p99 };
}

export async function benchThroughput(
  options: { connections?: number; seconds?: number; rounds?: number } = {},
): Promise<{ rounds: Round[]; summary: Record<string, unknown> }> {
  const connections = options.connections ?? 16;
  const seconds = options.seconds ?? 4;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/servers.ts'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench servers exited with ${code}`)));
  });
  const { local, floor, pki } = JSON.parse(line) as { local: string; floor: string; pki: string };
  const read = (f: string) => readFileSync(join(pki, f), 'utf8');
  const agent = new Agent({
    keepAlive: true,
    maxSockets: connections,
    ca: read('ca.crt'),
    cert: read('client.crt'),
    key: read('client.key'),
  });
  try {
    const rounds: Round[] = [];
    // Warm both once, then alternate so drift on a shared machine hits both alike.
    await drive('warm-up', `${local}/always-pull-images/mutate?timeout=10s`, agent, connections, 1);
    await drive('warm-up', floor, agent, connections, 1);
    for (let i = 0; i < (options.rounds ?? 4); i++) {
      rounds.push(
        await drive('local server', `${local}/always-pull-images/mutate?timeout=10s`, agent, connections, seconds),
      );
      rounds.push(await drive('floor server', floor, agent, connections, seconds));
    }
    const rate = (target: string) => {
      const mine = rounds.filter((r) => r.target === target);
      return mine.reduce((s, r) => s + r.requests, 0) / mine.reduce((s, r) => s + r.seconds, 0);
    };
    const localRounds = rounds.filter((r) => r.target === 'local server');
    const floorRounds = rounds.filter((r) => r.target === 'floor server');
    const pairRatios = spread(
      localRounds.map((r, i) => r.requests / r.seconds / (floorRounds[i].requests / floorRounds[i].seconds)),
    );
    const summary = {
      connections,
      rounds: localRounds.length,
      'local req/s': round(rate('local server'), 0),
      'floor req/s': round(rate('floor server'), 0),
      'throughput ratio': round(rate('local server') / rate('floor server'), 2),
      'ratio, median of rounds': round(pairRatios.median, 2),
      'ratio spread': `${round(pairRatios.min, 2)}–${round(pairRatios.max, 2)}`,
      'local p50 ms': median(localRounds.map((r) => r.p50)),
      'floor p50 ms': median(floorRounds.map((r) => r.p50)),
      'local p99 ms': Math.max(...rounds.filter((r) => r.target === 'local server').map((r) => r.p99)),
      'floor p99 ms': Math.max(...rounds.filter((r) => r.target === 'floor server').map((r) => r.p99)),
      errors: rounds.reduce((s, r) => s + r.errors, 0),
    };
    return { rounds, summary };
  } finally {
    agent.destroy();
    child.stdin!.end();
    child.kill();
  }
}
