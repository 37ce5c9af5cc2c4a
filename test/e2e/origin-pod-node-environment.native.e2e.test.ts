// origin-pod-node-environment natively: the MutatingAdmissionPolicy and ValidatingAdmissionPolicy
// `emit --native` compiles, applied to a real apiserver, answer OpenShift's TestPodAdmission and
// TestLabelSelectorParse's selectors (test/support/cases, with the 7 more selectors of
// test/native/openshift-scheduling.test.ts) as the webhooks do on another apiserver. Each row's
// project is a real Namespace with the row's annotation and upstream's Node worker-1 (worker=true)
// a real Node, created once the webhooks are in place (which learn them), under one configuration
// whose default selector is `infra = false`; the row that needs an empty default is compared, not
// checked against OpenShift's expectation. A pod naming its node in a project with a selector is
// the listed difference (a policy cannot read the Node): asserted as such here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from './support/kube.js';
import { create, pod, webhookDenial } from './support/kube.js';
import { policyDenial, typeCheckingWarnings } from './support/native.js';
import type { NativePair } from './support/native-pair.js';
import { expectSameOutcome, namespaceWithAccount, seedObject, startNativePair } from './support/native-pair.js';
import {
  LABEL_SELECTOR_PARSE_CASES,
  POD_ADMISSION_CASES,
  PROJECT_NODE_SELECTOR_ANNOTATION,
  projectAnnotations,
} from '../support/cases/origin-pod-node-environment.js';

const DEFAULT = 'infra = false';
const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: scheduling.openshift.io/OriginPodNodeEnvironment
    configuration:
      defaultNodeSelector: ${JSON.stringify(DEFAULT)}
`;

const SELECTORS = [
  ...LABEL_SELECTOR_PARSE_CASES.map(([selector]) => selector),
  'x=a,',
  '=a',
  'x=a b',
  'a/b/c=d',
  'x=a,x=b',
  'Bad_Prefix/x=y',
  `x=${'v'.repeat(64)}`,
];

const podOf = (namespace: string, nodeSelector?: Record<string, string>, nodeName?: string): KubeObject =>
  pod(namespace, 'pod', { ...(nodeSelector && { nodeSelector }), ...(nodeName && { nodeName }) });
const nodeSelectorOf = (object: KubeObject | undefined) =>
  (object?.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector;

let pair: NativePair;
beforeAll(async () => {
  pair = await startNativePair(CONFIG, {
    seed: (cluster) => namespaceWithAccount(cluster, 'probe'),
    inForce: async (cluster) =>
      nodeSelectorOf((await create(cluster, podOf('probe'), { dryRun: true })).object)?.infra === 'false',
    after: async (cluster) => {
      await seedObject(cluster, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'worker-1', labels: { worker: 'true' } },
      });
      for (const [index, row] of POD_ADMISSION_CASES.entries()) {
        const annotations = projectAnnotations(row);
        await namespaceWithAccount(cluster, `row-${index}`, annotations ? { annotations } : {});
      }
      for (const [index, selector] of SELECTORS.entries())
        await namespaceWithAccount(cluster, `selector-${index}`, {
          annotations: { [PROJECT_NODE_SELECTOR_ANNOTATION]: selector },
        });
      await namespaceWithAccount(cluster, 'both-annotations', {
        annotations: {
          'scheduler.alpha.kubernetes.io/node-selector': 'a=b',
          [PROJECT_NODE_SELECTOR_ANNOTATION]: 'x=y',
        },
      });
    },
  });
});
afterAll(async () => {
  await pair?.stop();
});

describe('origin-pod-node-environment (native)', () => {
  it('is type-checked without a warning', () => {
    expect(typeCheckingWarnings(pair.native)).toEqual([]);
  });

  POD_ADMISSION_CASES.forEach((row, index) => {
    const namesNode = row.podNodeName !== undefined && (row.projectNodeSelector ?? DEFAULT).trim() !== '';
    it(`answers as the webhooks do${namesNode ? ', but for the listed difference' : ''}: ${row.testName}`, async () => {
      const [webhook, native] = await pair.both((cluster) =>
        create(cluster, podOf(`row-${index}`, row.podNodeSelector, row.podNodeName)),
      );
      if (!row.ignoreProjectNodeSelector || row.defaultNodeSelector === DEFAULT) {
        expect(webhook.status === 201, webhook.message ?? 'admitted').toBe(row.admit);
        if (row.admit) expect(nodeSelectorOf(webhook.object) ?? {}).toEqual(row.mergedNodeSelector);
      }
      if (!namesNode) {
        expectSameOutcome(webhook, native);
        return;
      }
      // The policy cannot read the Node: it refuses where the webhook checks the learned labels.
      expect(native.status, native.message).toBe(403);
      expect(policyDenial(native.message)?.message).toMatch(
        new RegExp(`cannot validate project node label selector: node "${row.podNodeName}" not found$`),
      );
    });
  });

  it("leaves a namespace with PodNodeSelector's annotation to PodNodeSelector", async () => {
    const [webhook, native] = await pair.both((cluster) => create(cluster, podOf('both-annotations', { x: 'z' })));
    expect(webhook.status, webhook.message).toBe(201);
    expectSameOutcome(webhook, native);
  });

  SELECTORS.forEach((selector, index) => {
    it(`parses the project selector ${JSON.stringify(selector)} as the webhooks do`, async () => {
      const [webhook, native] = await pair.both((cluster) => create(cluster, podOf(`selector-${index}`, {})));
      if (webhook.status === 500) {
        // OpenShift returns the parser's error as is (a 500); the policy refuses with its text.
        expect(native.status, native.message).toBe(403);
        expect(policyDenial(native.message)?.message).toBe(webhookDenial(webhook.message)?.message);
      } else expectSameOutcome(webhook, native);
    });
  });
});
