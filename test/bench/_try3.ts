import { quotaBurst } from './quota-burst.js';
import { createStateTable, localDynamoDbClient } from '../../lib/state/index.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
process.env.LOG_LEVEL = 'silent';
const db = await startEmbeddedDynamoDb({});
const c = localDynamoDbClient(db.endpoint); await createStateTable(c, 'tbl');
const log: [string, number, number][] = [];
(globalThis as any).__log = log;
for (let r = 0; r < 3; r++) {
  log.length = 0;
  (globalThis as any).__t0 = performance.now();
  const b = await quotaBurst(db.endpoint, 'tbl', `ns${r}`, 64, 32, 10);
  const by: Record<string, number[]> = {};
  for (const [cmd, start, end] of log) (by[cmd] ??= []).push(Math.round(end - start));
  const sum = Object.fromEntries(Object.entries(by).map(([k, v]) => { v.sort((a, b) => a - b); return [k, { n: v.length, p50: v[v.length >> 1], max: v[v.length - 1] }]; }));
  console.log(JSON.stringify({ p50: b.p50, p99: b.p99, sum }));
}
c.destroy(); await db.stop();
