// DefaultTolerationSeconds and ExtendedResourceToleration natively (Kubernetes 1.36+): upstream's
// TestForgivenessAdmission (plugin/pkg/admission/defaulttolerationseconds) and TestAdmit
// (plugin/pkg/admission/extendedresourcetoleration), as test/support/cases holds them, with the
// tolerations upstream expects. Each case: the mutation leaves the pod as the webhook's patch does,
// and the validating twin answers as the webhook's, before and after the mutation.
import { describe, expect, it } from 'vitest';
import defaultTolerationSeconds from '../../functions/default-toleration-seconds/plugin.js';
import extendedResourceToleration from '../../functions/extended-resource-toleration/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import { FORGIVENESS_CASES, NOT_READY, UNREACHABLE, noExecute } from '../support/cases/default-toleration-seconds.js';
import type { AdmitCase } from '../support/cases/extended-resource-toleration.js';
import {
  ADMIT_CASES,
  containerRequestingExtendedResource1,
  exists,
  extendedResource1,
} from '../support/cases/extended-resource-toleration.js';
import { titled } from '../support/titled.js';
import { NativeCluster, configured, expectSameAdmission, nativeObjectsOf } from './support/proof.js';

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
  const entry = configured(defaultTolerationSeconds);
  const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
  it.each(titled(FORGIVENESS_CASES, (c) => c.description))('%s', async (_title, { requested, expected }) => {
    const input = { object: pod(requested === undefined ? {} : { tolerations: requested }) };
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
    expect(tolerationsOf(native.patchedObject)).toEqual([noExecute(NOT_READY, 60), noExecute(UNREACHABLE, 0)]);
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
  const requesting = (requests: Record<string, string>) => ({ name: 'c', image: 'i', resources: { requests } });
  // Beyond upstream's rows.
  const MORE: AdmitCase[] = [
    {
      // AddOrUpdateTolerationInPod replaces a match that sets tolerationSeconds.
      description: 'a match with tolerationSeconds is replaced',
      requested: {
        containers: [containerRequestingExtendedResource1],
        tolerations: [{ ...exists(extendedResource1), tolerationSeconds: 5 }],
      },
      expected: [exists(extendedResource1)],
    },
    {
      description: 'native and quota names are not extended',
      requested: {
        containers: [requesting({ 'kubernetes.io/x': '1', 'requests.example.com/y': '1', 'hugepages-2Mi': '1' })],
      },
      expected: undefined,
    },
  ];

  const entry = configured(extendedResourceToleration);
  const cluster = new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36');
  it.each(titled([...ADMIT_CASES, ...MORE], (c) => c.description))('%s', async (_title, { requested, expected }) => {
    const { webhook } = await expectSameAdmission(extendedResourceToleration, undefined, cluster, {
      object: pod({ ...requested }),
    });
    expect(tolerationsOf(webhook.patchedObject)).toEqual(expected);
  });

  it.each(['CONNECT', 'DELETE'] as const)('TestHandles: %s is not handled', async (operation) => {
    const object = pod({ containers: [containerRequestingExtendedResource1] });
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
