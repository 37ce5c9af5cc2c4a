// `npm run merge-schema -- --from DIR`: regenerates lib/kube/merge-schema.generated.ts from Debian's
// golang-k8s-client-go-dev extracted into DIR (docs/design/dependencies.md, "Where the merge schema comes from").
// With --check, writes nothing and fails if the file differs from what DIR gives.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateFrom, PACKAGE, renderModule } from './generate.js';

const OUT = 'lib/kube/merge-schema.generated.ts';
const USAGE = `Usage: npm run merge-schema -- --from DIR [--check] [--out FILE]

DIR holds ${PACKAGE} as \`dpkg -x ${PACKAGE}_<version>_all.deb DIR\` extracts it
(DIR/usr/share/gocode/src/k8s.io/client-go/...). Writes FILE (default ${OUT});
with --check, only compares FILE with what DIR gives, and exits 1 when they differ.`;

const { values } = parseArgs({
  options: { from: { type: 'string' }, check: { type: 'boolean' }, out: { type: 'string', default: OUT } },
});
if (values.from === undefined) {
  console.error(USAGE);
  process.exit(2);
}
const { version, text } = generateFrom(values.from);
const module = renderModule(version, text);
if (values.check) {
  const same = readFileSync(values.out, 'utf8') === module;
  console.error(`${values.out} ${same ? 'is' : 'differs from'} what ${PACKAGE} ${version} gives`);
  process.exit(same ? 0 : 1);
}
writeFileSync(values.out, module);
console.error(`wrote ${values.out} from ${PACKAGE} ${version}: ${Object.keys(text.kinds).length} apiVersions`);
