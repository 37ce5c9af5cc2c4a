// One declaration per plugin: the registry, each function folder, each handler and the metadata
// must agree, because the local server, the emitted configuration and serverless.yml derive from
// them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plugins } from '../functions/index.js';
import { kebabCase } from '../lib/admission/plugin.js';

const folders = readdirSync(new URL('../functions/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

describe('the plugin registry', () => {
  it('lists every function folder exactly once', () => {
    expect(plugins.map((p) => p.metadata.name).sort()).toEqual(folders);
  });

  it.each(plugins.map((p) => [p.metadata.name, p] as const))(
    '%s: name, phases and webhook settings agree with its logic',
    (name, plugin) => {
      const { metadata } = plugin;
      const upstream = metadata.upstreamName.replace(/^[\w.-]+\//, ''); // network.openshift.io/ExternalIPRanger
      expect(name).toBe(kebabCase(upstream));
      expect(Boolean(metadata.mutating)).toBe(Boolean(plugin.admit));
      expect(Boolean(metadata.validating)).toBe(Boolean(plugin.validate));
      for (const phase of [metadata.mutating, metadata.validating]) {
        if (!phase) continue;
        expect(phase.timeoutSeconds).toBeGreaterThanOrEqual(1);
        expect(phase.timeoutSeconds).toBeLessThanOrEqual(10);
        expect(['Fail', 'Ignore']).toContain(phase.failurePolicy);
        for (const rule of phase.rules) {
          expect(rule.resources.some((r) => /^(leases|tokenreviews|subjectaccessreviews)(\/|$)/.test(r))).toBe(false);
          expect(rule.operations.length).toBeGreaterThan(0);
        }
      }
      expect(metadata.summary.length).toBeGreaterThan(10);
    },
  );

  it.each(folders)('%s/handler.ts is the few-line composition of its own plugin', (folder) => {
    const file = new URL(`../functions/${folder}/handler.ts`, import.meta.url);
    expect(existsSync(file)).toBe(true);
    const source = readFileSync(file, 'utf8');
    // Stateful plugins take the store's ports; only their bundles import the AWS SDK.
    const stateful = plugins.find((p) => p.metadata.name === folder)!.metadata;
    const factory =
      stateful.writes || stateful.needs.length > 0 ? 'createStatefulAdmissionHandler' : 'createAdmissionHandler';
    expect(source).toContain(`export const handler = ${factory}(`);
    expect(source).toMatch(/from '\.\/plugin\.js'/);
    expect(source.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(6);
  });
});
