// Upstream's table (plugin/pkg/admission/network/defaultingressclass/admission_test.go,
// TestAdmission) ported: each case's IngressClasses are learned through the plugin's own learning
// webhook (upstream's informer), on a table of its own, and the Ingress goes through the real
// Lambda handler; the mutation is applied as a real JSON patch and run again on its own output
// (upstream's WithReinvocationTesting). Plus: upstream's answer to an object that is not an
// Ingress, the twin, class deletes, dry runs and store failures.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/default-ingress-class/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor } from '../support/dynamodb.js';
import { classClusters, classWrite, patchedObject } from '../support/learned-objects.js';
import type { ReviewInput } from '../support/review.js';

const DEFAULT = 'ingressclass.kubernetes.io/is-default-class';
const ingressClass = (name: string, annotations?: Record<string, string>, creationTimestamp?: string): KubeObject => ({
  metadata: { name, ...(annotations && { annotations }), ...(creationTimestamp && { creationTimestamp }) },
  spec: { controller: 'example.com/ingress' },
});

const defaultClass1 = ingressClass('default1', { [DEFAULT]: 'true' });
const defaultClass2 = ingressClass('default2', { [DEFAULT]: 'true' });
const classWithFalseDefault = ingressClass('nondefault1', { [DEFAULT]: 'false' });
const classWithNoDefault = ingressClass('nondefault2');
const classWithEmptyDefault = ingressClass('nondefault2', { [DEFAULT]: '' });
// Upstream's two timestamps differ by a nanosecond; metav1.Time on the wire has whole seconds.
const defaultClassWithCreateTime1 = ingressClass('default1', { [DEFAULT]: 'true' }, '2022-01-01T00:00:01Z');
const defaultClassWithCreateTime2 = ingressClass('default2', { [DEFAULT]: 'true' }, '2022-01-01T00:00:00Z');
const nonDefaults = [classWithFalseDefault, classWithNoDefault, classWithEmptyDefault];

const ingress = (classField?: string, classAnnotation?: string): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: {
    name: 'testing',
    namespace: 'testing',
    ...(classAnnotation !== undefined && { annotations: { 'kubernetes.io/ingress.class': classAnnotation } }),
  },
  spec: { ...(classField !== undefined && { ingressClassName: classField }) },
});
const create = (object: KubeObject, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  object,
  kind: { group: 'networking.k8s.io', kind: 'Ingress' },
  resource: { group: 'networking.k8s.io', resource: 'ingresses' },
  ...extra,
});
const classOf = (object: KubeObject) => (object.spec as { ingressClassName?: string }).ingressClassName;

type Invoke = ReturnType<typeof lambdaFor>;

async function admit(invoke: Invoke, object: KubeObject): Promise<KubeObject> {
  const mutated = patchedObject(await invoke('mutate', create(object)), object);
  expect(patchedObject(await invoke('mutate', create(mutated)), mutated)).toEqual(mutated);
  expect((await invoke('validate', create(mutated))).review?.response?.allowed).toBe(true);
  return mutated;
}

const freshCluster = classClusters(plugin, 'ingressclasses');

describe('TestAdmission (upstream table)', () => {
  const cases: {
    name: string;
    classes: KubeObject[];
    classField?: string;
    classAnnotation?: string;
    expectedClass: string | undefined;
  }[] = [
    { name: 'no default, no modification of Ingress', classes: nonDefaults, expectedClass: undefined },
    {
      name: 'one default, modify Ingress with class=nil',
      classes: [defaultClass1, ...nonDefaults],
      expectedClass: 'default1',
    },
    {
      name: "one default, no modification of Ingress with class field=''",
      classes: [defaultClass1, ...nonDefaults],
      classField: '',
      expectedClass: '',
    },
    {
      name: "one default, no modification of Ingress with class field='foo'",
      classes: [defaultClass1, ...nonDefaults],
      classField: 'foo',
      expectedClass: 'foo',
    },
    {
      name: "one default, no modification of Ingress with class annotation='foo'",
      classes: [defaultClass1, ...nonDefaults],
      classAnnotation: 'foo',
      expectedClass: undefined,
    },
    {
      name: 'two defaults with the same creation time, choose the one with the lower name',
      classes: [defaultClass1, defaultClass2, ...nonDefaults],
      expectedClass: 'default1',
    },
    {
      name: "two defaults, no modification with Ingress with class field=''",
      classes: [defaultClass1, defaultClass2, ...nonDefaults],
      classField: '',
      expectedClass: '',
    },
    {
      name: 'two defaults, choose the one with the newer creation time',
      classes: [defaultClassWithCreateTime1, defaultClassWithCreateTime2, ...nonDefaults],
      expectedClass: 'default1',
    },
  ];
  it.each(cases)('$name', async ({ classes, classField, classAnnotation, expectedClass }) => {
    const { invoke } = await freshCluster(classes);
    expect(classOf(await admit(invoke, ingress(classField, classAnnotation)))).toBe(expectedClass);
  });
});

describe('beyond the table', () => {
  it('an object that is not an Ingress gets upstream InternalError', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const notIngress = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'testing', namespace: 'testing' }, spec: {} };
    const response = (await invoke('mutate', create(notIngress, { kind: { group: 'networking.k8s.io', kind: 'Pod' } })))
      .review!.response!;
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({
      code: 500,
      message: 'Internal error occurred: Expected Ingress resource, got: networking.k8s.io/v1, Kind=Pod',
    });
  });

  it('updates, subresources and Ingresses of other groups are left alone', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    for (const input of [
      create(ingress(), { operation: 'UPDATE', oldObject: ingress() }),
      create(ingress(), { subResource: 'status' }),
      create(ingress(), { resource: { group: 'extensions', resource: 'ingresses' } }),
    ]) {
      const response = (await invoke('mutate', input)).review!.response!;
      expect(response.allowed).toBe(true);
      expect(response.patch).toBeUndefined();
    }
  });

  it('a default class deleted stops being the default', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    await invoke('learn', classWrite('ingressclasses', defaultClass1, 'DELETE'));
    expect(classOf(await admit(invoke, ingress()))).toBeUndefined();
  });

  it('the twin refuses a new Ingress still without a class while a default is known, and fails open', async () => {
    const { invoke } = await freshCluster([defaultClass1]);
    const response = (await invoke('validate', create(ingress()))).review!.response!;
    expect(response.status?.message).toBe(
      'ingresses.networking.k8s.io "testing" is forbidden: spec.ingressClassName: Required value: ' +
        'the default IngressClass "default1" was not set (DefaultIngressClass sets it)',
    );
    expect(plugin.metadata.validating?.failurePolicy).toBe('Ignore');
  });
});

describe('the dryRun gate', () => {
  it('a dry-run IngressClass write sends zero writes and teaches nothing', async () => {
    const { store, invoke } = await freshCluster([]);
    store.reset();
    const result = await invoke('learn', classWrite('ingressclasses', defaultClass1, 'CREATE', { dryRun: true }));
    expect(result.review?.response?.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(classOf(await admit(invoke, ingress()))).toBeUndefined();
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
      expect((await lambdaFor(plugin, broken)('mutate', create(ingress()))).statusCode).toBe(500);
    } finally {
      client.destroy();
    }
  });
});
