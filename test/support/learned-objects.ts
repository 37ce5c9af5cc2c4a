// For the plugins that learn classes (and LimitRanges): their writes as the apiserver sends them to a
// plugin's learning webhook, and the object a mutating answer makes (its patch applied with an
// RFC 6902 implementation).
import jsonpatch from 'fast-json-patch';
import { afterAll, expect } from 'vitest';
import { LEARNED_OBJECT_KINDS } from '../../lib/admission/learning.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { LearnedObjectKind } from '../../lib/admission/ports.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { Invocation, TestStore } from './dynamodb.js';
import { lambdaFor, testStore } from './dynamodb.js';
import type { ReviewInput } from './review.js';

/** A write of a class or LimitRange (CREATE unless said), as the learning webhook receives it. */
export function classWrite(
  of: LearnedObjectKind,
  object: KubeObject,
  operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'CREATE',
  extra: Partial<ReviewInput> = {},
): ReviewInput {
  const { group, kind } = LEARNED_OBJECT_KINDS[of];
  const stored = { apiVersion: group === '' ? 'v1' : `${group}/v1`, kind, ...object };
  return {
    operation,
    kind: { group, kind },
    resource: { group, resource: of },
    name: object.metadata?.name,
    namespace: object.metadata?.namespace ?? '',
    object: operation === 'DELETE' ? null : stored,
    oldObject: operation === 'CREATE' ? null : stored,
    ...extra,
  };
}

type Invoke = (endpoint: Endpoint, input: ReviewInput) => Promise<Invocation>;

/** Sends class writes to the plugin's learning endpoint, each expected to be admitted. */
export async function learnClasses(
  invoke: Invoke,
  of: LearnedObjectKind,
  objects: readonly KubeObject[],
): Promise<void> {
  for (const object of objects) {
    const result = await invoke('learn', classWrite(of, object));
    expect(result.statusCode).toBe(200);
    expect(result.review?.response?.allowed).toBe(true);
  }
}

/** The object after the answer's patch (the object itself when there is none); throws on a denial. */
export function patchedObject(result: Invocation, object: KubeObject): KubeObject {
  expect(result.statusCode).toBe(200);
  const response = result.review!.response!;
  expect(response.allowed, response.status?.message).toBe(true);
  if (response.patch === undefined) return object;
  const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as jsonpatch.Operation[];
  return jsonpatch.applyPatch(structuredClone(object), patch, true, false).newDocument as KubeObject;
}

/**
 * Clusters of their own for a class plugin's tests: each call gets a fresh table with `classes`
 * learned through the plugin's learning webhook, served with `config` (as lambdaFor takes it).
 * Every table is closed after the file's tests.
 */
export function classClusters(plugin: AnyAdmissionPlugin, of: LearnedObjectKind, config?: unknown) {
  const stores: TestStore[] = [];
  afterAll(() => {
    for (const store of stores) store.close();
  });
  return async function freshCluster(classes: readonly KubeObject[], served: unknown = config) {
    const store = await testStore(plugin.metadata.name);
    stores.push(store);
    const invoke = lambdaFor(plugin, store, served);
    await learnClasses(invoke, of, classes);
    return { store, invoke };
  };
}
