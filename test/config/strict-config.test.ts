// Strict configuration: a typo anywhere fails the start, naming the plugin, the field path and the
// closest known name, and every command agrees on which plugins are active.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { ConfigError } from '../../lib/config/errors.js';
import { closestName } from '../../lib/config/fields.js';
import { activePlugins, configurePlugins, inactivePlugins, unnamedPlugins } from '../../lib/config/plugins.js';
import { checkConfigCommand } from '../../infra/check-config.js';

const dir = mkdtempSync(join(tmpdir(), 'strict-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function admissionFile(entries: unknown[]): string {
  const file = join(dir, `admission-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: entries }),
  );
  return file;
}

function pluginSet(entries: unknown[]) {
  const file = admissionFile(entries);
  return configurePlugins(
    registry,
    parseAdmissionConfiguration(
      stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: entries }),
      file,
    ),
  );
}

function configError(entries: unknown[]): ConfigError {
  try {
    pluginSet(entries);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('closestName', () => {
  it.each([
    ['podNodeSelectorPluginConfg', 'podNodeSelectorPluginConfig'],
    ['efect', 'effect'],
    ['qsp', 'qps'],
    ['Effect', 'effect'],
    ['completelyDifferent', undefined],
  ])('%s → %s', (typo, expected) => {
    expect(
      closestName(typo, [
        'podNodeSelectorPluginConfig',
        'key',
        'operator',
        'value',
        'effect',
        'tolerationSeconds',
        'type',
        'qps',
        'burst',
        'cacheSize',
      ]),
    ).toBe(expected);
  });
});

// One misspelt field per configurable plugin, at the depth where operators write it.
const TYPOS: readonly [plugin: string, configuration: unknown, message: RegExp][] = [
  [
    'PodNodeSelector',
    { podNodeSelectorPluginConfg: { clusterDefaultNodeSelector: 'a=b' } },
    /^PodNodeSelector: podNodeSelectorPluginConfg: unknown field "podNodeSelectorPluginConfg"; did you mean "podNodeSelectorPluginConfig"\?$/,
  ],
  [
    'PodTolerationRestriction',
    { default: [{ key: 'a', operator: 'Exists', efect: 'NoSchedule' }] },
    /^PodTolerationRestriction: default\[0\]\.efect: unknown field "efect"; did you mean "effect"\?$/,
  ],
  [
    'PodTolerationRestriction',
    { whitelst: [] },
    /^PodTolerationRestriction: whitelst: unknown field "whitelst"; did you mean "whitelist"\?$/,
  ],
  [
    'EventRateLimit',
    { limits: [{ type: 'Namespace', qsp: 50, burst: 100 }] },
    /^EventRateLimit: limits\[0\]\.qsp: unknown field "qsp"; did you mean "qps"\?$/,
  ],
  ['EventRateLimit', { limit: [] }, /^EventRateLimit: limit: unknown field "limit"; did you mean "limits"\?$/],
  [
    'ResourceQuota',
    { limitedResources: [{ resource: 'pods', matchContain: ['x'] }] },
    /^ResourceQuota: limitedResources\[0\]\.matchContain: unknown field "matchContain"; did you mean "matchContains"\?$/,
  ],
  [
    'DefaultTolerationSeconds',
    { defaultUnreachableTolerationSecond: 1 },
    /did you mean "defaultUnreachableTolerationSeconds"\?$/,
  ],
  [
    'NamespaceReservation',
    { reservedName: ['a'] },
    /^NamespaceReservation: reservedName: unknown field "reservedName"; did you mean "reservedNames"\?$/,
  ],
  [
    'NodeRestriction',
    { featureGate: {} },
    /^NodeRestriction: featureGate: unknown field "featureGate"; did you mean "featureGates"\?$/,
  ],
  [
    'NodeRestriction',
    { featureGates: { RecoverVolumeExpansionFailur: true } },
    /^NodeRestriction: featureGates\.RecoverVolumeExpansionFailur: unknown field "RecoverVolumeExpansionFailur"; did you mean "RecoverVolumeExpansionFailure"\?$/,
  ],
  [
    'ImagePolicyWebhook',
    { imagePolicy: { kubeConfigFile: 'x', allowTT: 5 } },
    /^ImagePolicyWebhook: imagePolicy\.allowTT: unknown field "allowTT"; did you mean "allowTTL"\?$/,
  ],
  [
    'PodSecurity',
    {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'enforce-verison': 'latest' },
    },
    /^PodSecurity: defaults\.enforce-verison: unknown field "enforce-verison"; did you mean "enforce-version"\?$/,
  ],
  ['AlwaysAdmit', { enabled: true }, /^AlwaysAdmit: enabled: unknown field "enabled"; no fields are supported here$/],
  ['AlwaysDeny', { enabled: true }, /^AlwaysDeny: enabled: unknown field "enabled"; no fields are supported here$/],
  [
    'network.openshift.io/RestrictedEndpointsAdmission',
    { apiVersion: 'network.openshift.io/v1', kind: 'RestrictedEndpointsAdmissionConfig', restrictedCIRDs: [] },
    /^network\.openshift\.io\/RestrictedEndpointsAdmission: restrictedCIRDs: unknown field "restrictedCIRDs"; did you mean "restrictedCIDRs"\?$/,
  ],
  [
    'autoscaling.openshift.io/RunOnceDuration',
    { apiVersion: 'autoscaling.openshift.io/v1', kind: 'RunOnceDurationConfig', activeDeadlineSecondsOveride: 5 },
    /did you mean "activeDeadlineSecondsOverride"\?$/,
  ],
  [
    'scheduling.openshift.io/PodNodeConstraints',
    { apiVersion: 'scheduling.openshift.io/v1', kind: 'PodNodeConstraintsConfig', nodeSelectorLabelBlacklst: ['x'] },
    /did you mean "nodeSelectorLabelBlacklist"\?$/,
  ],
  [
    'scheduling.openshift.io/OriginPodNodeEnvironment',
    { defaultNodeSelecter: 'a=b' },
    /did you mean "defaultNodeSelector"\?$/,
  ],
  ['RuntimeClass', { kubernetesVersoin: '1.37' }, /did you mean "kubernetesVersion"\?$/],
  [
    'autoscaling.openshift.io/ClusterResourceOverride',
    {
      apiVersion: 'autoscaling.openshift.io/v1',
      kind: 'ClusterResourceOverrideConfig',
      cpuRequestToLimitPercentage: 5,
    },
    /did you mean "cpuRequestToLimitPercent"\?$/,
  ],
  [
    'ValidatingAdmissionPolicy',
    { manifest: [] },
    /^ValidatingAdmissionPolicy: manifest: unknown field "manifest"; did you mean "manifests"\?$/,
  ],
  [
    'MutatingAdmissionPolicy',
    { path: ['policies.yaml'] },
    /^MutatingAdmissionPolicy: path: unknown field "path"; did you mean "paths"\?$/,
  ],
  [
    'network.openshift.io/ExternalIPRanger',
    { apiVersion: 'network.openshift.io/v1', kind: 'ExternalIPRangerAdmissionConfig', externalIPNetworkCIDR: [] },
    /^network\.openshift\.io\/ExternalIPRanger: externalIPNetworkCIDR: unknown field "externalIPNetworkCIDR"; did you mean "externalIPNetworkCIDRs"\?$/,
  ],
  [
    'quota.openshift.io/ClusterResourceQuota',
    { unknownNamespace: 'reject' },
    /^quota\.openshift\.io\/ClusterResourceQuota: unknownNamespace: unknown field "unknownNamespace"; the plugin takes no configuration \(a namespace never learned: env CLUSTER_RESOURCE_QUOTA_UNKNOWN_NAMESPACE\)$/,
  ],
  [
    'LimitRanger',
    { defaultLimitRange: { limits: [{ type: 'Container', defaultRequests: { cpu: '100m' } }] } },
    /^LimitRanger: defaultLimitRange\.limits\[0\]\.defaultRequests: unknown field "defaultRequests"; did you mean "defaultRequest"\?$/,
  ],
  [
    'LimitRanger',
    { defaultLimitRanges: {} },
    /^LimitRanger: defaultLimitRanges: unknown field "defaultLimitRanges"; did you mean "defaultLimitRange"\?$/,
  ],
];

describe('strict plugin configuration', () => {
  it.each(TYPOS)('%s refuses %j naming the field and the closest known one', (name, configuration, message) => {
    expect(configError([{ name, configuration }]).message).toMatch(message);
  });

  it('covers every plugin that takes configuration', () => {
    const configurable = registry.filter((p) => p.configure).map((p) => p.metadata.upstreamName);
    const tested = new Set(TYPOS.map(([name]) => name));
    // These two read only their environment variable; they have no entry fields.
    expect(configurable.filter((name) => !tested.has(name))).toEqual(['NamespaceExists', 'NamespaceLifecycle']);
  });
});

describe('AdmissionConfiguration entries', () => {
  it('refuses an entry name that is neither served nor known, with a suggestion', () => {
    expect(configError([{ name: 'PodNodeSelectr' }]).message).toMatch(
      /^AdmissionConfiguration: plugins\[0\]\.name: unknown admission plugin "PodNodeSelectr" in .*; did you mean "PodNodeSelector"\?$/,
    );
    // An entry without configuration is checked too.
    expect(configError([{ name: 'AlwaysPullImage' }]).message).toMatch(/did you mean "AlwaysPullImages"\?$/);
  });

  it('ignores, and lists, entries of upstream plugins this project does not serve', () => {
    const set = pluginSet([
      { name: 'OwnerReferencesPermissionEnforcement' },
      { name: 'ServiceAccount', configuration: { anything: true } },
      { name: 'quota.openshift.io/ValidateClusterResourceQuota' },
    ]);
    expect(set.ignored).toEqual([
      'OwnerReferencesPermissionEnforcement',
      'ServiceAccount',
      'quota.openshift.io/ValidateClusterResourceQuota',
    ]);
  });

  it("refuses unknown fields of an entry, naming the closest of upstream's and the project's fields", () => {
    expect(configError([{ name: 'AlwaysPullImages', configuraton: {} }]).message).toMatch(
      /^AlwaysPullImages: plugins\[0\]\.configuraton: unknown field "configuraton"; did you mean "configuration"\?$/,
    );
    expect(configError([{ name: 'AlwaysPullImages', enforcment: 'Warn' }]).message).toMatch(
      /^AlwaysPullImages: plugins\[0\]\.enforcment: unknown field "enforcment"; did you mean "enforcement"\?$/,
    );
  });
});

describe('one notion of active', () => {
  it('a file that names no plugin: the default-on set (no optIn, no requiresConfiguration, something to judge)', () => {
    const set = pluginSet([]);
    expect(set.explicit).toBe(false);
    const expected = registry
      .filter((p) => p.metadata.requiresConfiguration || p.metadata.optIn || p.inactiveReason !== undefined)
      .map((p) => p.metadata.name);
    expect(inactivePlugins(set).map((p) => p.plugin.metadata.name)).toEqual(expected);
    expect(expected).toEqual(
      expect.arrayContaining([
        'image-policy-webhook',
        'always-deny',
        'namespace-exists',
        'pod-security',
        'validating-admission-policy',
      ]),
    );
    expect(inactivePlugins(set).find((p) => p.plugin.metadata.name === 'image-policy-webhook')!.inactive).toMatch(
      /^off by default, it needs its configuration: add an entry "name: ImagePolicyWebhook" with configuration/,
    );
    expect(inactivePlugins(set).find((p) => p.plugin.metadata.name === 'namespace-exists')!.inactive).toMatch(
      /^off by default \(.*\): add an entry "name: NamespaceExists"/,
    );
    expect(activePlugins(set)).toHaveLength(registry.length - expected.length);
  });

  it('a file that names plugins: exactly those, a bare entry enabling one that needs no configuration', () => {
    const set = pluginSet([{ name: 'NamespaceExists' }, { name: 'AlwaysPullImages' }, { name: 'PodSecurity' }]);
    expect(set.explicit).toBe(true);
    expect(activePlugins(set).map((p) => p.plugin.metadata.name)).toEqual([
      'always-pull-images',
      'namespace-exists',
      'pod-security',
    ]);
    // Left out without a line each: the operator chose.
    expect(inactivePlugins(set)).toEqual([]);
    expect(unnamedPlugins(set)).toHaveLength(registry.length - 3);
    // A named plugin with nothing to judge is still reported.
    const vap = pluginSet([{ name: 'ValidatingAdmissionPolicy' }]);
    expect(activePlugins(vap)).toEqual([]);
    expect(inactivePlugins(vap).map((p) => p.inactive)).toEqual([expect.stringMatching(/no policies to judge/)]);
  });

  it('entries of plugins this project does not serve are ignored, and still count as naming plugins', () => {
    const set = pluginSet([{ name: 'ServiceAccount' }]);
    expect(set.ignored).toEqual(['ServiceAccount']);
    expect(activePlugins(set)).toEqual([]);
  });

  it('a bare entry of a plugin that cannot run without configuration fails, naming the field and an example', () => {
    expect(configError([{ name: 'AlwaysPullImages' }, { name: 'ImagePolicyWebhook' }]).message).toMatch(
      /^ImagePolicyWebhook: plugins\[1\]\.configuration: ImagePolicyWebhook cannot run without its configuration: add configuration \(or path\) to its entry in \S+\.yaml; example: config\/examples\/image-policy-webhook\.yaml$/,
    );
  });
});

describe('npm run check-config', () => {
  const run = (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = checkConfigCommand(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: {} });
    return { code, stdout, stderr };
  };

  it('a file that names none: every plugin once, ok or inactive with what to add', () => {
    const { code, stdout } = run([admissionFile([])]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/names no plugin: serving the default-on set \(\d+ plugins\)/);
    expect(stdout).toContain('ok  AlwaysPullImages (defaults)\n');
    expect(stdout).toMatch(
      /-- {2}ImagePolicyWebhook \(image-policy-webhook\) is inactive: off by default, it needs its configuration/,
    );
    expect(stdout.split('\n').filter((l) => /^(ok|--) /.test(l))).toHaveLength(registry.length);
  });

  it('a file that names plugins: those, the ignored entries, and the others in one line', () => {
    const { code, stdout } = run([
      admissionFile([
        { name: 'PodNodeSelector', configuration: { podNodeSelectorPluginConfig: {} } },
        { name: 'AlwaysPullImages' },
        { name: 'OwnerReferencesPermissionEnforcement' },
      ]),
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/names 2 of the served plugins: serving exactly those \(2 active\)/);
    expect(stdout).toContain('ok  PodNodeSelector (configured)\n');
    expect(stdout).toContain('ok  AlwaysPullImages (configured)\n');
    expect(stdout).toContain('--  OwnerReferencesPermissionEnforcement: not served by this project, entry ignored');
    expect(stdout).toMatch(/^-- {2}not named: AlwaysAdmit, AlwaysDeny, .*ResourceQuota/m);
    expect(stdout.split('\n').filter((l) => /^(ok|--) /.test(l))).toHaveLength(4);
  });

  it('exits 1 on a typo with the suggestion on stderr', () => {
    const { code, stderr } = run([admissionFile([{ name: 'PodNodeSelectr' }])]);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^invalid configuration: AdmissionConfiguration: plugins\[0\]\.name: .*did you mean "PodNodeSelector"\?\n$/,
    );
  });

  it.each(
    readdirSync('config/examples', { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('admission.yaml') || /^[^/]+\.yaml$/.test(f),
    ),
  )('accepts the shipped example config/examples/%s', (file) => {
    const { code, stderr } = run([join('config/examples', file)]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
