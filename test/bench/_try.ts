import { benchQuotaBurst } from './quota-burst.js';
process.env.LOG_LEVEL = 'silent';
const r = await benchQuotaBurst(Number(process.argv[2] ?? 2));
console.log(JSON.stringify(r, null, 1));
