// PodNodeSelector natively (Kubernetes 1.36+): upstream's TestPodAdmission and TestHandles
// (plugin/pkg/admission/podnodeselector/admission_test.go), as test/support/cases holds them. The
// namespace, with or without its node-selector annotation, is what both see (the webhook as
// learned, the policies as namespaceObject); each case goes through the webhook's chain and the
// policies' chain.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-node-selector/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import type { PodAdmissionCase } from '../support/cases/pod-node-selector.js';
import {
  NODE_SELECTOR_ANNOTATION,
  POD_ADMISSION_CASES,
  namespaceAnnotations,
} from '../support/cases/pod-node-selector.js';
import {
  NativeCluster,
  configured,
  expectSameAdmission,
  namespaceState,
  nativeObjectsOf,
  refusalReason,
} from './support/proof.js';

const NAMESPACE = 'testNamespace';
const pod = (nodeSelector: Readonly<Record<string, string>>, name = 'testPod'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NAMESPACE },
  spec: { nodeSelector },
});

/** The entry, the namespace (as both learn it) and the cluster for a case's configuration. */
function setup(row: Pick<PodAdmissionCase, 'defaultNodeSelector' | 'whitelist'>, annotations?: Record<string, string>) {
  const entry = configured(plugin, {
    podNodeSelectorPluginConfig: {
      clusterDefaultNodeSelector: row.defaultNodeSelector,
      ...(row.whitelist !== undefined && { [NAMESPACE]: row.whitelist }),
    },
  });
  const state = namespaceState([{ name: NAMESPACE, ...(annotations !== undefined && { annotations }) }]);
  return { entry, state, cluster: new NativeCluster(nativeObjectsOf(entry, '1.36'), '1.36') };
}

describe('on Kubernetes 1.36', () => {
  it.each(POD_ADMISSION_CASES)('$testName', async (row) => {
    const { entry, state, cluster } = setup(row, namespaceAnnotations(row));
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
      const { entry, state, cluster } = setup({ defaultNodeSelector: '' }, { [NODE_SELECTOR_ANNOTATION]: annotation });
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
    const { entry, state, cluster } = setup({ defaultNodeSelector: 'infra=false' });
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
