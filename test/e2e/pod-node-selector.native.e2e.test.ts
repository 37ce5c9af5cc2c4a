// pod-node-selector natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// `emit --native` compiles, applied to a real apiserver, answer upstream's TestPodAdmission
// (test/support/cases) as the webhooks do on another apiserver: each row's namespace is a real
// Namespace with the row's annotation (created once the webhooks are in place, which learn it) and
// the row's whitelist in one configuration, whose cluster default is `infra = false`. The one row
// that needs an empty cluster default (its namespace has no annotation) is compared, not checked
// against upstream's expectation; the in-process proof runs it under its own configuration.
// Namespace annotations that do not parse refuse the pod in both, the webhook with upstream's 500,
// the policy with a 403 (docs/design/e2e-exceptions.md). TestHandles: an UPDATE and a DELETE of a
// pod stored through the plugin, and a CONNECT (pods/exec).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Answer, KubeObject } from './support/kube.js';
import { create, pod, remove, requestAt, webhookDenial } from './support/kube.js';
import { policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { expectSameOutcome, labelled, modify, namespaceWithAccount, startNativePair } from './support/native-pair.js';
import {
  NODE_SELECTOR_ANNOTATION,
  POD_ADMISSION_CASES,
  namespaceAnnotations,
} from '../support/cases/pod-node-selector.js';

const DEFAULT = 'infra = false';
const rowNamespace = (index: number) => `row-${index}`;
const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PodNodeSelector
    configuration:
      podNodeSelectorPluginConfig: ${JSON.stringify({
        clusterDefaultNodeSelector: DEFAULT,
        ...Object.fromEntries(
          POD_ADMISSION_CASES.flatMap((row, index) =>
            row.whitelist === undefined ? [] : [[rowNamespace(index), row.whitelist]],
          ),
        ),
      })}
`;

const MALFORMED = ['infra', 'in fra=x', 'infra=no way', 'infra=x,'];
const nodeSelectorOf = (object: KubeObject | undefined) =>
  (object?.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector;
const handled = (name: string) => pod('handles', name);

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    seed: (cluster) => namespaceWithAccount(cluster, 'probe'),
    inForce: async (cluster) =>
      nodeSelectorOf((await create(cluster, pod('probe', 'probe'), { dryRun: true })).object)?.infra === 'false',
    after: async (cluster) => {
      for (const [index, row] of POD_ADMISSION_CASES.entries()) {
        const annotations = namespaceAnnotations(row);
        await namespaceWithAccount(cluster, rowNamespace(index), annotations ? { annotations } : {});
      }
      for (const [index, annotation] of MALFORMED.entries())
        await namespaceWithAccount(cluster, `malformed-${index}`, {
          annotations: { [NODE_SELECTOR_ANNOTATION]: annotation },
        });
      await namespaceWithAccount(cluster, 'handles');
      for (const name of ['updated', 'deleted', 'exec']) {
        const answer = await create(cluster, handled(name));
        if (answer.status !== 201) throw new Error(`pod ${name}: ${answer.message}`);
      }
    },
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('pod-node-selector (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  POD_ADMISSION_CASES.forEach((row, index) => {
    it(`answers as the webhooks do: ${row.testName}`, async () => {
      const [webhook, native] = await pair.both((cluster) =>
        create(cluster, pod(rowNamespace(index), 'pod', { nodeSelector: row.podNodeSelector })),
      );
      // Upstream's expectation holds where the row's cluster default is this configuration's or unused.
      if (!row.ignoreTestNamespaceNodeSelector || row.defaultNodeSelector === DEFAULT) {
        expect(webhook.status === 201, webhook.message ?? 'admitted').toBe(row.admit);
        if (row.admit) expect(nodeSelectorOf(webhook.object) ?? {}).toEqual(row.mergedNodeSelector);
      }
      expectSameOutcome(webhook, native);
    });
  });

  MALFORMED.forEach((annotation, index) => {
    it(`refuses a pod in a namespace whose annotation does not parse (${JSON.stringify(annotation)}), 500 as a webhook, 403 as a policy`, async () => {
      const [webhook, native] = await pair.both((cluster) => create(cluster, pod(`malformed-${index}`, 'pod')));
      expect(webhook.status, webhook.message).toBe(500);
      expect(native.status, native.message).toBe(403);
      const fromWebhook = webhookDenial(webhook.message);
      expect(fromWebhook?.message).toMatch(/^Internal error occurred: /);
      expect(policyDenial(native.message)?.message).toBe(fromWebhook?.message);
    });
  });

  const HANDLES: [string, (cluster: ControlPlane) => Promise<Answer>][] = [
    ['UPDATE', (cluster) => modify(cluster, handled('updated'), labelled({ changed: 'yes' }))],
    ['DELETE', (cluster) => remove(cluster, handled('deleted'))],
    [
      'CONNECT',
      (cluster) => requestAt(cluster, 'POST', '/api/v1/namespaces/handles/pods/exec/exec?command=true&stdout=true'),
    ],
  ];
  for (const [operation, request] of HANDLES) {
    it(`TestHandles: ${operation} is not handled`, async () => {
      const [webhook, native] = await pair.both(request);
      expectSameOutcome(webhook, native);
    });
  }
});
