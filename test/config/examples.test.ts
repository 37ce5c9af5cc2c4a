// Every example under config/examples/ is what `ADMISSION_CONFIG=<file> npm run check-config` reads:
// each must load, and every plugin must accept its entry, as a start would. The examples of the
// OpenShift plugins must also configure them on (an entry that silently disabled a plugin would
// pass check-config and protect nothing).
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';

// image-policy-webhook.yaml names a backend kubeconfig the operator supplies; its own test covers it.
const examples = readdirSync('config/examples')
  .filter((f) => f.endsWith('.yaml') && f !== 'image-policy-webhook.yaml')
  .map((f) => `config/examples/${f}`);

describe('config/examples', () => {
  it.each(examples)('%s configures every plugin', (file) => {
    const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: file });
    for (const plugin of plugins) expect(() => configurePlugin(plugin, configuration)).not.toThrow();
  });

  // An example that left its plugin inactive would pass check-config and protect nothing.
  it.each(plugins.filter((p) => p.metadata.requiresConfiguration || p.metadata.optIn).map((p) => p.metadata.name))(
    'config/examples/%s.yaml turns its plugin on',
    (name) => {
      const active = activePlugins(loadPluginSet(plugins, { ADMISSION_CONFIG: `config/examples/${name}.yaml` })).map(
        (p) => p.plugin.metadata.name,
      );
      expect(active).toContain(name);
    },
  );

  it('origin-pod-node-environment.yaml sets the default node selector', () => {
    const configuration = loadAdmissionConfiguration({
      ADMISSION_CONFIG: 'config/examples/origin-pod-node-environment.yaml',
    });
    const plugin = plugins.find((p) => p.metadata.name === 'origin-pod-node-environment')!;
    expect(configurePlugin(plugin, configuration)).toMatchObject({
      defaultNodeSelector: 'node-role.kubernetes.io/worker=',
    });
  });

  it('limit-ranger.yaml sets a cluster-wide default LimitRange, quantities in canonical form', () => {
    const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/examples/limit-ranger.yaml' });
    const plugin = plugins.find((p) => p.metadata.name === 'limit-ranger')!;
    expect(configurePlugin(plugin, configuration)).toEqual({
      defaultLimitRange: {
        name: 'cluster-default',
        limits: [
          {
            type: 'Container',
            defaultRequest: { cpu: '100m', memory: '128Mi' },
            default: { cpu: '500m', memory: '512Mi' },
            max: { cpu: '4', memory: '8Gi' },
          },
          { type: 'PersistentVolumeClaim', max: { storage: '100Gi' } },
        ],
      },
    });
  });
});
