// Store cost: DynamoDB calls per admitted request (both phases of a plugin that has both) for each
// plugin that writes or learns, counted at the client as they leave for DynamoDB Local; and the
// same request as a dry run (0 writes).
import { usesStore } from '../../lib/admission/plugin.js';
import { existsSync } from 'node:fs';
import jsonpatch from 'fast-json-patch';
import { plugins } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { AdmissionReviewWire, KubeObject } from '../../lib/admission/types.js';
import {
  configurePlugin,
  loadAdmissionConfiguration,
  parseAdmissionConfiguration,
} from '../../lib/config/admission-configuration.js';
import { createRequestState } from '../../lib/state/index.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
import type { DynamoDbOperation } from '../../lib/state/dynamodb.js';
import { WRITE_OPERATIONS } from '../../lib/state/dynamodb.js';
import { countingClient, createTable } from '../support/dynamodb.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import type { ReviewInput } from '../support/review.js';
import { review } from '../support/review.js';

const NS = 'bench';

const namespace: ReviewInput = {
  kind: { kind: 'Namespace' },
  resource: { resource: 'namespaces' },
  object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: { environment: 'test' } } },
};
const pod = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, uid: `uid-${name}` },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'registry.example/app:1',
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
      },
    ],
  },
});
const quota: ReviewInput = {
  kind: { kind: 'ResourceQuota' },
  resource: { resource: 'resourcequotas' },
  object: {
    kind: 'ResourceQuota',
    metadata: { name: 'q', namespace: NS },
    spec: { hard: { pods: '1000', 'requests.cpu': '100', 'requests.memory': '100Gi' } },
  },
};
const event = (name: string): ReviewInput => ({
  kind: { kind: 'Event' },
  resource: { resource: 'events' },
  object: {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: NS },
    involvedObject: { kind: 'Pod', name: 'p', namespace: NS },
    reason: 'Started',
    source: { component: 'kubelet', host: 'node-1' },
  },
});

/** A namespace opted in to ClusterResourceOverride (OpenShift 4's label). */
const optedIn: ReviewInput = {
  ...namespace,
  object: {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: NS,
      labels: { environment: 'test', 'clusterresourceoverrides.admission.autoscaling.openshift.io/enabled': 'true' },
    },
  },
};
const runOnce = (object: KubeObject): KubeObject => ({
  ...object,
  spec: { ...(object.spec as object), restartPolicy: 'Never' },
});

const kubelet = { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] };
const podStatus = (name: string): ReviewInput => {
  const bound = pod(name);
  bound.spec = { ...(bound.spec as object), nodeName: 'node-1' };
  return { operation: 'UPDATE', subResource: 'status', object: bound, oldObject: bound, userInfo: kubelet };
};

const limitRange: ReviewInput = {
  kind: { kind: 'LimitRange' },
  resource: { resource: 'limitranges' },
  object: {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'limits', namespace: NS },
    spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, min: { cpu: '50m' }, max: { cpu: '2' } }] },
  },
};
/** A ClusterResourceQuota selecting the bench namespace by its label (cluster-scoped). */
const clusterQuota: ReviewInput = {
  kind: { group: 'quota.openshift.io', version: 'v1', kind: 'ClusterResourceQuota' },
  resource: { group: 'quota.openshift.io', version: 'v1', resource: 'clusterresourcequotas' },
  namespace: '',
  object: {
    apiVersion: 'quota.openshift.io/v1',
    kind: 'ClusterResourceQuota',
    metadata: { name: 'crq' },
    spec: { selector: { labels: { matchLabels: { environment: 'test' } } }, quota: { hard: { pods: '1000' } } },
  },
};

/** What each stateful plugin sees in real use: state it learns first, then the measured request. */
export const SAMPLES: Record<string, { setup: ReviewInput[]; request: (i: number) => ReviewInput }> = {
  'namespace-lifecycle': { setup: [namespace], request: (i) => ({ object: pod(`nl-${i}`) }) },
  'pod-node-selector': { setup: [namespace], request: (i) => ({ object: pod(`pns-${i}`) }) },
  'pod-toleration-restriction': { setup: [namespace], request: (i) => ({ object: pod(`ptr-${i}`) }) },
  'resource-quota': { setup: [namespace, quota], request: (i) => ({ object: pod(`rq-${i}`) }) },
  'event-rate-limit': { setup: [], request: (i) => event(`e-${i}`) },
  'validating-admission-policy': { setup: [namespace], request: (i) => ({ object: pod(`vap-${i}`) }) },
  'pod-security': { setup: [namespace], request: (i) => ({ object: pod(`ps-${i}`) }) },
  // A kubelet's status update: the most frequent NodeRestriction request, and the one it learns from.
  'node-restriction': { setup: [], request: (i) => podStatus(`nr-${i}`) },
  'namespace-exists': { setup: [namespace], request: (i) => ({ object: pod(`ne-${i}`) }) },
  'run-once-duration': { setup: [namespace], request: (i) => ({ object: runOnce(pod(`rod-${i}`)) }) },
  'origin-pod-node-environment': { setup: [namespace], request: (i) => ({ object: pod(`opne-${i}`) }) },
  'cluster-resource-override': { setup: [optedIn], request: (i) => ({ object: pod(`cro-${i}`) }) },
  'limit-ranger': { setup: [namespace, limitRange], request: (i) => ({ object: pod(`lr-${i}`) }) },
  'cluster-resource-quota': { setup: [namespace, clusterQuota], request: (i) => ({ object: pod(`crq-${i}`) }) },
};

function configFor(plugin: AnyAdmissionPlugin): unknown {
  const example = `config/examples/${plugin.metadata.name}.yaml`;
  const configuration = existsSync(example)
    ? loadAdmissionConfiguration({ ADMISSION_CONFIG: example })
    : parseAdmissionConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n', 'bench');
  return configurePlugin(plugin, configuration);
}

export async function benchStore(requests = 20): Promise<Record<string, unknown>[]> {
  const db = await startEmbeddedDynamoDb({});
  const sent: string[] = [];
  const client = countingClient(db.endpoint, sent);
  const tableName = 'bench-store';
  const rows: Record<string, unknown>[] = [];
  try {
    await createTable(db.endpoint, tableName);
    for (const plugin of plugins) {
      const { metadata } = plugin;
      if (!usesStore(metadata)) continue;
      const sample = SAMPLES[metadata.name];
      if (!sample) {
        rows.push({
          plugin: metadata.name,
          'calls/request': '-',
          'writes/request': '-',
          'dry-run calls': '-',
          'dry-run writes': '-',
          commands: 'no sample request',
        });
        continue;
      }
      const handler = createStatefulAdmissionHandler(plugin, {
        config: configFor(plugin),
        callerAuth: { mode: 'mtls', allowedSubjects: [] },
        state: (request) => createRequestState(request, { plugin: metadata.name, client, tableName }),
      });
      const send = async (phase: 'mutate' | 'validate' | 'learn', input: ReviewInput) => {
        const result = await handler(
          gatewayEvent(`/${metadata.name}/${phase}`, JSON.stringify(review(input))),
          lambdaContext,
        );
        if (result.statusCode !== 200) throw new Error(`${metadata.name}: HTTP ${result.statusCode} ${result.body}`);
        return JSON.parse(result.body) as AdmissionReviewWire;
      };
      // One whole admission, as the apiserver makes it: the mutating webhook, its patch applied,
      // then the validating webhook on the final object.
      const call = async (input: ReviewInput) => {
        let object = input.object ?? null;
        if (plugin.admit) {
          const { patch } = (await send('mutate', input)).response!;
          if (patch && object)
            object = jsonpatch.applyPatch(
              object,
              JSON.parse(Buffer.from(patch, 'base64').toString('utf8')),
              true,
              false,
            ).newDocument;
        }
        if (plugin.validate) await send('validate', { ...input, object });
      };
      // The state comes first, through the learning webhook (judges never learn).
      for (const input of sample.setup) await send('learn', input);
      const measure = async (dryRun: boolean) => {
        sent.splice(0);
        for (let i = 0; i < requests; i++) await call({ ...sample.request(i + (dryRun ? 10_000 : 0)), dryRun });
        const byCommand = new Map<string, number>();
        for (const command of sent) byCommand.set(command, (byCommand.get(command) ?? 0) + 1);
        return {
          calls: sent.length / requests,
          writes: sent.filter((c) => WRITE_OPERATIONS.has(c as DynamoDbOperation)).length / requests,
          byCommand,
        };
      };
      const admitted = await measure(false);
      const dry = await measure(true);
      rows.push({
        plugin: metadata.name,
        'calls/request': admitted.calls,
        'writes/request': admitted.writes,
        'dry-run calls': dry.calls,
        'dry-run writes': dry.writes,
        commands: [...admitted.byCommand].map(([c, n]) => `${c}:${n / requests}`).join(' '),
      });
    }
  } finally {
    client.destroy();
    await db.stop();
  }
  return rows;
}
