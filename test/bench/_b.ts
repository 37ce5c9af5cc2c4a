import { build } from 'esbuild';
for (const [tag, external] of [['full', []], ['noyaml', ['yaml']]] as const) {
  const r = await build({ entryPoints: ['functions/always-pull-images/handler.ts'], bundle: true, minify: true, platform: 'node', target: 'node20', format: 'cjs', outfile: `.local/exp/apis-${tag}.cjs`, metafile: true, logLevel: 'silent', external: [...external] });
  console.log(tag, Object.values(r.metafile.outputs)[0].bytes);
}
