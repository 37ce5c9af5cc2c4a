// docs/native-policies.md's table derives from the compilers: every served and native-only plugin
// has a row, and its "Native from" and "Policies" columns are what emit --native gives for the
// shipped examples' configurations.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { plugins as registry } from '../../functions/index.js';
import { nativeOnlyPlugins } from '../../infra/native/native-only.js';
import { planPlugin } from '../../infra/native/plan.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import { loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { configurePlugins } from '../../lib/config/plugins.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import { useAuthorizer } from './support/proof.js';

useAuthorizer(() => false);
const examples = everyPluginActiveConfiguration();
afterAll(() => examples.remove());

const rows = readFileSync('docs/native-policies.md', 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('| ') && !line.startsWith('| Plugin') && !line.startsWith('|---'))
  .map((line) => line.split('|').map((cell) => cell.trim()))
  .map(([, names, from, kinds]) => ({ names: names.split(', '), from, kinds }));

const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: examples.file });
const configured = [
  ...configurePlugins(registry, configuration).plugins,
  ...configurePlugins(nativeOnlyPlugins, configuration).plugins,
];

describe('docs/native-policies.md', () => {
  it.each(configured.map((c) => [c.plugin.metadata.upstreamName, c] as const))(
    '%s has its row, as emitted',
    (name, c) => {
      const matching = rows.filter((r) => r.names.some((n) => n === name || name.endsWith(`/${n}`)));
      expect(matching, name).toHaveLength(1);
      const [row] = matching;
      const plans = ENVIRONMENT_VERSIONS.map((version) => ({ version, plan: planPlugin(c, version) }));
      const first = plans.find((p) => p.plan.objects !== undefined);
      const nativeOnly = nativeOnlyPlugins.includes(c.plugin);
      expect(row.from).toBe(
        first === undefined ? 'webhook only' : `${first.version}${nativeOnly ? ', native only' : ''}`,
      );
      if (first) {
        const kinds = new Set(first.plan.objects?.map((o) => o.kind).filter((k) => !k.endsWith('Binding')));
        expect(row.kinds).toBe(
          [...kinds]
            .map((k) => k.replace('AdmissionPolicy', ''))
            .sort((a, b) => (a === 'Mutating' ? -1 : b === 'Mutating' ? 1 : 0))
            .join(' + '),
        );
      }
    },
  );
});
