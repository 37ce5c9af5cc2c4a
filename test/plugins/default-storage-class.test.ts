// Upstream's table (plugin/pkg/admission/storage/storageclass/setdefault/admission_test.go,
// TestAdmission) ported: each case's StorageClasses are learned through the plugin's own learning
// webhook (upstream's informer), on a table of its own, and the claim goes through the real Lambda
// handler; the mutation is applied as a real JSON patch and run again on its own output (upstream's
// WithReinvocationTesting). Plus: the beta annotations, the twin, deletes and updates of classes,
// `npm run sync`, dry runs and store failures.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/default-storage-class/plugin.js';
import { syncCommand } from '../../infra/sync/cli.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { setLogSink } from '../../lib/http/log.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor } from '../support/dynamodb.js';
import { classClusters, classWrite, patchedObject } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';
import { review } from '../support/review.js';

const DEFAULT = 'storageclass.kubernetes.io/is-default-class';
const storageClass = (name: string, annotations?: Record<string, string>, creationTimestamp?: string): KubeObject => ({
  metadata: { name, ...(annotations && { annotations }), ...(creationTimestamp && { creationTimestamp }) },
  provisioner: name,
});

const defaultClass1 = storageClass('default1', { [DEFAULT]: 'true' });
const defaultClass2 = storageClass('default2', { [DEFAULT]: 'true' });
const classWithFalseDefault = storageClass('nondefault1', { [DEFAULT]: 'false' });
const classWithNoDefault = storageClass('nondefault2');
const classWithEmptyDefault = storageClass('nondefault2', { [DEFAULT]: '' });
// Upstream's two timestamps differ by a nanosecond; metav1.Time on the wire has whole seconds.
const classWithCreateTime1 = storageClass('default1', { [DEFAULT]: 'true' }, '2022-01-01T00:00:01Z');
const classWithCreateTime2 = storageClass('default2', { [DEFAULT]: 'true' }, '2022-01-01T00:00:00Z');
const nonDefaults = [classWithFalseDefault, classWithNoDefault, classWithEmptyDefault];

const claim = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'ns', ...(annotations && { annotations }) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const claimWithClass = claim('claimWithClass', { storageClassName: 'foo' });
const claimWithEmptyClass = claim('claimWithEmptyClass', { storageClassName: '' });
const claimWithNoClass = claim('claimWithNoClass');

const create = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  object,
  resource: { resource: 'persistentvolumeclaims' },
  ...extra,
});
const classOf = (object: KubeObject) => (object.spec as { storageClassName?: string }).storageClassName;

type Invoke = ReturnType<typeof lambdaFor>;

/** Mutates, applies the patch, runs the mutation again on its output (nothing more to do), then the twin. */
async function admit(invoke: Invoke, object: KubeObject): Promise<KubeObject> {
  const mutated = patchedObject(await invoke('mutate', create(object)), object);
  expect(patchedObject(await invoke('mutate', create(mutated)), mutated)).toEqual(mutated);
  expect((await invoke('validate', create(mutated))).review?.response?.allowed).toBe(true);
  return mutated;
}

const freshCluster = classClusters(plugin, 'storageclasses');

describe('TestAdmission (upstream table)', () => {
  const cases: { name: string; classes: KubeObject[]; claim: KubeObject; expectedClassName: string | undefined }[] = [
    {
      name: 'no default, no modification of PVCs',
      classes: nonDefaults,
      claim: claimWithNoClass,
      expectedClassName: undefined,
    },
    {
      name: 'one default, modify PVC with class=nil',
      classes: [defaultClass1, ...nonDefaults],
      claim: claimWithNoClass,
      expectedClassName: 'default1',
    },
    {
      name: "one default, no modification of PVC with class=''",
      classes: [defaultClass1, ...nonDefaults],
      claim: claimWithEmptyClass,
      expectedClassName: '',
    },
    {
      name: "one default, no modification of PVC with class='foo'",
      classes: [defaultClass1, ...nonDefaults],
      claim: claimWithClass,
      expectedClassName: 'foo',
    },
    {
      name: "two defaults, no modification of PVC with class=''",
      classes: [defaultClass1, defaultClass2, ...nonDefaults],
      claim: claimWithEmptyClass,
      expectedClassName: '',
    },
    {
      name: "two defaults, no modification of PVC with class='foo'",
      classes: [defaultClass1, defaultClass2, ...nonDefaults],
      claim: claimWithClass,
      expectedClassName: 'foo',
    },
    {
      name: 'two defaults with same creation time, choose the one with smaller name',
      classes: [defaultClass1, defaultClass2, ...nonDefaults],
      claim: claimWithNoClass,
      expectedClassName: 'default1',
    },
    {
      name: 'two defaults, choose the one with newer creation time',
      classes: [classWithCreateTime1, classWithCreateTime2, ...nonDefaults],
      claim: claimWithNoClass,
      expectedClassName: 'default1',
    },
  ];
  it.each(cases)('$name', async ({ classes, claim: input, expectedClassName }) => {
    const { invoke } = await freshCluster(classes);
    expect(classOf(await admit(invoke, input))).toBe(expectedClassName);
  });

  it('the newer default wins whatever the names (reversed)', async () => {
    const older = storageClass('a-older', { [DEFAULT]: 'true' }, '2022-01-01T00:00:00Z');
    const newer = storageClass('z-newer', { [DEFAULT]: 'true' }, '2023-01-01T00:00:00Z');
    const { invoke } = await freshCluster([older, newer]);
    expect(classOf(await admit(invoke, claimWithNoClass))).toBe('z-newer');
  });
});

describe('what upstream reads besides spec.storageClassName', () => {
  it('the beta default annotation marks a default too', async () => {
    const { invoke } = await freshCluster([
      storageClass('beta', { 'storageclass.beta.kubernetes.io/is-default-class': 'true' }),
    ]);
    expect(classOf(await admit(invoke, claimWithNoClass))).toBe('beta');
  });

  it('a claim with the beta storage-class annotation has a class and is left alone', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const annotated = claim('annotated', {}, { 'volume.beta.kubernetes.io/storage-class': 'slow' });
    expect(await admit(invoke, annotated)).toEqual(annotated);
  });

  it('only creates of claims are judged: updates, subresources and other resources are left alone', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const cases: ReviewInput[] = [
      create(claimWithNoClass, { operation: 'UPDATE', oldObject: claimWithNoClass }),
      create(claimWithNoClass, { subResource: 'status' }),
      { object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: {} } },
    ];
    for (const input of cases) {
      const response = (await invoke('mutate', input)).review!.response!;
      expect(response.allowed).toBe(true);
      expect(response.patch).toBeUndefined();
    }
  });
});

describe('learned StorageClasses follow their writes', () => {
  it('a default deleted, or its annotation removed, stops being the default', async () => {
    const { invoke } = await freshCluster([defaultClass1, defaultClass2]);
    await invoke('learn', classWrite('storageclasses', defaultClass1, 'DELETE'));
    expect(classOf(await admit(invoke, claimWithNoClass))).toBe('default2');
    await invoke('learn', classWrite('storageclasses', storageClass('default2'), 'UPDATE'));
    expect(classOf(await admit(invoke, claimWithNoClass))).toBeUndefined();
  });

  it('a dry-run StorageClass write sends zero writes and teaches nothing', async () => {
    const { store, invoke } = await freshCluster([]);
    store.reset();
    const result = await invoke('learn', classWrite('storageclasses', defaultClass1, 'CREATE', { dryRun: true }));
    expect(result.review?.response?.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(classOf(await admit(invoke, claimWithNoClass))).toBeUndefined();
  });

  it('a dry-run claim sends zero writes', async () => {
    const { store, invoke } = await freshCluster([defaultClass1]);
    store.reset();
    const result = await invoke('mutate', create(claimWithNoClass, { dryRun: true }));
    expect(classOf(patchedObject(result, claimWithNoClass))).toBe('default1');
    expect(store.writes()).toBe(0);
  });
});

describe('the twin (ours: upstream only mutates)', () => {
  it('refuses a new claim still without a class while a default is known', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const response = (await invoke('validate', create(claimWithNoClass))).review!.response!;
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe(
      'persistentvolumeclaims "claimWithNoClass" is forbidden: spec.storageClassName: Required value: ' +
        'the default StorageClass "default1" was not set (DefaultStorageClass sets it)',
    );
  });

  it('admits a claim without a class when no default is known, and fails open', async () => {
    const { invoke } = await freshCluster(nonDefaults);
    expect((await invoke('validate', create(claimWithNoClass))).review?.response?.allowed).toBe(true);
    expect(plugin.metadata.validating?.failurePolicy).toBe('Ignore');
    expect(plugin.metadata.mutating?.failurePolicy).toBe('Ignore');
  });
});

describe('`npm run sync` loads the classes that predate the webhook', () => {
  it('a listing of StorageClasses is complete: listed ones are learned, others removed', async () => {
    const { store, invoke } = await freshCluster([defaultClass2]);
    const dir = mkdtempSync(join(tmpdir(), 'default-storage-class-'));
    try {
      const file = join(dir, 'classes.json');
      const listed = (object: KubeObject) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', ...object });
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [listed(defaultClass1)] }));
      let stderr = '';
      const code = await syncCommand(['--from', file], {
        stdout: () => undefined,
        stderr: (t) => {
          stderr += t;
        },
        env: { DYNAMODB_ENDPOINT: store.endpoint, STATE_TABLE: store.tableName },
      });
      expect(code).toBe(0);
      expect(stderr).toContain('storageclasses: 1 recorded (complete listing), 1 removed');
      expect(classOf(await admit(invoke, claimWithNoClass))).toBe('default1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('store failures are HTTP 500, so failurePolicy decides', () => {
  it('an unreachable store answers 500, never an allow', async () => {
    const { store } = await freshCluster([]);
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    try {
      const broken = {
        ...store,
        state: (request: { uid: string; dryRun: boolean }) =>
          createRequestState(request, { client, tableName: store.tableName, plugin: plugin.metadata.name }),
      } as TestStore;
      expect((await lambdaFor(plugin, broken)('mutate', create(claimWithNoClass))).statusCode).toBe(500);
    } finally {
      client.destroy();
    }
  });

  it("a store failure while learning a StorageClass loses the observation, not the class's write", async () => {
    const { store } = await freshCluster([]);
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    const down = createStatefulAdmissionHandler(plugin, {
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      state: (request) =>
        createRequestState(request, { client, tableName: store.tableName, plugin: plugin.metadata.name }),
    });
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    try {
      const result = await down(
        gatewayEvent(
          '/default-storage-class/learn',
          JSON.stringify(review(classWrite('storageclasses', defaultClass1))),
        ),
        lambdaContext,
      );
      expect(result.statusCode).toBe(200);
      expect(JSON.parse(result.body).response.allowed).toBe(true);
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({
        level: 'warn',
        learningLost: expect.stringContaining('state store'),
      });
    } finally {
      setLogSink(undefined);
      client.destroy();
    }
  });
});
