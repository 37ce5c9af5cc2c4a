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
import { testPki } from '../support/pki.js';

const dir = mkdtempSync(join(tmpdir(), 'packaged-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
cpSync('config/examples/validating-admission-policy', dir, { recursive: true });
// A `path` entry beside VAP's own `paths`: both are files the functions would otherwise parse.
writeFileSync(
  join(dir, 'pod-node-selector.yaml'),
  'podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n',
);
// ImagePolicyWebhook's backend kubeconfig names its CA, client certificate and key as files,
// which the plugin reads as text: they travel in the package too, so no file ships beside it.
const pki = testPki();
const certificates = {
  'backend-ca.pem': pki.ca.certPem,
  'webhook.crt': pki.client.certPem,
  'webhook.key': pki.client.keyPem,
};
for (const [name, pem] of Object.entries(certificates)) writeFileSync(join(dir, name), pem);
writeFileSync(
  join(dir, 'backend.kubeconfig'),
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'b', cluster: { server: 'https://127.0.0.1:1/r', 'certificate-authority': 'backend-ca.pem' } }],
    users: [{ name: 'u', user: { 'client-certificate': 'webhook.crt', 'client-key': 'webhook.key' } }],
    contexts: [{ name: 'c', context: { cluster: 'b', user: 'u' } }],
    'current-context': 'c',
  }),
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
- name: ImagePolicyWebhook
  configuration: {imagePolicy: {kubeConfigFile: backend.kubeconfig, allowTTL: 50, denyTTL: 50, retryBackoff: 500}}
`,
);
const key = (file: string) => relative(process.cwd(), join(dir, file));

describe('the packaged configuration', () => {
  it('holds every file the plugins read, parsed, keyed by path', () => {
    const { packaged } = packagePluginSet(plugins, join(dir, 'admission.yaml'));
    expect(packaged.admissionConfiguration).toBe(key('admission.yaml'));
    expect(Object.keys(packaged.files).sort()).toEqual(
      ['admission.yaml', 'backend.kubeconfig', 'demo-policy.yaml', 'pod-node-selector.yaml', 'replica-limit.yaml']
        .map(key)
        .sort(),
    );
    expect(packaged.texts).toEqual(Object.fromEntries(Object.entries(certificates).map(([f, pem]) => [key(f), pem])));
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

  it('starts the same plugins, configured alike, with the YAML and certificate files gone', () => {
    const { set, packaged } = packagePluginSet(plugins, join(dir, 'admission.yaml'));
    const file = writePackagedConfiguration(packaged, join(dir, 'package', 'admission-configuration.json'));
    const read = [
      'admission.yaml',
      'demo-policy.yaml',
      'replica-limit.yaml',
      'pod-node-selector.yaml',
      'backend.kubeconfig',
    ];
    for (const name of [...read, ...Object.keys(certificates)]) rmSync(join(dir, name));
    const started = loadPluginSet(plugins, { ADMISSION_CONFIG: file });
    const names = (s: typeof set) => activePlugins(s).map((p) => p.plugin.metadata.name);
    expect(names(started)).toEqual(names(set));
    expect(names(started)).toEqual(
      expect.arrayContaining(['validating-admission-policy', 'pod-node-selector', 'image-policy-webhook']),
    );
    expect([...started.configuration.entries]).toEqual([...set.configuration.entries]);
    expect(started.configuration.source.file).toBe(key('admission.yaml'));
  });
});
