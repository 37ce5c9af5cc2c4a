// A deployed function starts from the configuration packaging parsed (infra/serverless/
// packaged-config.ts): the same plugins, configured the same way, with no file read from disk and
// no YAML parser. This file ends by switching its process to the package, so it stands alone.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { ConfigError } from '../../lib/config/errors.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import { packagePluginSet, writePackagedConfiguration } from '../../infra/serverless/packaged-config.js';

const dir = mkdtempSync(join(tmpdir(), 'packaged-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
cpSync('config/examples/validating-admission-policy', dir, { recursive: true });
// A `path` entry beside VAP's own `paths`: both are files the functions would otherwise parse.
writeFileSync(
  join(dir, 'pod-node-selector.yaml'),
  'podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n',
);
writeFileSync(
  join(dir, 'admission.yaml'),
  `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionPolicy
  configuration: {paths: [demo-policy.yaml, replica-limit.yaml]}
- name: PodNodeSelector
  path: pod-node-selector.yaml
`,
);
const key = (file: string) => relative(process.cwd(), join(dir, file));

describe('the packaged configuration', () => {
  it('holds every file the plugins read, parsed, keyed by path', () => {
    const { packaged } = packagePluginSet(plugins, join(dir, 'admission.yaml'));
    expect(packaged.admissionConfiguration).toBe(key('admission.yaml'));
    expect(Object.keys(packaged.files).sort()).toEqual(
      ['admission.yaml', 'demo-policy.yaml', 'pod-node-selector.yaml', 'replica-limit.yaml'].map(key).sort(),
    );
    expect(packaged.files[key('pod-node-selector.yaml')]).toEqual([
      { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env=prod' } },
    ]);
  });

  it('fails packaging as a start fails, naming the plugin and the file', () => {
    writeFileSync(
      join(dir, 'broken.yaml'),
      `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodNodeSelector
  path: missing.yaml
`,
    );
    expect(() => packagePluginSet(plugins, join(dir, 'broken.yaml'))).toThrow(ConfigError);
    expect(() => packagePluginSet(plugins, join(dir, 'broken.yaml'))).toThrow(/PodNodeSelector: plugins\[0\]\.path/);
  });

  it('starts the same plugins, configured alike, with the YAML files gone', () => {
    const { set, packaged } = packagePluginSet(plugins, join(dir, 'admission.yaml'));
    const file = writePackagedConfiguration(packaged, join(dir, 'package', 'admission-configuration.json'));
    for (const yaml of ['admission.yaml', 'demo-policy.yaml', 'replica-limit.yaml', 'pod-node-selector.yaml'])
      rmSync(join(dir, yaml));
    const started = loadPluginSet(plugins, { ADMISSION_CONFIG: file });
    const names = (s: typeof set) => activePlugins(s).map((p) => p.plugin.metadata.name);
    expect(names(started)).toEqual(names(set));
    expect(names(started)).toEqual(expect.arrayContaining(['validating-admission-policy', 'pod-node-selector']));
    expect([...started.configuration.entries]).toEqual([...set.configuration.entries]);
    expect(started.configuration.source.file).toBe(key('admission.yaml'));
  });
});
