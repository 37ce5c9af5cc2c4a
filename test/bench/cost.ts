// Cost per function: each plugin's bundle, built with packaging's options (cold-start.ts's bundle),
// loaded by a fresh Node as Lambda loads a CommonJS handler, answers a burst of N realistic reviews
// one after another (as one Lambda instance takes them), with the function's request log and EMF
// line on (written to /dev/null, as Lambda's log capture reads stdout). From inside the process:
// the CPU time (user + system) up to the first answer, the CPU time per warm request, and the peak
// RSS. Beside them, the floor: an empty handler loaded the same way, sent the same burst.
// Stateful functions answer against DynamoDB Local, a fresh table per round, with the state their
// requests need learnt first through their own learning webhook (store.ts's samples).
// From the figures, chooseMemory (infra/serverless/cost.ts) picks each function's memory setting.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { plugins } from '../../functions/index.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import { chooseMemory, estimatedMs } from '../../infra/serverless/cost.js';
import { functionMemory } from '../../infra/serverless/functions.js';
import { packagePluginSet, writePackagedConfiguration } from '../../infra/serverless/packaged-config.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { usesStore } from '../../lib/admission/plugin.js';
import { createTable } from '../support/dynamodb.js';
import { gatewayEvent } from '../support/gateway-event.js';
import { review } from '../support/review.js';
import { bundle, OUT, rawGetItem } from './cold-start.js';
import { sampleReviewFor } from './samples.js';
import { median, round } from './stats.js';
import { SAMPLES } from './store.js';

const DIR = join(OUT, 'cost');
const FLOOR = 'empty-handler.cjs';

/**
 * The child: loads the handler (CommonJS, as Lambda's runtime loads a .cjs handler), answers the
 * events in order and writes its figures to a file (stdout carries the function's own log lines).
 */
const driver = (handlerFile: string, eventsFile: string, outFile: string) =>
  `const fs=require('fs');const cpu=()=>{const u=process.cpuUsage();return (u.user+u.system)/1000};` +
  `const {handler}=require(${JSON.stringify(handlerFile)});` +
  `const events=JSON.parse(fs.readFileSync(${JSON.stringify(eventsFile)},'utf8'));` +
  `const context={getRemainingTimeInMillis:()=>1e4};const statuses={};` +
  `(async()=>{let cold=0,warm=0;for(let i=0;i<events.length;i++){const r=await handler(events[i],context);` +
  `statuses[r.statusCode]=(statuses[r.statusCode]||0)+1;if(i===0){cold=cpu();warm=cold}}` +
  `const u=process.resourceUsage();fs.writeFileSync(${JSON.stringify(outFile)},JSON.stringify({coldCpuMs:cold,` +
  `warmCpuMs:cpu()-warm,warmRequests:events.length-1,peakRssMb:u.maxRSS/1024,statuses}))})()` +
  `.catch(e=>{console.error(e);process.exit(1)})`;

/**
 * The store floor: one GetItem after another with Node's http on a kept connection (a placeholder
 * signature: DynamoDB Local checks none), nothing else; CPU per call after a warm-up of 20.
 */
const storeFloor = (endpoint: string, table: string, calls: number, outFile: string) => {
  const { options, body } = rawGetItem(endpoint, table);
  return (
    `const http=require('http');const fs=require('fs');const agent=new http.Agent({keepAlive:true});` +
    `const one=()=>new Promise((res,rej)=>{const r=http.request({${options},agent},s=>{s.resume();s.on('end',res)});r.on('error',rej);r.end(${body})});` +
    `(async()=>{for(let i=0;i<20;i++)await one();const u0=process.cpuUsage();for(let i=0;i<${calls};i++)await one();` +
    `const u=process.cpuUsage(u0);fs.writeFileSync(${JSON.stringify(outFile)},JSON.stringify({cpuMsPerCall:(u.user+u.system)/1000/${calls}}));agent.destroy()})()` +
    `.catch(e=>{console.error(e);process.exit(1)})`
  );
};

interface ChildFigures {
  readonly coldCpuMs: number;
  readonly warmCpuMs: number;
  readonly warmRequests: number;
  readonly peakRssMb: number;
  readonly statuses: Record<string, number>;
}

function runChild(handlerFile: string, events: unknown[], env: NodeJS.ProcessEnv, tag: string): ChildFigures {
  const eventsFile = resolve(DIR, `${tag}.events.json`);
  const outFile = resolve(DIR, `${tag}.figures.json`);
  writeFileSync(eventsFile, JSON.stringify(events));
  rmSync(outFile, { force: true });
  execFileSync(process.execPath, ['--input-type=commonjs', '-e', driver(resolve(handlerFile), eventsFile, outFile)], {
    env,
    cwd: DIR,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return JSON.parse(readFileSync(outFile, 'utf8')) as ChildFigures;
}

const phasesOf = (plugin: AnyAdmissionPlugin) =>
  [plugin.admit && 'mutate', plugin.validate && 'validate'].filter((p): p is string => Boolean(p));

/**
 * The burst: N events, the plugin's phases in turn (the apiserver calls each webhook it has). A
 * stateful plugin's requests are store.ts's samples, each a new object; a stateless plugin's, the
 * sample review the other benches send. `setup`: what a stateful plugin learns first.
 */
function burstOf(plugin: AnyAdmissionPlugin, n: number, round: number): { setup: unknown[]; events: unknown[] } {
  const name = plugin.metadata.name;
  const phases = phasesOf(plugin);
  const sample = usesStore(plugin.metadata) ? SAMPLES[name] : undefined;
  if (sample) {
    return {
      setup: sample.setup.map((input) => gatewayEvent(`/${name}/learn`, JSON.stringify(review(input)))),
      events: Array.from({ length: n }, (_, i) =>
        gatewayEvent(`/${name}/${phases[i % phases.length]}`, JSON.stringify(review(sample.request(round * n + i)))),
      ),
    };
  }
  const { body } = sampleReviewFor(plugin);
  return {
    setup: [],
    events: Array.from({ length: n }, (_, i) => gatewayEvent(`/${name}/${phases[i % phases.length]}`, body)),
  };
}

export interface CostRow {
  readonly function: string;
  readonly stateful: boolean;
  readonly requests: number;
  readonly rounds: number;
  readonly 'peak RSS MB': number;
  readonly 'floor peak RSS MB': number;
  readonly 'CPU ms/request': number;
  readonly 'floor CPU ms/request': number;
  readonly 'cold CPU ms': number;
  readonly 'floor cold CPU ms': number;
  readonly 'chosen MB': number;
  readonly 'chosen by': string;
  /** functions.ts's setting when measured ('—': none yet). */
  readonly 'deployed MB': number | '—';
  readonly 'est. warm ms at chosen': number;
  readonly 'est. cold start ms at chosen': number;
  readonly statuses: string;
}

export interface CostFigures {
  /** CPU ms of one raw store call from Node (storeFloor), median of the rounds. */
  readonly storeCallCpuMs: number;
  readonly rows: CostRow[];
}

/** `requests` per burst, `rounds` bursts per function (fresh processes; medians). */
export async function benchCost(requests = 200, rounds = 3): Promise<CostFigures> {
  if (requests < 2) throw new Error('cost: a burst needs at least 2 requests (the first is the cold one)');
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, FLOOR), "'use strict';exports.handler=async()=>({statusCode:200,body:''});\n");
  const config = resolve(
    writePackagedConfiguration(packagePluginSet(plugins).packaged, join(DIR, 'admission-configuration.json')),
  );
  const db = await startEmbeddedDynamoDb({});
  const rows: CostRow[] = [];
  let tables = 0;
  try {
    await createTable(db.endpoint, 'bench-cost-floor');
    const storeCalls = Array.from({ length: rounds }, () => {
      const outFile = resolve(DIR, 'store-floor.figures.json');
      execFileSync(
        process.execPath,
        ['--input-type=commonjs', '-e', storeFloor(db.endpoint, 'bench-cost-floor', requests, outFile)],
        { stdio: ['ignore', 'ignore', 'inherit'] },
      );
      return (JSON.parse(readFileSync(outFile, 'utf8')) as { cpuMsPerCall: number }).cpuMsPerCall;
    });
    for (const plugin of plugins) {
      const name = plugin.metadata.name;
      const stateful = usesStore(plugin.metadata);
      const built = await bundle(plugin, 'cost', []);
      const fn: ChildFigures[] = [];
      const floor: ChildFigures[] = [];
      for (let r = 0; r < rounds; r++) {
        const table = `bench-cost-${++tables}`;
        if (stateful) await createTable(db.endpoint, table);
        // As deployed (serverless.yml): the packaged configuration, the request log on, EMF metrics.
        const env = {
          PATH: process.env.PATH,
          ADMISSION_CONFIG: config,
          LOG_LEVEL: 'info',
          AWS_LAMBDA_FUNCTION_NAME: `serverless-admission-bench-${name}`,
          AWS_REGION: 'local',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          DYNAMODB_ENDPOINT: db.endpoint,
          STATE_TABLE: table,
        };
        const burst = burstOf(plugin, requests, r);
        if (burst.setup.length > 0) runChild(join(OUT, built.file), burst.setup, env, `${name}.setup`);
        // Floor and function alternate, so drift on a shared machine hits both alike.
        floor.push(runChild(join(DIR, FLOOR), burst.events, env, `${name}.floor`));
        fn.push(runChild(join(OUT, built.file), burst.events, env, name));
      }
      const perRequest = (f: ChildFigures) => f.warmCpuMs / f.warmRequests;
      const measured = {
        peakRssMb: median(fn.map((f) => f.peakRssMb)),
        cpuMsPerRequest: median(fn.map(perRequest)),
        coldCpuMs: median(fn.map((f) => f.coldCpuMs)),
      };
      const chosen = chooseMemory(measured);
      const deployed = (() => {
        try {
          return functionMemory(name);
        } catch {
          return '—' as const; // a plugin without a setting yet: this run proposes one
        }
      })();
      const statuses = new Map<string, number>();
      for (const f of fn) for (const [s, k] of Object.entries(f.statuses)) statuses.set(s, (statuses.get(s) ?? 0) + k);
      rows.push({
        function: name,
        stateful,
        requests,
        rounds,
        'peak RSS MB': round(measured.peakRssMb, 1),
        'floor peak RSS MB': round(median(floor.map((f) => f.peakRssMb)), 1),
        'CPU ms/request': round(measured.cpuMsPerRequest, 3),
        'floor CPU ms/request': round(median(floor.map(perRequest)), 3),
        'cold CPU ms': round(measured.coldCpuMs, 1),
        'floor cold CPU ms': round(median(floor.map((f) => f.coldCpuMs)), 1),
        'chosen MB': chosen.memoryMb,
        'chosen by': chosen.bound,
        'deployed MB': deployed,
        'est. warm ms at chosen': round(estimatedMs(measured.cpuMsPerRequest, chosen.memoryMb), 2),
        'est. cold start ms at chosen': round(estimatedMs(measured.coldCpuMs, chosen.memoryMb), 0),
        statuses: [...statuses].map(([s, k]) => `${s}:${k}`).join(' '),
      });
    }
    return { storeCallCpuMs: round(median(storeCalls), 3), rows };
  } finally {
    await db.stop();
  }
}
