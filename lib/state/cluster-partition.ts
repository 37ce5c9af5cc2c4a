// A fleet's clusters share one table, and none reads or writes another's records: every partition
// key a cluster's requests send is prefixed with `cluster#<name>#`, and the prefix is taken off
// again in what the table answers. One wrapper around the DynamoDB port, so every store over it
// (namespaces, learned objects, placements, quota ledgers, token buckets, the decision cache, the
// cluster reader's checkpoints and sinks, sync) is partitioned without knowing it. Cluster names
// are DNS labels (no `#`), so no cluster's prefix begins another's, and no single-cluster key
// (`ns#`, `rq#`, `erl#`, ...) begins with `cluster#`: a deployment without a fleet keeps the keys
// it always had. Deleting a cluster's state is deleting the partitions under its prefix
// (forgetCluster); IAM can scope a role to them (dynamodb:LeadingKeys `cluster#<name>#*`).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDb, DynamoDbOperation, DynamoDbOperations } from './dynamodb.js';

type Item = Record<string, AttributeValue>;

/** The prefix of every partition key a cluster of a fleet writes. */
export const clusterKeyPrefix = (cluster: string): string => `cluster#${cluster}#`;

function mapPk(item: Item | undefined, map: (pk: string) => string): Item | undefined {
  const pk = item?.pk?.S;
  return item === undefined || pk === undefined ? item : { ...item, pk: { S: map(pk) } };
}

/** The request with every key and item's `pk` (and a Query's `:pk`) under the cluster's prefix. */
function prefixInput(operation: DynamoDbOperation, input: Record<string, unknown>, add: (pk: string) => string) {
  const keyed = (body: Record<string, unknown> | undefined) =>
    body && {
      ...body,
      ...(body.Key !== undefined && { Key: mapPk(body.Key as Item, add) }),
      ...(body.Item !== undefined && { Item: mapPk(body.Item as Item, add) }),
    };
  switch (operation) {
    case 'Query': {
      const values = input.ExpressionAttributeValues as Item;
      // The store's one query shape (store.ts): a partition named `:pk`. Any other is refused, not sent.
      if (values?.[':pk']?.S === undefined) throw new Error('a partitioned Query names its partition :pk');
      return { ...input, ExpressionAttributeValues: { ...values, ':pk': { S: add(values[':pk'].S as string) } } };
    }
    case 'BatchWriteItem': {
      const requests = input.RequestItems as Record<string, Record<string, Record<string, unknown>>[]>;
      const mapped: typeof requests = {};
      for (const [table, writes] of Object.entries(requests))
        mapped[table] = writes.map((w) => ({
          ...(w.DeleteRequest && { DeleteRequest: keyed(w.DeleteRequest) }),
          ...(w.PutRequest && { PutRequest: keyed(w.PutRequest) }),
        })) as never;
      return { ...input, RequestItems: mapped };
    }
    case 'TransactWriteItems': {
      const items = input.TransactItems as Record<string, Record<string, unknown>>[];
      return {
        ...input,
        TransactItems: items.map((item) => Object.fromEntries(Object.entries(item).map(([k, v]) => [k, keyed(v)]))),
      };
    }
    default:
      return keyed(input);
  }
}

/** The answer with the cluster's prefix taken off every item it carries. */
function stripOutput(output: Record<string, unknown>, strip: (pk: string) => string) {
  const out = { ...output };
  for (const field of ['Item', 'Attributes', 'LastEvaluatedKey'] as const)
    if (out[field] !== undefined) out[field] = mapPk(out[field] as Item, strip);
  if (Array.isArray(out.Items)) out.Items = (out.Items as Item[]).map((item) => mapPk(item, strip));
  if (out.UnprocessedItems !== undefined) {
    const unprocessed = out.UnprocessedItems as Record<string, Record<string, { Key?: Item; Item?: Item }>[]>;
    out.UnprocessedItems = Object.fromEntries(
      Object.entries(unprocessed).map(([table, writes]) => [
        table,
        writes.map((w) => ({
          ...(w.DeleteRequest && { DeleteRequest: { Key: mapPk(w.DeleteRequest.Key, strip) } }),
          ...(w.PutRequest && { PutRequest: { Item: mapPk(w.PutRequest.Item, strip) } }),
        })),
      ]),
    );
  }
  return out;
}

/** The failure with the prefix taken off the items it reports (ALL_OLD, cancellation reasons). */
function stripError(error: unknown, strip: (pk: string) => string): unknown {
  const e = error as { Item?: Item; CancellationReasons?: { Item?: Item }[] };
  if (e === null || typeof e !== 'object') return error;
  if (e.Item !== undefined) e.Item = mapPk(e.Item, strip);
  if (Array.isArray(e.CancellationReasons))
    for (const reason of e.CancellationReasons) if (reason.Item) reason.Item = mapPk(reason.Item, strip);
  return error;
}

const partitioned = new WeakMap<DynamoDb, Map<string, DynamoDb>>();

/** `client` as one cluster of a fleet sees the table: its own partitions only. */
export function clusterPartitioned(client: DynamoDb, cluster: string): DynamoDb {
  let byCluster = partitioned.get(client);
  if (byCluster === undefined) {
    byCluster = new Map();
    partitioned.set(client, byCluster);
  }
  let wrapped = byCluster.get(cluster);
  if (wrapped !== undefined) return wrapped;
  const prefix = clusterKeyPrefix(cluster);
  const add = (pk: string) => `${prefix}${pk}`;
  const strip = (pk: string) => (pk.startsWith(prefix) ? pk.slice(prefix.length) : pk);
  wrapped = {
    async call<Op extends DynamoDbOperation>(
      operation: Op,
      input: DynamoDbOperations[Op]['input'],
    ): Promise<DynamoDbOperations[Op]['output']> {
      const sent = prefixInput(
        operation,
        input as unknown as Record<string, unknown>,
        add,
      ) as DynamoDbOperations[Op]['input'];
      try {
        const output = await client.call(operation, sent);
        return stripOutput(output as Record<string, unknown>, strip) as DynamoDbOperations[Op]['output'];
      } catch (error) {
        throw stripError(error, strip);
      }
    },
    destroy: () => client.destroy(),
  };
  byCluster.set(cluster, wrapped);
  return wrapped;
}
