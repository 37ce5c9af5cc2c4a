// Upstream's tables (plugin/pkg/admission/defaulttolerationseconds/admission_test.go) ported:
// TestForgivenessAdmission, TestHandles; plus the configuration that replaces upstream's flags, the
// validating twin, other resources and subresources, and v1beta1. Every mutation goes through
// mutateIdempotently.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/default-toleration-seconds/plugin.js';
import type { ConfigSource } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { configurePlugin, parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
import { itHandles, itLeavesAlone, otherResources } from '../support/handles.js';
import {
  DEPRECATED_NOT_READY,
  FORGIVENESS_CASES,
  NOT_READY,
  UNREACHABLE,
  noExecute,
} from '../support/cases/default-toleration-seconds.js';

const source: ConfigSource = { file: 'test.yaml', baseDir: '.' };
const defaults = plugin.configure!(undefined, source);

type Spec = { tolerations?: unknown[] };
const pod = (tolerations?: readonly unknown[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'name', namespace: 'foo' },
  spec: { containers: [{ name: 'c', image: 'i' }], ...(tolerations ? { tolerations } : {}) },
});
const tolerationsOf = (object: KubeObject | null) => (object!.spec as Spec).tolerations;

describe('TestForgivenessAdmission', () => {
  it.each(FORGIVENESS_CASES)('$description', async ({ requested, expected }) => {
    const result = await mutateIdempotently(plugin, { object: pod(requested) }, defaults);
    expect(tolerationsOf(result.patchedObject)).toEqual(expected);
    for (const op of result.patch) expect(op.path).toMatch(/^\/spec\/tolerations(\/|$)/);
    if (JSON.stringify(expected) === JSON.stringify(requested)) expect(result.patch).toEqual([]);
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { object: result.patchedObject }, defaults)),
    ).toBeUndefined();
  });

  it('does not look at the operator: an Equal toleration for not-ready counts', async () => {
    const requested = [{ key: NOT_READY, operator: 'Equal', value: 'x', effect: 'NoExecute' }];
    const result = await mutateIdempotently(plugin, { object: pod(requested) }, defaults);
    expect(tolerationsOf(result.patchedObject)).toEqual([...requested, noExecute(UNREACHABLE, 300)]);
  });

  it('a NoSchedule toleration for not-ready does not count', async () => {
    const requested = [{ key: NOT_READY, operator: 'Exists', effect: 'NoSchedule' }];
    const result = await mutateIdempotently(plugin, { object: pod(requested) }, defaults);
    expect(tolerationsOf(result.patchedObject)).toEqual([
      ...requested,
      noExecute(NOT_READY, 300),
      noExecute(UNREACHABLE, 300),
    ]);
  });

  it('mutates on UPDATE too', async () => {
    const result = await mutateIdempotently(plugin, { operation: 'UPDATE', object: pod(), oldObject: pod() }, defaults);
    expect(tolerationsOf(result.patchedObject)).toEqual([noExecute(NOT_READY, 300), noExecute(UNREACHABLE, 300)]);
  });
});

describe('configuration (upstream: --default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds)', () => {
  const header = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n';

  it('defaults to 300 and 300', () => {
    expect(defaults).toEqual({ defaultNotReadyTolerationSeconds: 300, defaultUnreachableTolerationSeconds: 300 });
  });

  it('reads both from the AdmissionConfiguration entry and uses them', async () => {
    const configuration = parseAdmissionConfiguration(
      `${header}plugins:\n- name: DefaultTolerationSeconds\n  configuration: {defaultNotReadyTolerationSeconds: 60, defaultUnreachableTolerationSeconds: 0}\n`,
      'x.yaml',
    );
    const config = configurePlugin(plugin, configuration);
    expect(config).toEqual({ defaultNotReadyTolerationSeconds: 60, defaultUnreachableTolerationSeconds: 0 });
    const result = await mutateIdempotently(plugin, { object: pod() }, config);
    expect(tolerationsOf(result.patchedObject)).toEqual([noExecute(NOT_READY, 60), noExecute(UNREACHABLE, 0)]);
  });

  it('keeps the default for a field left out', () => {
    expect(plugin.configure!({ defaultUnreachableTolerationSeconds: 30 }, source)).toEqual({
      defaultNotReadyTolerationSeconds: 300,
      defaultUnreachableTolerationSeconds: 30,
    });
  });

  it.each([
    [
      { defaultNotReadyTolerationSeconds: -1 },
      'DefaultTolerationSeconds: defaultNotReadyTolerationSeconds: must be an integer of at least 0, got -1',
    ],
    [
      { defaultUnreachableTolerationSeconds: 1.5 },
      'DefaultTolerationSeconds: defaultUnreachableTolerationSeconds: must be an integer of at least 0, got 1.5',
    ],
    [
      { defaultUnreachableTolerationSeconds: '300' },
      'DefaultTolerationSeconds: defaultUnreachableTolerationSeconds: must be an integer of at least 0, got "300"',
    ],
    [
      { defaultNotReadyTolerationSecond: 10 },
      'DefaultTolerationSeconds: defaultNotReadyTolerationSecond: unknown field "defaultNotReadyTolerationSecond"; did you mean "defaultNotReadyTolerationSeconds"?',
    ],
    [
      [300],
      'DefaultTolerationSeconds: configuration: must be an object with defaultNotReadyTolerationSeconds and defaultUnreachableTolerationSeconds, got [300]',
    ],
  ])('refuses %j naming the field', (raw, message) => {
    expect(() => plugin.configure!(raw, source)).toThrow(ConfigError);
    expect(() => plugin.configure!(raw, source)).toThrow(message);
  });
});

describe('the validating twin refuses a pod that lost its default tolerations after the mutation', () => {
  it('names both missing tolerations', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { object: pod([noExecute(DEPRECATED_NOT_READY, 300)]) },
      defaults,
    );
    expect(deniedMessage(result)).toBe(
      '[' +
        'pods "name" is forbidden: spec.tolerations: Required value: a toleration for the taint node.kubernetes.io/not-ready:NoExecute is needed (DefaultTolerationSeconds adds one with tolerationSeconds), ' +
        'pods "name" is forbidden: spec.tolerations: Required value: a toleration for the taint node.kubernetes.io/unreachable:NoExecute is needed (DefaultTolerationSeconds adds one with tolerationSeconds)' +
        ']',
    );
    expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('accepts tolerations the user chose, whatever their seconds', async () => {
    expect(
      deniedMessage(
        await runPhase(
          plugin,
          'validate',
          { object: pod([noExecute(NOT_READY, 5), { key: UNREACHABLE, operator: 'Exists' }]) },
          defaults,
        ),
      ),
    ).toBeUndefined();
  });
});

describe('other resources and subresources are ignored', () => {
  itLeavesAlone(plugin, otherResources('Pod', 'pods', 'ephemeralcontainers'), { object: pod(), config: defaults });

  it('non-pod object sent as a pod is a BadRequest, as upstream', async () => {
    const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: {} };
    for (const phase of ['mutate', 'validate'] as const) {
      const result = await runPhase(plugin, phase, { object: deployment, kind: { kind: 'Pod' } }, defaults);
      expect(result.wire.response!.status).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'expected *api.Pod but got *apps.Deployment',
      });
    }
  });
});

describe('TestHandles', () => {
  // Upstream mutates on CREATE and UPDATE; our twin refuses only new pods without what the mutation adds.
  describe('mutate', () =>
    itHandles(plugin, ['CREATE', 'UPDATE'], { object: pod(), config: defaults, phases: ['mutate'] }));
  describe('validate (our twin)', () =>
    itHandles(plugin, ['CREATE'], { object: pod(), config: defaults, phases: ['validate'] }));

  it('declares CREATE and UPDATE on pods for the mutation, and a fail-open twin on CREATE only', () => {
    const rules = [
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    ];
    expect(plugin.metadata.mutating).toMatchObject({
      rules,
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      timeoutSeconds: 3,
    });
    expect(plugin.metadata.validating).toMatchObject({
      rules: [{ ...rules[0], operations: ['CREATE'] }],
      failurePolicy: 'Ignore',
      timeoutSeconds: 3,
    });
  });

  it('answers a v1beta1 review in kind, with the same uid and a patch', async () => {
    const result = await mutateIdempotently(
      plugin,
      { apiVersion: 'admission.k8s.io/v1beta1', object: pod(), uid: 'beta-uid' },
      defaults,
    );
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: true, patchType: 'JSONPatch' });
  });
});
