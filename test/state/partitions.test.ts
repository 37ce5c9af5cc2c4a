// Each stateful function's role may touch only its own partitions of the state table (the
// `dynamodb:LeadingKeys` condition from lib/state/partitions). Here every stateful plugin's real
// Lambda handler runs over DynamoDB Local, learning and judging writes of every kind the
// plugins handle, through a client that records the partition key of every call it sends; each
// call is then evaluated against the plugin's generated role as IAM would. A plugin that read or
// wrote a key outside its declared partitions would be refused by IAM once deployed: it fails here.
import { afterAll, describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { usesStore } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import type { DynamoDb, DynamoDbOperation, DynamoDbOperations } from '../../lib/state/dynamodb.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import { partitionPatterns } from '../../lib/state/partitions.js';
import { endpointsOf, roleLogicalId, serverlessRoles } from '../../infra/serverless/functions.js';
import { createTable } from '../support/dynamodb.js';
import { inject } from 'vitest';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import type { PolicyDocument } from '../support/iam-policy.js';
import { evaluate } from '../support/iam-policy.js';
import type { ReviewInput } from '../support/review.js';
import { review } from '../support/review.js';

const TABLE_ARN = 'arn:aws:dynamodb:eu-west-1:123456789012:table/serverless-admission-test-state';
const everything = everyPluginActiveConfiguration();
afterAll(() => everything.remove());
const configured = activePlugins(loadPluginSet(plugins, { ADMISSION_CONFIG: everything.file }));
// ImagePolicyWebhook asks a backend over the network before it caches: its cache is driven below.
const stateful = configured.filter(
  (c) => usesStore(c.plugin.metadata) && c.plugin.metadata.name !== 'image-policy-webhook',
);

/** One DynamoDB call as IAM authorizes it: the action, and the partition keys it touches. */
interface Touch {
  readonly action: string;
  readonly keys: readonly string[];
}

const pk = (item: any): string => {
  if (typeof item?.pk?.S !== 'string') throw new Error(`no pk in ${JSON.stringify(item)}`);
  return item.pk.S;
};

/** What one call touches; an operation this does not know fails the test rather than passing unseen. */
function touches(operation: DynamoDbOperation, input: any): Touch[] {
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [{ action: `dynamodb:${operation}`, keys: [pk(input.Key)] }];
    case 'PutItem':
      return [{ action: 'dynamodb:PutItem', keys: [pk(input.Item)] }];
    case 'Query': {
      const key = input.ExpressionAttributeValues?.[':pk']?.S;
      if (!/^pk = :pk\b/.test(input.KeyConditionExpression) || typeof key !== 'string')
        throw new Error(`a Query this test cannot read: ${input.KeyConditionExpression}`);
      return [{ action: 'dynamodb:Query', keys: [key] }];
    }
    case 'BatchWriteItem':
      return Object.values(input.RequestItems as Record<string, any[]>).map((requests) => ({
        action: 'dynamodb:BatchWriteItem',
        keys: requests.map((r) => pk(r.PutRequest?.Item ?? r.DeleteRequest?.Key)),
      }));
    case 'TransactWriteItems':
      // IAM authorizes each item as its own action.
      return (input.TransactItems as any[]).map((item) => {
        const [kind, body] = Object.entries(item)[0] as [string, any];
        const action = {
          Put: 'PutItem',
          Update: 'UpdateItem',
          Delete: 'DeleteItem',
          ConditionCheck: 'ConditionCheckItem',
        }[kind];
        if (!action) throw new Error(`transaction item ${kind}`);
        return { action: `dynamodb:${action}`, keys: [pk(body.Item ?? body.Key)] };
      });
    default:
      throw new Error(`${operation}: say which partition keys it touches`);
  }
}

function recordingClient(endpoint: string, seen: Touch[]): DynamoDb {
  const client = localDynamoDb(endpoint);
  return {
    call<Op extends DynamoDbOperation>(operation: Op, input: DynamoDbOperations[Op]['input']) {
      seen.push(...touches(operation, input));
      return client.call(operation, input);
    },
    destroy: () => client.destroy(),
  };
}

const meta = (name: string, namespace?: string, extra: Record<string, unknown> = {}) => ({
  name,
  ...(namespace && { namespace }),
  uid: `uid-${namespace ?? ''}-${name}`,
  ...extra,
});

/** One write of each kind a stateful plugin learns or judges, in an order that lets state build up. */
const OBJECTS: { resource: ReviewInput['resource']; kind: ReviewInput['kind']; object: KubeObject }[] = [
  {
    resource: { resource: 'namespaces' },
    kind: { kind: 'Namespace' },
    object: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: meta('shop', undefined, {
        labels: { team: 'a' },
        annotations: { 'scheduler.alpha.kubernetes.io/node-selector': 'pool=a' },
      }),
      status: { phase: 'Active' },
    },
  },
  {
    resource: { resource: 'resourcequotas' },
    kind: { kind: 'ResourceQuota' },
    object: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: meta('q', 'shop'), spec: { hard: { pods: '5' } } },
  },
  {
    resource: { group: 'quota.openshift.io', version: 'v1', resource: 'clusterresourcequotas' },
    kind: { group: 'quota.openshift.io', version: 'v1', kind: 'ClusterResourceQuota' },
    object: {
      apiVersion: 'quota.openshift.io/v1',
      kind: 'ClusterResourceQuota',
      metadata: meta('team-a'),
      spec: { selector: { labels: { matchLabels: { team: 'a' } } }, quota: { hard: { pods: '5' } } },
    },
  },
  {
    resource: { resource: 'limitranges' },
    kind: { kind: 'LimitRange' },
    object: {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: meta('limits', 'shop'),
      spec: { limits: [{ type: 'Container', default: { cpu: '100m' } }] },
    },
  },
  ...(
    [
      ['storage.k8s.io', 'storageclasses', 'StorageClass', { provisioner: 'x', allowVolumeExpansion: true }],
      ['networking.k8s.io', 'ingressclasses', 'IngressClass', { spec: { controller: 'x' } }],
      ['scheduling.k8s.io', 'priorityclasses', 'PriorityClass', { value: 1000, globalDefault: true }],
      ['node.k8s.io', 'runtimeclasses', 'RuntimeClass', { handler: 'runc' }],
    ] as const
  ).map(([group, resource, kind, rest]) => ({
    resource: { group, version: 'v1', resource },
    kind: { group, version: 'v1', kind },
    object: {
      apiVersion: `${group}/v1`,
      kind,
      metadata: meta('default', undefined, {
        annotations: {
          [`${resource === 'storageclasses' ? 'storageclass' : 'ingressclass'}.kubernetes.io/is-default-class`]: 'true',
        },
      }),
      ...rest,
    },
  })),
  {
    resource: { resource: 'nodes' },
    kind: { kind: 'Node' },
    object: { apiVersion: 'v1', kind: 'Node', metadata: meta('node-1', undefined, { labels: { pool: 'a' } }) },
  },
  {
    resource: { resource: 'pods' },
    kind: { kind: 'Pod' },
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta('web', 'shop'),
      spec: {
        nodeName: 'node-1',
        restartPolicy: 'Never',
        runtimeClassName: 'default',
        containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '1' }, limits: { cpu: '1' } } }],
      },
    },
  },
  {
    resource: { resource: 'persistentvolumeclaims' },
    kind: { kind: 'PersistentVolumeClaim' },
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta('data', 'shop'),
      spec: { resources: { requests: { storage: '1Gi' } } },
    },
  },
  {
    resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
    kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
    object: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: meta('in', 'shop'), spec: {} },
  },
  {
    resource: { resource: 'events' },
    kind: { kind: 'Event' },
    object: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: meta('e', 'shop'),
      involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web' },
      source: { component: 'kubelet', host: 'node-1' },
    },
  },
];

/** Creates, updates and deletes of every kind, to every endpoint the plugin serves, learning first. */
function writes(): { endpoint: Endpoint; input: ReviewInput }[] {
  const order: Endpoint[] = ['learn', 'mutate', 'validate'];
  const out: { endpoint: Endpoint; input: ReviewInput }[] = [];
  for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const)
    for (const endpoint of order)
      for (const { resource, kind, object } of OBJECTS)
        out.push({
          endpoint,
          input: {
            operation,
            resource,
            kind,
            name: object.metadata!.name,
            ...(object.metadata!.namespace && { namespace: object.metadata!.namespace }),
            object: operation === 'DELETE' ? null : object,
            oldObject: operation === 'CREATE' ? null : object,
          },
        });
  return out;
}

async function exercise(plugin: AnyAdmissionPlugin, config: unknown): Promise<Touch[]> {
  const endpoint = inject('dynamodbEndpoint');
  const tableName = `partitions-${plugin.metadata.name}-${process.pid}-${Date.now()}`;
  await createTable(endpoint, tableName);
  const seen: Touch[] = [];
  const client = recordingClient(endpoint, seen);
  try {
    const handler = createStatefulAdmissionHandler(plugin, {
      config,
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      state: (request) => createRequestState(request, { plugin: plugin.metadata.name, client, tableName }),
    });
    const served = new Set(endpointsOf(plugin.metadata));
    for (const { endpoint: e, input } of writes()) {
      if (!served.has(e)) continue;
      const result = await handler(
        gatewayEvent(`/${plugin.metadata.name}/${e}`, JSON.stringify(review(input))),
        lambdaContext,
      );
      expect(result.statusCode, `${plugin.metadata.name}/${e}: ${result.body}`).toBe(200);
    }
    return seen;
  } finally {
    client.destroy();
  }
}

const roles = serverlessRoles(plugins, {
  service: 'serverless-admission',
  stage: 'test',
  auth: 'mtls',
  provisionedConcurrency: 0,
}) as Record<string, { Properties: { Policies: { PolicyDocument: PolicyDocument }[] } }>;

/** The plugin's role as deployed, its table ARN resolved. */
function rolePolicy(plugin: AnyAdmissionPlugin): PolicyDocument {
  const document = roles[roleLogicalId(plugin.metadata)]!.Properties.Policies[0]!.PolicyDocument;
  return {
    ...document,
    Statement: document.Statement.map((s) => ({
      ...s,
      Resource: [s.Resource].flat().map((r: any) => (r?.['Fn::GetAtt']?.[0] === 'StateTable' ? TABLE_ARN : r)),
    })),
  };
}

describe('every stateful function touches only the partitions its role allows', () => {
  it('covers every stateful plugin of the registry', () => {
    expect(stateful.map((c) => c.plugin.metadata.name).sort()).toEqual(
      plugins
        .filter((p) => usesStore(p.metadata) && p.metadata.name !== 'image-policy-webhook')
        .map((p) => p.metadata.name)
        .sort(),
    );
  });

  it.each(stateful.map((c) => [c.plugin.metadata.name, c] as const))('%s', async (name, { plugin, config }) => {
    const seen = await exercise(plugin, config);
    expect(seen.length, `${name} made no store call`).toBeGreaterThan(0);
    const policy = rolePolicy(plugin);
    const refused = seen.filter(
      (touch) =>
        evaluate(policy, {
          action: touch.action,
          resource: TABLE_ARN,
          context: { 'dynamodb:LeadingKeys': touch.keys },
        }) !== 'allowed',
    );
    expect(refused, `${name} may touch ${partitionPatterns(plugin.metadata).join(', ')}`).toEqual([]);
    // And the declaration is no wider than the plugin: each declared partition was used.
    const used = (pattern: string) =>
      seen.some((t) => t.keys.some((k) => new RegExp(`^${pattern.replace('*', '.*')}$`).test(k)));
    expect(
      partitionPatterns(plugin.metadata).filter((p) => !used(p)),
      `${name}: declared, never touched`,
    ).toEqual([]);
  });

  it("the image policy's decision cache, which needs a backend to fill: its own partition only", async () => {
    const plugin = plugins.find((p) => p.metadata.name === 'image-policy-webhook')!;
    const endpoint = inject('dynamodbEndpoint');
    const tableName = `partitions-cache-${process.pid}-${Date.now()}`;
    await createTable(endpoint, tableName);
    const seen: Touch[] = [];
    const client = recordingClient(endpoint, seen);
    try {
      const state = createRequestState(
        { uid: 'u1', dryRun: false },
        { plugin: plugin.metadata.name, client, tableName },
      );
      await state.decisionCache.put('images:nginx', { allowed: true } as never, 60);
      expect(await state.decisionCache.get('images:nginx')).toBeDefined();
    } finally {
      client.destroy();
    }
    expect(seen.map((t) => t.action)).toEqual(['dynamodb:PutItem', 'dynamodb:GetItem']);
    const policy = rolePolicy(plugin);
    for (const touch of seen)
      expect(
        evaluate(policy, {
          action: touch.action,
          resource: TABLE_ARN,
          context: { 'dynamodb:LeadingKeys': touch.keys },
        }),
      ).toBe('allowed');
    // Another plugin's cache, a quota ledger, a learned namespace: refused.
    for (const key of ['cache#other-plugin#images:nginx', 'rq#shop', 'ns#shop', 'erl#server'])
      expect(
        evaluate(policy, {
          action: 'dynamodb:PutItem',
          resource: TABLE_ARN,
          context: { 'dynamodb:LeadingKeys': [key] },
        }),
        key,
      ).toBe('implicitly denied');
  });

  it("no role reaches another plugin's ledger", () => {
    const ledgers = ['rq#shop', 'rq#shop#queue', 'crq#team-a', 'erl#server', 'req#erl#u1'];
    const owners: Record<string, string[]> = {
      'rq#shop': ['resource-quota'],
      'rq#shop#queue': ['resource-quota'],
      'crq#team-a': ['cluster-resource-quota'],
      'erl#server': ['event-rate-limit'],
      'req#erl#u1': ['event-rate-limit'],
    };
    for (const plugin of plugins.filter((p) => usesStore(p.metadata)))
      for (const key of ledgers) {
        const decision = evaluate(rolePolicy(plugin), {
          action: 'dynamodb:UpdateItem',
          resource: TABLE_ARN,
          context: { 'dynamodb:LeadingKeys': [key] },
        });
        expect(decision === 'allowed', `${plugin.metadata.name} on ${key}`).toBe(
          owners[key]!.includes(plugin.metadata.name),
        );
      }
  });
});
