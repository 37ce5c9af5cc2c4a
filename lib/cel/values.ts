// JSON as CEL sees it. Kubernetes' CEL gets ints for integer fields and doubles for the rest: from
// the OpenAPI schema for built-in types, and for JSON numbers as the apiserver's unstructured
// decoding types them (lib/admission/unstructured: `10` an int, `10.0` a double). A request's
// objects come typed from its text (unstructuredRequest); toCel types a value without text: every
// integral number an int (BigInt), every other a double.
import { isCelList, isCelMap, isCelUint } from '@bufbuild/cel';
import type { KubeObject } from '../admission/types.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { LearnedNamespace } from '../admission/ports.js';
import { toUnstructured } from '../admission/unstructured.js';

export const toCel: (value: unknown) => unknown = toUnstructured;

/** The `request` variable: upstream's admission.k8s.io AdmissionRequest, empty optional fields omitted. */
export function requestVariable(request: AdmissionRequest, options: unknown = request.options): unknown {
  const out: Record<string, unknown> = {
    uid: request.uid,
    kind: request.kind,
    resource: request.resource,
    // As the apiserver sent them: the original request's kind and resource where a conversion
    // made kind/resource differ; kind/resource when it sent none (lib/admission/request.ts).
    requestKind: request.requestKind,
    requestResource: request.requestResource,
    operation: request.operation,
    userInfo: request.userInfo,
    dryRun: request.dryRun,
  };
  if (request.subResource !== '') out.subResource = out.requestSubResource = request.subResource;
  if (request.name !== '') out.name = request.name;
  if (request.namespace !== '') out.namespace = request.namespace;
  if (options !== null) out.options = options;
  return toCel(out);
}

/** The `namespaceObject` variable, from what the Namespace webhook learned (upstream's subset). */
export function namespaceVariable(name: string, learned: LearnedNamespace | undefined): unknown {
  const metadata: KubeObject['metadata'] = { name };
  if (learned) {
    metadata.labels = { ...learned.labels };
    metadata.annotations = { ...learned.annotations };
  }
  return { apiVersion: 'v1', kind: 'Namespace', metadata, spec: {}, status: { phase: learned?.phase ?? 'Active' } };
}

/** A CEL value that has no JSON form (a type, an optional, a timestamp...). */
export class NotJsonError extends Error {
  override readonly name = 'NotJsonError';
}

/**
 * A CEL value as JSON, as cel-go converts one to a protobuf Value before marshalling it: ints and
 * uints become numbers, lists arrays, maps (and constructed messages) objects with string keys.
 */
export function fromCel(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJsonError(`unsupported double value ${value}`);
    return value;
  }
  if (isCelUint(value)) return Number(value.value);
  if (isCelList(value)) return [...value].map(fromCel);
  if (isCelMap(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, entry] of value.entries()) {
      if (typeof key !== 'string') throw new NotJsonError(`unsupported map key type: ${typeof key}`);
      out[key] = fromCel(entry);
    }
    return out;
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // Parts of the request's own objects (toCel's plain JSON) may reach a result unconverted.
  if (Array.isArray(value)) return value.map(fromCel);
  if (typeof value === 'object' && value.constructor === Object && !('$typeName' in value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromCel(v)]));
  throw new NotJsonError('unsupported value type');
}
