// Every example under config/examples/ is what `ADMISSION_CONFIG=<file> npm run check-config` reads:
// each must load, and every plugin must accept its entry, as a start would. The examples of the
// OpenShift plugins must also configure them on (an entry that silently disabled a plugin would
// pass check-config and protect nothing).
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';

// image-policy-webhook.yaml names a backend kubeconfig the operator supplies; its own test covers it.
const examples = readdirSync('config/examples')
  .filter((f) => f.endsWith('.yaml') && f !== 'image-policy-webhook.yaml')
  .map((f) => `config/examples/${f}`);

describe('config/examples', () => {
  it.each(examples)('%s configures every plugin', (file) => {
    const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: file });
    for (const plugin of plugins) expect(() => configurePlugin(plugin, configuration)).not.toThrow();
  });

  it.each([
    ['always-admit', 'AlwaysAdmit'],
    ['always-deny', 'AlwaysDeny'],
    ['restricted-endpoints-admission', 'network.openshift.io/RestrictedEndpointsAdmission'],
    ['run-once-duration', 'autoscaling.openshift.io/RunOnceDuration'],
    ['pod-node-constraints', 'scheduling.openshift.io/PodNodeConstraints'],
    ['cluster-resource-override', 'autoscaling.openshift.io/ClusterResourceOverride'],
  ])('%s.yaml enables %s', (name, upstreamName) => {
    const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: `config/examples/${name}.yaml` });
    const plugin = plugins.find((p) => p.metadata.upstreamName === upstreamName)!;
    expect(configurePlugin<{ enabled: boolean }>(plugin, configuration).enabled).toBe(true);
  });

  it('origin-pod-node-environment.yaml sets the default node selector', () => {
    const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: 'config/examples/origin-pod-node-environment.yaml' });
    const plugin = plugins.find((p) => p.metadata.name === 'origin-pod-node-environment')!;
    expect(configurePlugin(plugin, configuration)).toMatchObject({ defaultNodeSelector: 'node-role.kubernetes.io/worker=' });
  });
});
