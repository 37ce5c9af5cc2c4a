// The apiserver's AdmissionConfiguration file, read as the apiserver reads it.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { definePlugin } from '../../lib/admission/plugin.js';
import {
  configurePlugin,
  loadAdmissionConfiguration,
  parseAdmissionConfiguration,
} from '../../lib/config/admission-configuration.js';
import { ConfigError } from '../../lib/config/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
mkdirSync(join(dir, 'plugins'));
writeFileSync(join(dir, 'plugins', 'limits.yaml'), 'apiVersion: example/v1\nkind: Configuration\nlimit: 7\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n';

describe('parseAdmissionConfiguration', () => {
  it('reads inline configuration and path entries, resolving paths against the file', () => {
    const text = `${header}plugins:\n- name: Inline\n  configuration:\n    limit: 3\n- name: FromFile\n  path: plugins/limits.yaml\n- name: Empty\n`;
    const { entries } = parseAdmissionConfiguration(text, join(dir, 'admission.yaml'));
    expect(entries.get('Inline')).toEqual({ limit: 3 });
    expect(entries.get('FromFile')).toEqual({ apiVersion: 'example/v1', kind: 'Configuration', limit: 7 });
    expect(entries.has('Empty')).toBe(false);
  });

  it('prefers path over inline configuration, as upstream does', () => {
    const text = `${header}plugins:\n- name: Both\n  path: plugins/limits.yaml\n  configuration: {limit: 1}\n`;
    expect(parseAdmissionConfiguration(text, join(dir, 'a.yaml')).entries.get('Both')).toMatchObject({ limit: 7 });
  });

  it.each([
    [
      'a wrong kind',
      'apiVersion: apiserver.config.k8s.io/v1\nkind: Config\n',
      /AdmissionConfiguration: kind: must be AdmissionConfiguration/,
    ],
    ['an unknown apiVersion', 'apiVersion: v1\nkind: AdmissionConfiguration\n', /apiVersion: must be one of/],
    ['a nameless entry', `${header}plugins:\n- path: x.yaml\n`, /plugins\[0\]\.name: required/],
    [
      'a missing path',
      `${header}plugins:\n- name: Gone\n  path: nowhere.yaml\n`,
      /^Gone: plugins\[0\]\.path: file .*nowhere\.yaml does not exist/,
    ],
    ['unparseable YAML', `${header}plugins: [\n`, /cannot parse/],
  ])('fails on %s, naming the plugin and field', (_name, text, message) => {
    expect(() => parseAdmissionConfiguration(text, join(dir, 'bad.yaml'))).toThrow(ConfigError);
    expect(() => parseAdmissionConfiguration(text, join(dir, 'bad.yaml'))).toThrow(message);
  });

  it('accepts the legacy apiVersions upstream still reads', () => {
    for (const v of ['apiserver.config.k8s.io/v1alpha1', 'apiserver.k8s.io/v1alpha1']) {
      expect(() =>
        parseAdmissionConfiguration(`apiVersion: ${v}\nkind: AdmissionConfiguration\n`, 'x.yaml'),
      ).not.toThrow();
    }
  });
});

describe('loadAdmissionConfiguration', () => {
  it('fails when ADMISSION_CONFIG names a missing file', () => {
    expect(() => loadAdmissionConfiguration({ ADMISSION_CONFIG: join(dir, 'missing.yaml') })).toThrow(
      /ADMISSION_CONFIG: file .* does not exist/,
    );
  });
});

describe('configurePlugin', () => {
  const limited = definePlugin({
    metadata: {
      upstreamName: 'Limited',
      name: 'limited',
      summary: '',
      writes: false,
      needs: [],
      systemNamespaces: 'exclude',
    },
    configure(raw) {
      const limit = (raw as { limit?: unknown } | undefined)?.limit ?? 10;
      if (typeof limit !== 'number') throw new ConfigError('Limited', 'limit', 'must be a number');
      return { limit };
    },
  });

  it('hands the plugin its own entry, or undefined for upstream defaults', () => {
    const configuration = parseAdmissionConfiguration(
      `${header}plugins:\n- name: Limited\n  configuration: {limit: 4}\n`,
      'x.yaml',
    );
    expect(configurePlugin(limited, configuration)).toEqual({ limit: 4 });
    expect(configurePlugin(limited, parseAdmissionConfiguration(header, 'x.yaml'))).toEqual({ limit: 10 });
  });

  it('lets the plugin fail the start naming itself and the field', () => {
    const configuration = parseAdmissionConfiguration(
      `${header}plugins:\n- name: Limited\n  configuration: {limit: many}\n`,
      'x.yaml',
    );
    expect(() => configurePlugin(limited, configuration)).toThrow('Limited: limit: must be a number');
  });
});
