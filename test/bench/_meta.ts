import { build } from 'esbuild';
const name = process.argv[2] ?? 'always-pull-images';
const r = await build({ entryPoints: [`functions/${name}/handler.ts`], bundle: true, minify: true, platform: 'node', target: 'node20', format: 'cjs', write: false, metafile: true, logLevel: 'silent' });
const out = Object.values(r.metafile.outputs)[0];
console.log(name, out.bytes);
const byPkg: Record<string, number> = {};
for (const [p, i] of Object.entries(out.inputs)) { const k = p.includes('node_modules/') ? p.split('node_modules/')[1].split('/').slice(0, p.split('node_modules/')[1].startsWith('@') ? 2 : 1).join('/') : p; byPkg[k] = (byPkg[k] ?? 0) + i.bytesInOutput; }
for (const [k, v] of Object.entries(byPkg).sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(String(v).padStart(8), k);
