// PodNodeSelector natively (Kubernetes 1.36+): upstream's TestPodAdmission and TestHandles
// (plugin/pkg/admission/podnodeselector/admission_test.go), ported anew. The namespace, with or
// without its node-selector annotation, is what both see (the webhook as learned, the policies as
// namespaceObject); each case goes through the webhook's chain and the policies' chain.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-node-selector/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import {
  NativeCluster,
  configured,
  expectSameAdmission,
  namespaceState,
  nativeObjectsOf,
  refusalReason,
} from './support/proof.js';

const NAMESPACE = 'testNamespace';
const ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

interface Row {
  readonly testName: string;
  readonly defaultNodeSelector: string;
  /** undefined: the namespace has no annotation (ignoreTestNamespaceNodeSelector). */
  readonly namespaceNodeSelector?: string;
  readonly whitelist?: string;
  readonly podNodeSelector: Record<string, string>;
  readonly mergedNodeSelector?: Record<string, string>;
  readonly admit: boolean;
}

// TestPodAdmission, row by row.
const ROWS: Row[] = [
  { testName: 'No node selectors', defaultNodeSelector: '', podNodeSelector: {}, mergedNodeSelector: {}, admit: true },
  {
    testName: 'Default node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    admit: true,
  },
  {
    testName: 'TestNamespace node selector with whitespaces and no conflicts',
    defaultNodeSelector: '',
    namespaceNodeSelector: ' infra = false ',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    admit: true,
  },
  {
    testName: 'Default and namespace node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    namespaceNodeSelector: 'infra=true',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'true' },
    admit: true,
  },
  {
    testName: 'Empty namespace node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    namespaceNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    admit: true,
  },
  {
    testName: 'TestNamespace and pod node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    namespaceNodeSelector: 'infra=true',
    podNodeSelector: { env: 'test' },
    mergedNodeSelector: { infra: 'true', env: 'test' },
    admit: true,
  },
  {
    testName: 'Conflicting pod and namespace node selector, one label',
    defaultNodeSelector: 'env = test',
    namespaceNodeSelector: 'infra=true',
    podNodeSelector: { infra: 'false' },
    admit: false,
  },
  {
    testName: 'Conflicting pod and namespace node selector, multiple labels',
    defaultNodeSelector: 'env=dev',
    namespaceNodeSelector: 'infra=false, env = test',
    podNodeSelector: { env: 'dev', color: 'blue' },
    admit: false,
  },
  {
    testName: 'Merged pod node selectors satisfy the whitelist',
    defaultNodeSelector: 'env=dev',
    namespaceNodeSelector: 'infra=false, env = dev',
    whitelist: 'env=dev, infra=false, color=blue',
    podNodeSelector: { env: 'dev', color: 'blue' },
    mergedNodeSelector: { infra: 'false', env: 'dev', color: 'blue' },
    admit: true,
  },
  {
    testName: 'Merged pod node selectors conflict with the whitelist',
    defaultNodeSelector: 'env=dev',
    namespaceNodeSelector: 'infra=false, env = dev',
    whitelist: 'env=dev, infra=true, color=blue',
    podNodeSelector: { env: 'dev', color: 'blue' },
    admit: false,
  },
];

const pod = (nodeSelector: Record<string, string>, name = 'testPod'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NAMESPACE },
  spec: { nodeSelector },
});

function setup(defaultNodeSelector: string, whitelist: string | undefined, annotation: string | undefined) {
  const entry = configured(plugin, {
    podNodeSelectorPluginConfig: {
      clusterDefaultNodeSelector: defaultNodeSelector,
      ...(whitelist !== undefined && { [NAMESPACE]: whitelist }),
    },
  });
  const state = namespaceState([
    { name: NAMESPACE, ...(annotation !== undefined && { annotations: { [ANNOTATION]: annotation } }) },
  ]);
  return { entry, state, cluster: new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36') };
}

describe('on Kubernetes 1.36', () => {
  it.each(ROWS)('$testName', async (row) => {
    const { entry, state, cluster } = setup(row.defaultNodeSelector, row.whitelist, row.namespaceNodeSelector);
    const input: ReviewInput = { object: pod(row.podNodeSelector), namespace: NAMESPACE };
    const { outcome } = await expectSameAdmission(plugin, entry.config, cluster, input, state);
    expect(outcome.wire.response?.allowed).toBe(row.admit);
    if (row.admit) {
      const native = await cluster.mutate(input, state);
      expect(
        (native.patchedObject?.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector,
      ).toEqual(row.mergedNodeSelector);
    }
  });

  it.each([
    ['a term without =', 'infra'],
    ['an invalid key', 'in fra=x'],
    ['an invalid value', 'infra=no way'],
    ['a trailing comma', 'infra=x,'],
  ])(
    'an annotation that does not parse (%s) refuses the pod, with upstream text (a listed difference in code)',
    async (_name, annotation) => {
      const { entry, state, cluster } = setup('', undefined, annotation);
      const input: ReviewInput = { object: pod({}), namespace: NAMESPACE };
      const webhook = await runPhase(plugin, 'mutate', input, entry.config, state);
      expect(webhook.wire.response?.status).toMatchObject({ code: 500, reason: 'InternalError' });
      expect((await cluster.mutate(input, state)).patch).toEqual([]);
      const native = await cluster.validate(input, state);
      expect(native.wire.response?.allowed).toBe(false);
      expect(refusalReason(native)).toContain(`denied request: ${webhook.wire.response?.status?.message}`);
    },
  );

  it.each(['UPDATE', 'DELETE', 'CONNECT'] as const)('TestHandles: %s is not handled', async (operation) => {
    const { entry, state, cluster } = setup('infra=false', undefined, undefined);
    const object = pod({});
    await expectSameAdmission(
      plugin,
      entry.config,
      cluster,
      { operation, object: operation === 'DELETE' ? null : object, oldObject: object, namespace: NAMESPACE },
      state,
    );
  });
});

describe.each(['1.30', '1.35'] as const)('on Kubernetes %s', (version) => {
  it('stays a webhook', () => {
    expect(planPlugin(configured(plugin, {}), version).objects).toBeUndefined();
  });
});
