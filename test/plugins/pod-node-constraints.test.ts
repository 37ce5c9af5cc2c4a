// OpenShift's tables (openshift/kubernetes openshift-kube-apiserver/admission/scheduler/
// podnodeconstraints/admission_test.go and apis/podnodeconstraints/v1/defaults_test.go) ported:
// TestPodNodeConstraints (11 cases), TestPodNodeConstraintsPodUpdate,
// TestPodNodeConstraintsNonHandledResources, TestReadConfig and TestDefaults. The fake authorizer
// (only system:serviceaccount:openshift-infra:daemonset-controller may create pods/binding) is our
// allowedUsers. Messages are compared whole, as upstream's checkAdmitError does.
import { describe, expect, it } from 'vitest';
import plugin, { type PodNodeConstraintsConfig } from '../../functions/pod-node-constraints/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { configErrorOf } from '../support/config-error.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { BINDER, POD_NODE_CONSTRAINTS_CASES, PODS, serviceAccount } from '../support/cases/pod-node-constraints.js';

const SOURCE = { file: 'test', baseDir: '.' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as PodNodeConstraintsConfig;
const BASE = { apiVersion: 'scheduling.openshift.io/v1', kind: 'PodNodeConstraintsConfig' };
const FAKE_AUTHORIZER = { allowedUsers: [BINDER] };
/** emptyConfig(): the internal object, not defaulted (no blacklisted label). */
const emptyConfig = () => configure({ ...BASE, nodeSelectorLabelBlacklist: [], ...FAKE_AUTHORIZER });
const testConfig = () => configure({ ...BASE, nodeSelectorLabelBlacklist: ['bogus'], ...FAKE_AUTHORIZER });
const nilConfig = () => configure(undefined);

const pod = (spec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { ...(annotations && { annotations }) },
  spec,
});
const nodeNamePod = () => pod(PODS.nodeNamePod.spec);
const CONFIGS = { empty: emptyConfig, test: testConfig, nil: nilConfig };

describe('TestPodNodeConstraints', () => {
  it.each(POD_NODE_CONSTRAINTS_CASES)('$n: $name', async (c) => {
    const result = await runPhase(
      plugin,
      'validate',
      { namespace: 'default', name: 'test', object: pod(c.pod.spec, c.pod.annotations), userInfo: c.userinfo },
      CONFIGS[c.config](),
    );
    if (c.expectedErrorMsg === '') expect(deniedMessage(result)).toBeUndefined();
    else {
      // admission.NewForbidden(attrs, err)
      expect(deniedMessage(result)).toBe(`pods "test" is forbidden: ${c.expectedErrorMsg}`);
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        details: { name: 'test', kind: 'pods' },
      });
    }
  });
});

describe('TestPodNodeConstraintsPodUpdate', () => {
  it('does not judge pod updates', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        operation: 'UPDATE',
        namespace: 'default',
        name: 'test',
        object: nodeNamePod(),
        oldObject: nodeNamePod(),
        userInfo: serviceAccount('', ''),
      },
      testConfig(),
    );
    expect(deniedMessage(result)).toBeUndefined();
    expect(plugin.metadata.validating!.rules.flatMap((r) => r.operations)).toEqual(['CREATE']);
  });
});

describe('TestPodNodeConstraintsNonHandledResources', () => {
  it('lets a ResourceQuota through', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        kind: { kind: 'ResourceQuota' },
        resource: { resource: 'resourcequotas' },
        namespace: 'default',
        name: 'test',
        object: { kind: 'ResourceQuota', metadata: {} },
        userInfo: serviceAccount('', ''),
      },
      testConfig(),
    );
    expect(deniedMessage(result)).toBeUndefined();
  });

  it('lets pod subresources through', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        subResource: 'status',
        namespace: 'default',
        name: 'test',
        object: nodeNamePod(),
        userInfo: serviceAccount('', ''),
      },
      testConfig(),
    );
    expect(deniedMessage(result)).toBeUndefined();
  });
});

describe('TestReadConfig', () => {
  it('reads nodeSelectorLabelBlacklist', () => {
    expect([
      ...configure({ ...BASE, nodeSelectorLabelBlacklist: ['bogus', 'foo'] }).nodeSelectorLabelBlacklist,
    ]).toEqual(['bogus', 'foo']);
  });
});

describe('TestDefaults', () => {
  it('an absent (or null) blacklist is the hostname label; an empty one stays empty', async () => {
    expect([...configure(BASE).nodeSelectorLabelBlacklist]).toEqual(['kubernetes.io/hostname']);
    expect([...configure({ ...BASE, nodeSelectorLabelBlacklist: null }).nodeSelectorLabelBlacklist]).toEqual([
      'kubernetes.io/hostname',
    ]);
    expect([...configure({ ...BASE, nodeSelectorLabelBlacklist: [] }).nodeSelectorLabelBlacklist]).toEqual([]);
    const result = await runPhase(
      plugin,
      'validate',
      {
        namespace: 'default',
        name: 'test',
        object: pod({ nodeSelector: { 'kubernetes.io/hostname': 'n1', zone: 'a' } }),
        userInfo: serviceAccount('ns', 'app'),
      },
      configure(BASE),
    );
    expect(deniedMessage(result)).toBe(
      'pods "test" is forbidden: node selection by label(s) [kubernetes.io/hostname] is prohibited by policy for your role',
    );
  });
});

describe('the authorizer stand-in', () => {
  it('system:masters may bind by default; allowedGroups replaces the default', async () => {
    const masters = { username: 'admin', groups: ['system:masters'] };
    const input = { namespace: 'default', name: 'test', object: nodeNamePod(), userInfo: masters };
    expect(deniedMessage(await runPhase(plugin, 'validate', input, configure(BASE)))).toBeUndefined();
    expect(
      deniedMessage(await runPhase(plugin, 'validate', input, configure({ ...BASE, allowedGroups: ['ops'] }))),
    ).toBeDefined();
  });

  it('several blacklisted labels are listed sorted, as Go prints a []string', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        namespace: 'default',
        name: 'test',
        object: pod({ nodeSelector: { zz: '1', aa: '2' } }),
        userInfo: serviceAccount('ns', 'app'),
      },
      configure({ ...BASE, nodeSelectorLabelBlacklist: ['zz', 'aa'] }),
    );
    expect(deniedMessage(result)).toBe(
      'pods "test" is forbidden: node selection by label(s) [aa zz] is prohibited by policy for your role',
    );
  });
});

describe('configuration', () => {
  it.each([
    [
      { ...BASE, nodeSelectorLabelBlacklst: ['x'] },
      'nodeSelectorLabelBlacklst',
      'unknown field "nodeSelectorLabelBlacklst"; did you mean "nodeSelectorLabelBlacklist"?',
    ],
    [{ ...BASE, allowedUser: ['x'] }, 'allowedUser', 'unknown field "allowedUser"; did you mean "allowedUsers"?'],
    [{ ...BASE, apiVersion: 'v1' }, 'apiVersion', 'must be scheduling.openshift.io/v1, got "v1"'],
    [{ ...BASE, nodeSelectorLabelBlacklist: 'bogus' }, 'nodeSelectorLabelBlacklist', 'must be a list of strings'],
    [{ ...BASE, allowedGroups: [''] }, 'allowedGroups[0]', 'must be a non-empty string, got ""'],
  ])('%j is refused at %s', (raw, field, detail) => {
    expect(configErrorOf(() => configure(raw)).message).toBe(
      `scheduling.openshift.io/PodNodeConstraints: ${field}: ${detail}`,
    );
  });
});
