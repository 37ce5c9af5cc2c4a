// Upstream's table (plugin/pkg/admission/storage/persistentvolume/resize/admission_test.go,
// TestPVCResizeAdmission) ported: the gold (allowVolumeExpansion: true) and silver (false)
// StorageClasses are learned through the plugin's learning webhook, and every claim update goes through
// the real Lambda handler. Plus: a class never learned, a class changed by the update, the beta
// class annotation, shrinking, what is not judged, dry runs and store failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/persistent-volume-claim-resize/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, testStore } from '../support/dynamodb.js';
import { classWrite, learnClasses } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';

const goldClass: KubeObject = {
  metadata: { name: 'gold' },
  provisioner: 'kubernetes.io/glusterfs',
  allowVolumeExpansion: true,
};
const silverClass: KubeObject = {
  metadata: { name: 'silver' },
  provisioner: 'kubernetes.io/glusterfs',
  allowVolumeExpansion: false,
};

let store: TestStore;
let invoke: ReturnType<typeof lambdaFor>;
beforeAll(async () => {
  store = await testStore('persistent-volume-claim-resize');
  invoke = lambdaFor(plugin, store);
  await learnClasses(invoke, 'storageclasses', [goldClass, silverClass]);
});
afterAll(() => store.close());

interface ClaimShape {
  volumeName?: string;
  storage: string;
  storageClassName?: string;
  capacity: string;
  phase: 'Bound' | 'Pending';
  annotations?: Record<string, string>;
}
const claim = ({ volumeName, storage, storageClassName, capacity, phase, annotations }: ClaimShape): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'foo', namespace: 'default', ...(annotations && { annotations }) },
  spec: {
    ...(volumeName && { volumeName }),
    resources: { requests: { storage } },
    ...(storageClassName !== undefined && { storageClassName }),
  },
  status: { capacity: { storage: capacity }, phase },
});
const update = (oldObj: KubeObject, newObj: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  operation: 'UPDATE',
  resource: { resource: 'persistentvolumeclaims' },
  object: newObj,
  oldObject: oldObj,
  ...extra,
});

async function answer(input: ReviewInput) {
  const result = await invoke('validate', input);
  expect(result.statusCode).toBe(200);
  return result.review!.response!;
}

const DYNAMICALLY_PROVISIONED =
  'persistentvolumeclaims "foo" is forbidden: only dynamically provisioned pvc can be resized and ' +
  'the storageclass that provisions the pvc must support resize';
const ONLY_BOUND = 'persistentvolumeclaims "foo" is forbidden: Only bound persistent volume claims can be expanded';

describe('TestPVCResizeAdmission (upstream table)', () => {
  const cases: { name: string; oldObj: KubeObject; newObj: KubeObject; error?: string }[] = [
    {
      name: 'pvc-resize, update, no error',
      oldObj: claim({
        volumeName: 'volume1',
        storage: '1Gi',
        storageClassName: 'gold',
        capacity: '1Gi',
        phase: 'Bound',
      }),
      newObj: claim({
        volumeName: 'volume1',
        storage: '2Gi',
        storageClassName: 'gold',
        capacity: '2Gi',
        phase: 'Bound',
      }),
    },
    {
      name: 'pvc-resize, update, dynamically provisioned error (no class)',
      oldObj: claim({ volumeName: 'volume3', storage: '1Gi', capacity: '1Gi', phase: 'Bound' }),
      newObj: claim({ volumeName: 'volume3', storage: '2Gi', capacity: '2Gi', phase: 'Bound' }),
      error: DYNAMICALLY_PROVISIONED,
    },
    {
      name: 'pvc-resize, update, dynamically provisioned error (class without expansion)',
      oldObj: claim({
        volumeName: 'volume4',
        storage: '1Gi',
        storageClassName: 'silver',
        capacity: '1Gi',
        phase: 'Bound',
      }),
      newObj: claim({
        volumeName: 'volume4',
        storage: '2Gi',
        storageClassName: 'silver',
        capacity: '2Gi',
        phase: 'Bound',
      }),
      error: DYNAMICALLY_PROVISIONED,
    },
    {
      name: 'PVC update with no change in size',
      oldObj: claim({ storage: '1Gi', storageClassName: 'silver', capacity: '0Gi', phase: 'Pending' }),
      newObj: claim({
        volumeName: 'volume4',
        storage: '1Gi',
        storageClassName: 'silver',
        capacity: '1Gi',
        phase: 'Bound',
      }),
    },
    {
      name: 'expand pvc in pending state',
      oldObj: claim({ storage: '1Gi', storageClassName: 'silver', capacity: '0Gi', phase: 'Pending' }),
      newObj: claim({ storage: '2Gi', storageClassName: 'silver', capacity: '0Gi', phase: 'Pending' }),
      error: ONLY_BOUND,
    },
  ];
  it.each(cases)('$name', async ({ oldObj, newObj, error }) => {
    const response = await answer(update(oldObj, newObj));
    expect(response.allowed).toBe(error === undefined);
    if (error !== undefined) expect(response.status).toMatchObject({ code: 403, reason: 'Forbidden', message: error });
  });
});

const bound = (storage: string, storageClassName?: string, annotations?: Record<string, string>) =>
  claim({ volumeName: 'v', storage, capacity: '1Gi', phase: 'Bound', storageClassName, annotations });

describe('beyond the table', () => {
  it('a class never learned cannot be shown to allow expansion: refused, as a lister miss upstream', async () => {
    const response = await answer(update(bound('1Gi', 'unknown'), bound('2Gi', 'unknown')));
    expect(response.status?.message).toBe(DYNAMICALLY_PROVISIONED);
  });

  it('a class changed by the same update is refused even when both allow expansion', async () => {
    await learnClasses(invoke, 'storageclasses', [{ ...goldClass, metadata: { name: 'gold2' } }]);
    const response = await answer(update(bound('1Gi', 'gold'), bound('2Gi', 'gold2')));
    expect(response.status?.message).toBe(DYNAMICALLY_PROVISIONED);
  });

  it('the beta class annotation names the class', async () => {
    const annotated = { 'volume.beta.kubernetes.io/storage-class': 'gold' };
    expect((await answer(update(bound('1Gi', undefined, annotated), bound('2Gi', undefined, annotated)))).allowed).toBe(
      true,
    );
  });

  it('quantities compare by value, and shrinking is not judged here', async () => {
    expect((await answer(update(bound('1Gi', 'silver'), bound('1024Mi', 'silver')))).allowed).toBe(true);
    expect((await answer(update(bound('2Gi', 'silver'), bound('1Gi', 'silver')))).allowed).toBe(true);
    expect((await answer(update(bound('1Gi', 'silver'), bound('1025Mi', 'silver')))).allowed).toBe(false);
  });

  it('creates, subresources and other resources are not judged', async () => {
    const grow = update(bound('1Gi', 'silver'), bound('2Gi', 'silver'));
    expect((await answer({ ...grow, operation: 'CREATE', oldObject: null })).allowed).toBe(true);
    expect((await answer({ ...grow, subResource: 'status' })).allowed).toBe(true);
    expect((await answer({ ...grow, resource: { resource: 'persistentvolumes' } })).allowed).toBe(true);
  });

  it('a StorageClass updated to allow expansion is followed', async () => {
    await invoke('learn', classWrite('storageclasses', { ...silverClass, allowVolumeExpansion: true }, 'UPDATE'));
    try {
      expect((await answer(update(bound('1Gi', 'silver'), bound('2Gi', 'silver')))).allowed).toBe(true);
    } finally {
      await invoke('learn', classWrite('storageclasses', silverClass, 'UPDATE'));
    }
    expect((await answer(update(bound('1Gi', 'silver'), bound('2Gi', 'silver')))).allowed).toBe(false);
  });
});

describe('the dryRun gate', () => {
  it('a dry-run StorageClass write sends zero writes and teaches nothing', async () => {
    store.reset();
    const bronze = { ...goldClass, metadata: { name: 'bronze' } };
    const result = await invoke('learn', classWrite('storageclasses', bronze, 'CREATE', { dryRun: true }));
    expect(result.review?.response?.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect((await answer(update(bound('1Gi', 'bronze'), bound('2Gi', 'bronze')))).allowed).toBe(false);
  });
});

describe('store failures are HTTP 500, so failurePolicy decides', () => {
  it('an unreachable store answers 500, never an allow', async () => {
    const client = localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 });
    try {
      const broken = {
        ...store,
        state: (request: { uid: string; dryRun: boolean }) =>
          createRequestState(request, { client, tableName: store.tableName, plugin: plugin.metadata.name }),
      } as TestStore;
      const grow = update(bound('1Gi', 'gold'), bound('2Gi', 'gold'));
      expect((await lambdaFor(plugin, broken)('validate', grow)).statusCode).toBe(500);
    } finally {
      client.destroy();
    }
  });
});
