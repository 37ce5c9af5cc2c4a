import { PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { createStateTable, localDynamoDbClient } from '../../lib/state/index.js';
import { startEmbeddedDynamoDb } from '../../infra/local/dynamodb.js';
const db = await startEmbeddedDynamoDb({});
const c = localDynamoDbClient(db.endpoint);
await createStateTable(c, 'tbl');
for (let round = 0; round < 4; round++) {
  let t = performance.now();
  await Promise.all(Array.from({ length: 64 }, (_, i) => c.send(new PutItemCommand({ TableName: 'tbl', Item: { pk: { S: `rq#n${round}` }, sk: { S: `charge#${i}` }, data: { S: 'x'.repeat(100) } } }))));
  const put = performance.now() - t; t = performance.now();
  await Promise.all(Array.from({ length: 64 }, (_, i) => c.send(new UpdateItemCommand({ TableName: 'tbl', Key: { pk: { S: `rq#n${round}` }, sk: { S: 'queue' } }, UpdateExpression: 'SET #e = list_append(if_not_exists(#e, :empty), :me)', ExpressionAttributeNames: { '#e': 'entries' }, ExpressionAttributeValues: { ':empty': { L: [] }, ':me': { L: [{ M: { u: { S: `u${i}` } } }] } }, ReturnValues: 'ALL_NEW' }))));
  const upd = performance.now() - t; t = performance.now();
  await Promise.all(Array.from({ length: 64 }, () => c.send(new QueryCommand({ TableName: 'tbl', ConsistentRead: true, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `rq#n${round}` } } }))));
  const q = performance.now() - t; t = performance.now();
  for (let i = 0; i < 20; i++) await c.send(new QueryCommand({ TableName: 'tbl', ConsistentRead: true, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `rq#n${round}` } } }));
  const q1 = (performance.now() - t) / 20;
  console.log(JSON.stringify({ put, upd, q, q1 }));
}
c.destroy(); await db.stop();
