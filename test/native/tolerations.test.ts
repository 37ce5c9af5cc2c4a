// DefaultTolerationSeconds and ExtendedResourceToleration natively (Kubernetes 1.36+): upstream's
// TestForgivenessAdmission (plugin/pkg/admission/defaulttolerationseconds) and TestAdmit
// (plugin/pkg/admission/extendedresourcetoleration), ported anew with the tolerations upstream
// expects. Each case: the mutation leaves the pod as the webhook's patch does, and the validating
// twin answers as the webhook's, before and after the mutation.
import { describe, expect, it } from 'vitest';
import defaultTolerationSeconds from '../../functions/default-toleration-seconds/plugin.js';
import extendedResourceToleration from '../../functions/extended-resource-toleration/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import { NativeCluster, configured, expectSameAdmission, nativeObjectsOf } from './support/proof.js';

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
type Toleration = Record<string, unknown>;

const pod = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'name', namespace: 'foo' },
  spec,
});
const tolerationsOf = (object: KubeObject | null) =>
  (object?.spec as { tolerations?: Toleration[] } | undefined)?.tolerations;

describe('DefaultTolerationSeconds on Kubernetes 1.36', () => {
  const forgiving = (key: string, seconds: number) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: seconds,
  });
  // TestForgivenessAdmission: [description, tolerations before, tolerations upstream expects]
  const ROWS: [string, Toleration[] | undefined, Toleration[]][] = [
    ['no tolerations: both added', undefined, [forgiving(NOT_READY, 300), forgiving(UNREACHABLE, 300)]],
    [
      'tolerations, none for the two taints: both added',
      [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule', tolerationSeconds: 700 }],
      [
        { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule', tolerationSeconds: 700 },
        forgiving(NOT_READY, 300),
        forgiving(UNREACHABLE, 300),
      ],
    ],
    [
      'not-ready tolerated: unreachable added',
      [forgiving(NOT_READY, 700)],
      [forgiving(NOT_READY, 700), forgiving(UNREACHABLE, 300)],
    ],
    [
      'unreachable tolerated: not-ready added',
      [forgiving(UNREACHABLE, 700)],
      [forgiving(UNREACHABLE, 700), forgiving(NOT_READY, 300)],
    ],
    [
      'both tolerated: no change',
      [forgiving(NOT_READY, 700), forgiving(UNREACHABLE, 700)],
      [forgiving(NOT_READY, 700), forgiving(UNREACHABLE, 700)],
    ],
    [
      'unreachable tolerated for every effect: not-ready added',
      [{ key: UNREACHABLE, operator: 'Exists', tolerationSeconds: 700 }],
      [{ key: UNREACHABLE, operator: 'Exists', tolerationSeconds: 700 }, forgiving(NOT_READY, 300)],
    ],
    [
      'a wildcard toleration: no change',
      [{ operator: 'Exists', tolerationSeconds: 700 }],
      [{ operator: 'Exists', tolerationSeconds: 700 }],
    ],
  ];

  const entry = configured(defaultTolerationSeconds);
  const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
  it.each(ROWS)('%s', async (_name, before, expected) => {
    const input = { object: pod(before === undefined ? {} : { tolerations: before }) };
    const { webhook } = await expectSameAdmission(defaultTolerationSeconds, entry.config, cluster, input);
    expect(tolerationsOf(webhook.patchedObject)).toEqual(expected);
  });

  it('carries the configured seconds', async () => {
    const custom = configured(defaultTolerationSeconds, {
      defaultNotReadyTolerationSeconds: 60,
      defaultUnreachableTolerationSeconds: 0,
    });
    const customCluster = new NativeCluster(nativeObjectsOf(custom, '1.36'), '1.36');
    const { native } = await expectSameAdmission(defaultTolerationSeconds, custom.config, customCluster, {
      object: pod({}),
    });
    expect(tolerationsOf(native.patchedObject)).toEqual([forgiving(NOT_READY, 60), forgiving(UNREACHABLE, 0)]);
  });

  it.each([
    ['UPDATE', { operation: 'UPDATE' as const, object: pod({}), oldObject: pod({}) }],
    ['status', { subResource: 'status', object: pod({}) }],
    ['DELETE', { operation: 'DELETE' as const, object: null, oldObject: pod({}) }],
  ])('TestHandles and other requests: %s', async (_name, input) => {
    await expectSameAdmission(defaultTolerationSeconds, entry.config, cluster, input);
  });
});

describe('ExtendedResourceToleration on Kubernetes 1.36', () => {
  const R1 = 'example.com/device-ek';
  const R2 = 'example.com/device-do';
  const requesting = (requests: Record<string, string>) => ({ name: 'c', image: 'i', resources: { requests } });
  const cpu = requesting({ cpu: '2' });
  const memory = requesting({ memory: '2048' });
  const ext1 = requesting({ [R1]: '1' });
  const ext2 = requesting({ [R2]: '2' });
  const tolerating = (key: string) => ({ key, operator: 'Exists', effect: 'NoSchedule' });

  // TestAdmit: [description, spec, tolerations upstream expects]
  const ROWS: [string, Record<string, unknown>, Toleration[] | undefined][] = [
    ['an empty pod', {}, undefined],
    ['a container without extended resources', { containers: [cpu] }, undefined],
    ['an init container without extended resources', { initContainers: [memory] }, undefined],
    ['a container with an extended resource', { containers: [ext1] }, [tolerating(R1)]],
    ['an init container with an extended resource', { initContainers: [ext2] }, [tolerating(R2)]],
    [
      'existing tolerations kept, the new one added',
      { containers: [cpu, ext1], tolerations: [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }] },
      [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }, tolerating(R1)],
    ],
    [
      'several extended resources, sorted by key',
      { containers: [memory, ext1], initContainers: [cpu, ext2] },
      [tolerating(R2), tolerating(R1)],
    ],
    [
      'the correct toleration already there',
      { containers: [cpu, memory, ext1], tolerations: [tolerating(R1)] },
      [tolerating(R1)],
    ],
    [
      'the same key with another effect and value',
      {
        containers: [cpu, memory, ext1],
        tolerations: [{ key: R1, operator: 'Equal', value: 'foo', effect: 'NoExecute' }],
      },
      [{ key: R1, operator: 'Equal', value: 'foo', effect: 'NoExecute' }, tolerating(R1)],
    ],
    [
      'a wildcard toleration',
      { containers: [cpu, memory, ext1], tolerations: [{ operator: 'Exists' }] },
      [{ operator: 'Exists' }, tolerating(R1)],
    ],
    // Beyond upstream's rows: AddOrUpdateTolerationInPod replaces a match that sets tolerationSeconds.
    [
      'a match with tolerationSeconds is replaced',
      { containers: [ext1], tolerations: [{ ...tolerating(R1), tolerationSeconds: 5 }] },
      [tolerating(R1)],
    ],
    [
      'native and quota names are not extended',
      { containers: [requesting({ 'kubernetes.io/x': '1', 'requests.example.com/y': '1', 'hugepages-2Mi': '1' })] },
      undefined,
    ],
  ];

  const entry = configured(extendedResourceToleration);
  const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
  it.each(ROWS)('%s', async (_name, spec, expected) => {
    const { webhook } = await expectSameAdmission(extendedResourceToleration, undefined, cluster, {
      object: pod(spec),
    });
    expect(tolerationsOf(webhook.patchedObject)).toEqual(expected);
  });

  it.each(['CONNECT', 'DELETE'] as const)('TestHandles: %s is not handled', async (operation) => {
    const object = pod({ containers: [ext1] });
    await expectSameAdmission(extendedResourceToleration, undefined, cluster, {
      operation,
      object: operation === 'DELETE' ? null : object,
      oldObject: object,
    });
  });
});

describe.each([defaultTolerationSeconds, extendedResourceToleration])(
  '$metadata.upstreamName before 1.36',
  (plugin) => {
    it.each(['1.30', '1.33', '1.35'] as const)('stays a webhook on %s', (version) => {
      expect(planPlugin(configured(plugin), version).objects).toBeUndefined();
    });
  },
);
