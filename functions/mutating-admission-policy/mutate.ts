// One policy, one binding, one param, one object: upstream's patchers (mutating/patch). Match
// conditions first; then each mutation in order, on the object the previous one left, defaulted
// as the apiserver defaults it (lib/kube/defaults.ts): a JSONPatch
// expression's operations applied as json-patch.v4 applies them, an ApplyConfiguration's object
// merged with server-side apply's merge. An error ends that mutation, not the policy's next ones
// (dispatcher.go: addConfigError, continue).
import { LazyVariables, failed, matchConditions } from '../../lib/admission-policy/evaluate.js';
import type { Bindings } from '../../lib/admission-policy/evaluate.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { EVALUATION_COST_BUDGET } from '../../lib/cel/cel-env.js';
import { constructedTypeName } from '../../lib/cel/interpreter.js';
import { fromCel, toCel } from '../../lib/cel/values.js';
import { defaultObject } from '../../lib/kube/defaults.js';
import { MERGE_SCHEMA } from '../../lib/kube/merge-schema.js';
import {
  applyConfigurationErrors,
  findAtomics,
  merge,
  typeOfKind,
  unknownFields,
  validationErrorsMessage,
} from '../../lib/kube/structured-merge.js';
import type { CompiledMutation, CompiledPolicy } from './config.js';
import { JsonPatchError, JsonPatchTestFailed, applyJsonPatch } from './json-patch.js';
import type { PatchOperation } from './json-patch.js';

export interface MutationOutcome {
  /** The object after every mutation that applied. */
  readonly object: KubeObject;
  /** One message per mutation that failed (upstream's policy errors, before failurePolicy). */
  readonly errors: readonly string[];
  /** False when the match conditions skipped the policy: it did not run. */
  readonly ran: boolean;
  /** True when at least one mutation was applied (the apiserver's VersionedAttributes.Dirty). */
  readonly applied: boolean;
}

class MutationError extends Error {}

/**
 * The apiserver's strict decoding refused what a JSON patch built (json_patch.go: the patched JSON
 * decoded into the typed object, `strict decoding error: unknown field "spec.foo"`). It is a status
 * error there (apierrors.NewInternalError), so it ends the request at once, whatever the policy's
 * failurePolicy: the dispatcher returns it before any policy error.
 */
export class StrictDecodingError extends Error {
  override readonly name = 'StrictDecodingError';
}

const isMap = (v: unknown): v is ReadonlyMap<unknown, unknown> => v instanceof Map || isCelMapLike(v);
function isCelMapLike(v: unknown): v is ReadonlyMap<unknown, unknown> {
  return (
    v !== null && typeof v === 'object' && typeof (v as Map<unknown, unknown>).entries === 'function' && 'size' in v
  );
}

/**
 * dynamic.ObjectVal.CheckTypeNamesMatchFieldPathNames: `Object.spec{selector: Object.spec.wrong{}}`
 * is refused, since an initializer's type name must be its parent's plus the field name.
 */
function checkTypeNames(typeName: string, value: unknown): void {
  if (!isMap(value)) return;
  for (const [field, entry] of value.entries()) {
    const expected = `${typeName}.${String(field)}`;
    const entries = isIterableList(entry) ? [...entry] : [entry];
    for (const item of entries) {
      const name = constructedTypeName(item);
      if (name === undefined) continue;
      if (name !== expected)
        throw new MutationError(
          `type mismatch: unexpected type name ${JSON.stringify(name)}, expected ${JSON.stringify(expected)}, which matches field name path from root Object type`,
        );
      checkTypeNames(expected, item);
    }
  }
}

function isIterableList(v: unknown): v is Iterable<unknown> {
  return (
    v !== null &&
    typeof v === 'object' &&
    !isMap(v) &&
    typeof (v as Iterable<unknown>)[Symbol.iterator] === 'function' &&
    'size' in v
  );
}

function toJson(value: unknown, what: string): unknown {
  try {
    return fromCel(value);
  } catch (error) {
    throw new MutationError(`${what} evaluated to a type that could not marshal to JSON: ${(error as Error).message}`);
  }
}

/** patch/json_patch.go evaluatePatchExpression: the CEL list as RFC 6902 operations. */
function jsonPatchOperations(result: unknown): PatchOperation[] {
  if (!isIterableList(result))
    throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array');
  return [...result].map((element) => {
    if (constructedTypeName(element) !== 'JSONPatch' || !isMap(element))
      throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch');
    const field = (name: string) => (element as ReadonlyMap<string, unknown>).get(name);
    const value = field('value');
    const valueType = constructedTypeName(value);
    if (valueType !== undefined && valueType !== 'JSONPatch') checkTypeNames(valueType, value);
    const op: PatchOperation = {
      op: String(field('op') ?? ''),
      path: String(field('path') ?? ''),
      ...(field('from') !== undefined && field('from') !== '' && { from: String(field('from')) }),
      ...(value !== undefined && { value: toJson(value, 'JSONPath valueExpression') }),
    };
    return op;
  });
}

function applyConfiguration(object: KubeObject, result: unknown): KubeObject {
  if (constructedTypeName(result) !== 'Object')
    throw new MutationError(`unsupported return type from ApplyConfiguration expression: ${typeof result}`);
  checkTypeNames('Object', result);
  const patch = toJson(result, 'ApplyConfiguration expression') as Record<string, unknown>;
  const type = typeOfKind(MERGE_SCHEMA, String(object.apiVersion ?? ''), String(object.kind ?? ''));
  if (type !== undefined) {
    // smd.go: the type converter validates the patch (unknown fields, CEL nulls) before the atomic check.
    const invalid = applyConfigurationErrors(MERGE_SCHEMA, patch, type);
    if (invalid.length > 0)
      throw new MutationError(
        `error applying patch: failed to convert patch object to typed object: ${validationErrorsMessage(invalid)}`,
      );
    const atomics = findAtomics(MERGE_SCHEMA, patch, type);
    if (atomics.length > 0)
      throw new MutationError(
        `error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`,
      );
  }
  return merge(MERGE_SCHEMA, object, patch, type) as KubeObject;
}

/**
 * The expressions' bindings for this object: each variable converted for CEL when an expression
 * first reads it (a label-adding apply configuration never reads the pod it labels).
 */
function contextFor(policy: CompiledPolicy, object: KubeObject, bindings: Omit<Bindings, 'object'>) {
  let converted: { value: unknown } | undefined;
  const context: Record<string, unknown> = {
    get object() {
      converted ??= { value: toCel(object) };
      return converted.value;
    },
    get oldObject() {
      return bindings.oldObject;
    },
    get request() {
      return bindings.request;
    },
    params: bindings.params,
    namespaceObject: bindings.namespaceObject,
  };
  context.variables = new LazyVariables(policy, context, () => {});
  return context;
}

function applyMutation(
  mutation: CompiledMutation,
  object: KubeObject,
  policy: CompiledPolicy,
  bindings: Omit<Bindings, 'object'>,
): KubeObject {
  const context = contextFor(policy, object, bindings);
  const outcome = mutation.expression.evaluate(context, EVALUATION_COST_BUDGET);
  if ('error' in outcome) throw new MutationError(failed(mutation.expression, outcome.error));
  if (mutation.patchType === 'ApplyConfiguration') return applyConfiguration(object, outcome.value);
  const operations = jsonPatchOperations(outcome.value);
  let patched: KubeObject;
  try {
    patched = applyJsonPatch(object, operations);
  } catch (error) {
    if (error instanceof JsonPatchTestFailed) return object;
    if (error instanceof JsonPatchError) throw new MutationError(`JSON Patch: ${error.message}`);
    throw error;
  }
  strictDecode(object, patched);
  return patched;
}

/**
 * The strict decoding of a JSON patch's result into the built-in type. Only fields the patch
 * introduced are refused: one the object already had is the schema's lag (a field newer than 1.36).
 */
function strictDecode(object: KubeObject, patched: KubeObject): void {
  const type = typeOfKind(MERGE_SCHEMA, String(patched.apiVersion ?? ''), String(patched.kind ?? ''));
  if (type === undefined) return;
  const before = new Set(unknownFields(MERGE_SCHEMA, object, type));
  const unknown = unknownFields(MERGE_SCHEMA, patched, type).filter((path) => !before.has(path));
  if (unknown.length > 0)
    throw new StrictDecodingError(
      `strict decoding error: ${unknown.map((path) => `unknown field ${JSON.stringify(path)}`).join(', ')}`,
    );
}

/** Runs one invocation of `policy` on `object`. */
export function mutate(
  policy: CompiledPolicy,
  object: KubeObject,
  bindings: Omit<Bindings, 'object'>,
): MutationOutcome {
  const matched =
    policy.matchConditions.length === 0 ? 'match' : matchConditions(policy, contextFor(policy, object, bindings));
  if (matched === 'skip') return { object, errors: [], ran: false, applied: false };
  if (matched !== 'match') return { object, errors: [matched.error], ran: false, applied: false };
  const errors: string[] = [];
  let current = object;
  let applied = false;
  for (const mutation of policy.mutations) {
    try {
      // dispatchOne: the apiserver defaults the object after every mutation that did not fail, so
      // the next one reads defaulted fields (a sidecar's imagePullPolicy).
      current = defaultObject(MERGE_SCHEMA, applyMutation(mutation, current, policy, bindings));
      applied = true;
    } catch (error) {
      if (!(error instanceof MutationError)) throw error;
      errors.push(error.message);
    }
  }
  return { object: current, errors, ran: true, applied };
}
