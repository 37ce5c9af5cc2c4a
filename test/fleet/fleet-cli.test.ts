// The commands of a fleet, run in-process in a directory holding two clusters' files as an
// operator's repository does: `check`, `audit` and `sync` with --cluster judge and load under that
// cluster's own AdmissionConfiguration; sync writes the cluster's keys; `sync --forget` deletes a
// removed cluster's records and nothing else (read back through the AWS SDK, not through our
// store); an unknown cluster is named with its file, the clusters that exist and the nearest one.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchWriteItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditCommand } from '../../infra/check/audit-cli.js';
import { checkCommand } from '../../infra/check/cli.js';
import { checkConfigCommand } from '../../infra/check-config.js';
import { emitCommand } from '../../infra/emit/cli.js';
import { syncCommand } from '../../infra/sync/cli.js';
import { forgetCluster } from '../../infra/sync/forget.js';
import { clusterPartitioned } from '../../lib/state/cluster-partition.js';
import { localDynamoDbClient } from '../../lib/state/dynamodb-sdk.js';
import { createRequestState } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { testStore } from '../support/dynamodb.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NAMESPACES = join(ROOT, 'test/fixtures/kubectl/namespaces.json');
const configuration = (...plugins: string[]) =>
  `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n${plugins.map((p) => `- name: ${p}\n`).join('')}`;
/** Both learn namespaces; only blue enforces AlwaysPullImages, only green PodNodeSelector. */
const CLUSTERS: Record<string, string> = {
  blue: configuration('NamespaceLifecycle', 'AlwaysPullImages'),
  green: configuration('NamespaceLifecycle', 'PodNodeSelector'),
};

const home = process.cwd();
let dir: string;
let store: TestStore;
const admin = () => localDynamoDbClient(store.endpoint);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-cli-'));
  mkdirSync(join(dir, 'config/clusters'), { recursive: true });
  for (const [name, text] of Object.entries(CLUSTERS)) writeFileSync(join(dir, `config/clusters/${name}.yaml`), text);
  writeFileSync(
    join(dir, 'pod.yaml'),
    'apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: team-a}\nspec:\n  containers: [{name: c, image: nginx, imagePullPolicy: IfNotPresent}]\n',
  );
  writeFileSync(
    join(dir, 'pods.json'),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web', namespace: 'team-a', uid: 'pod-web' },
          spec: { containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'IfNotPresent' }] },
        },
      ],
    }),
  );
  // The commands read config/clusters/ where they run, as in an operator's checkout (forks pool:
  // this file has its own process).
  process.chdir(dir);
  store = await testStore('fleet-cli');
});

afterAll(() => {
  process.chdir(home);
  store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Command = (
  argv: string[],
  io: { stdout: (t: string) => void; stderr: (t: string) => void; env: NodeJS.ProcessEnv },
) => Promise<number>;

async function run(command: Command, argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const code = await command(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
  });
  return { code, stdout, stderr };
}

const storeEnv = () => ({ DYNAMODB_ENDPOINT: store.endpoint, STATE_TABLE: store.tableName });
const sync = (argv: string[]) => run(syncCommand, argv, storeEnv());

/** Every item of the table, read through the SDK: the oracle, apart from our store's code. */
async function tableItems(): Promise<Record<string, AttributeValue>[]> {
  const client = admin();
  const items: Record<string, AttributeValue>[] = [];
  try {
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({ TableName: store.tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  } finally {
    client.destroy();
  }
  return items.sort((a, b) => `${a.pk.S}|${a.sk.S}`.localeCompare(`${b.pk.S}|${b.sk.S}`));
}
const under = (items: Record<string, AttributeValue>[], prefix: string) =>
  items.filter((item) => item.pk.S?.startsWith(prefix));

describe('--cluster on check and audit: the cluster own AdmissionConfiguration', () => {
  it('check judges the pod with blue plugins at blue, and with green ones at green', async () => {
    const blue = await run(checkCommand, ['-f', 'pod.yaml', '--cluster', 'blue']);
    expect(blue.code, blue.stderr).toBe(0);
    expect(blue.stderr).toContain('configuration config/clusters/blue.yaml');
    expect(blue.stdout).toMatch(/always-pull-images\s+patched/);
    const green = await run(checkCommand, ['-f', 'pod.yaml', '--cluster', 'green']);
    expect(green.code, green.stderr).toBe(0);
    expect(green.stdout).not.toContain('always-pull-images');
    expect(green.stdout).toContain('pod-node-selector');
  });

  it('audit finds the IfNotPresent pod failing at blue and nothing failing at green', async () => {
    const blue = await run(auditCommand, ['--from', 'pods.json', '--cluster', 'blue']);
    expect(blue.code, blue.stderr).toBe(0);
    expect(blue.stderr).toContain('cluster blue, configuration config/clusters/blue.yaml');
    expect(blue.stdout).toMatch(/policy: always-pull-images[\s\S]*result: fail/);
    const green = await run(auditCommand, ['--from', 'pods.json', '--cluster', 'green']);
    expect(green.code, green.stderr).toBe(0);
    expect(green.stdout).not.toContain('result: fail');
    expect(green.stdout).not.toContain('always-pull-images');
  });

  it('--cluster and --config together are a usage error', async () => {
    const check = await run(checkCommand, ['-f', 'pod.yaml', '--cluster', 'blue', '--config', 'x.yaml']);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain('--config and --cluster both name a configuration');
    const audit = await run(auditCommand, ['--from', 'pods.json', '--cluster', 'blue', '--config', 'x.yaml']);
    expect(audit.code).toBe(2);
  });

  it('each command documents --cluster in its --help', async () => {
    for (const command of [checkCommand, auditCommand, syncCommand] as Command[]) {
      const help = await run(command, ['--help']);
      expect(help.stdout).toMatch(/--cluster NAME\s+a fleet's cluster/);
    }
  });
});

describe('an unknown cluster', () => {
  it('is named with its file, the nearest cluster and the clusters that exist, by every command', async () => {
    // check, audit, sync, check-config, emit: one resolver (lib/config/fleet.ts) for all.
    const answers = [
      await run(checkCommand, ['-f', 'pod.yaml', '--cluster', 'bleu']),
      await run(auditCommand, ['--from', 'pods.json', '--cluster', 'bleu']),
      await sync(['--from', NAMESPACES, '--cluster', 'bleu']),
      await run(async (argv, io) => checkConfigCommand(argv, io), ['--cluster', 'bleu']),
      await run(emitCommand, ['--cluster', 'bleu', '--base-url', 'https://127.0.0.1:8443']),
    ];
    for (const answer of answers) {
      expect(answer.code).not.toBe(0);
      expect(answer.stderr).toContain('no file config/clusters/bleu.yaml; did you mean "blue"? clusters: blue, green');
    }
  });

  it('far from every name, lists the clusters without a guess', async () => {
    const answer = await run(checkCommand, ['-f', 'pod.yaml', '--cluster', 'production']);
    expect(answer.stderr).toContain('no file config/clusters/production.yaml; clusters: blue, green');
  });
});

describe('sync --cluster, and forgetting a removed cluster', () => {
  const lookalike = 'cluster#blue-2#obj#StorageClass';
  let before: Record<string, AttributeValue>[];

  beforeAll(async () => {
    // The same namespaces in both clusters, and once for a deployment without a fleet.
    for (const argv of [
      ['--cluster', 'blue'],
      ['--cluster', 'green'],
      ['--admission-config', 'config/clusters/green.yaml'],
    ]) {
      const loaded = await sync(['--from', NAMESPACES, ...argv]);
      expect(loaded.code, loaded.stderr).toBe(0);
    }
    // More of blue's records than one BatchWriteItem deletes, and a cluster whose name begins
    // with blue's: its records are not blue's.
    const client = admin();
    try {
      const extra = (pk: string, sk: string, n: number) =>
        Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { pk: { S: pk }, sk: { S: `${sk}-${i}` } } } }));
      for (const batch of [
        extra('cluster#blue#obj#StorageClass', 'a', 25),
        extra('cluster#blue#obj#StorageClass', 'b', 25),
        extra(lookalike, 'a', 3),
      ])
        await client.send(new BatchWriteItemCommand({ RequestItems: { [store.tableName]: batch } }));
    } finally {
      client.destroy();
    }
    before = await tableItems();
  });

  it('writes each cluster its own keys, which that cluster reads as its own', async () => {
    expect(under(before, 'cluster#blue#ns#').length).toBeGreaterThan(0);
    expect(under(before, 'cluster#blue#ns#').map((i) => i.pk.S?.slice('cluster#blue#'.length))).toEqual(
      under(before, 'cluster#green#ns#').map((i) => i.pk.S?.slice('cluster#green#'.length)),
    );
    const green = createRequestState(
      { uid: 'read', dryRun: false },
      { plugin: 'fleet-cli', client: clusterPartitioned(store.client, 'green'), tableName: store.tableName },
    );
    expect(
      (await green.learnedNamespaces.get('team-a'))?.annotations['scheduler.alpha.kubernetes.io/node-selector'],
    ).toBe('team=a');
    // The single cluster's records: unprefixed.
    expect(under(before, 'ns#').length).toBe(under(before, 'cluster#green#ns#').length);
  });

  it('refuses while the cluster file exists, deleting nothing', async () => {
    const refused = await sync(['--cluster', 'blue', '--forget']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('cluster blue still has its file config/clusters/blue.yaml: delete it');
    expect(await tableItems()).toEqual(before);
  });

  it('counts with --dry-run, then deletes every record of blue and no other', async () => {
    rmSync('config/clusters/blue.yaml');
    const blue = under(before, 'cluster#blue#');
    const counted = await sync(['--cluster', 'blue', '--forget', '--dry-run']);
    expect(counted.code, counted.stderr).toBe(0);
    expect(counted.stdout).toBe(`cluster blue has ${blue.length} records (dry run: nothing deleted)\n`);
    expect(await tableItems()).toEqual(before);

    mkdirSync('.local/clusters/blue', { recursive: true });
    const forgotten = await sync(['--cluster', 'blue', '--forget']);
    expect(forgotten.code, forgotten.stderr).toBe(0);
    expect(forgotten.stderr).toContain(`deleted ${blue.length} records`);
    expect(forgotten.stdout).toBe(`cluster blue: deleted ${blue.length} records\n`);
    // Files are the operator's to delete: named, left alone.
    expect(forgotten.stderr).toContain('.local/clusters/blue/ still holds');
    expect(existsSync('.local/clusters/blue')).toBe(true);
    const after = await tableItems();
    expect(under(after, 'cluster#blue#')).toEqual([]);
    // Everyone else's records, item for item: green's, the lookalike cluster's, the single cluster's.
    expect(after).toEqual(before.filter((item) => !item.pk.S?.startsWith('cluster#blue#')));
    expect(under(after, lookalike)).toHaveLength(3);
  });

  it('--forget needs --cluster, and takes no listing', async () => {
    expect((await sync(['--forget'])).code).toBe(2);
    expect((await sync(['--forget', '--cluster', 'blue', '--from', NAMESPACES])).code).toBe(2);
    expect((await sync(['--dry-run', '--from', NAMESPACES])).code).toBe(2);
  });
});

describe('forgetCluster when DynamoDB leaves deletes unprocessed', () => {
  // AWS itself, stood in for: a Scan page of 30 keys, then BatchWriteItem answers that leave
  // part of each batch unprocessed (throttling), as the service may.
  const keys = Array.from({ length: 30 }, (_, i) => ({ pk: { S: 'cluster#gone#ns#a' }, sk: { S: `k${i}` } }));
  function throttlingDynamoDb(leaveUnprocessed: (attempt: number) => number) {
    const deleted: string[] = [];
    let attempt = 0;
    const client = {
      async send(command: ScanCommand | BatchWriteItemCommand) {
        if (command instanceof ScanCommand) return { Items: keys, ScannedCount: 40 };
        const writes = command.input.RequestItems?.t ?? [];
        const left = writes.slice(0, leaveUnprocessed(attempt++));
        for (const w of writes.slice(left.length)) deleted.push(w.DeleteRequest?.Key?.sk.S as string);
        return { UnprocessedItems: left.length > 0 ? { t: left } : {} };
      },
    };
    return { client: client as never, deleted };
  }
  const options = (sleeps: number[]) => ({
    table: 't',
    cluster: 'gone',
    dryRun: false,
    progress: () => undefined,
    sleep: async (ms: number) => void sleeps.push(ms),
  });

  it('sends the unprocessed deletes again, backing off, until every key is deleted once', async () => {
    const sleeps: number[] = [];
    // First batch (25): 10 left, then 3, then none; second batch (5): none left.
    const { client, deleted } = throttlingDynamoDb((attempt) => [10, 3, 0, 0][attempt] ?? 0);
    const result = await forgetCluster(client, options(sleeps));
    expect(result).toEqual({ records: 30, scanned: 40 });
    expect(deleted.sort()).toEqual(keys.map((k) => k.sk.S).sort());
    expect(sleeps).toEqual([50, 100]);
  });

  it('gives up after its attempts, saying to run it again', async () => {
    const { client } = throttlingDynamoDb(() => 1);
    await expect(forgetCluster(client, options([]))).rejects.toThrow(
      '1 delete still unprocessed after 8 attempts: run --forget again',
    );
  });
});
