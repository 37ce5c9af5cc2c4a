// Builders and checks shared by plugin tests: real reviews through the real codec, real patches
// applied with an RFC 6902 implementation.
import jsonpatch from 'fast-json-patch';
import { expect } from 'vitest';
import type { Decision } from '../../lib/admission/decision.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import { decodeAdmissionReview } from '../../lib/admission/request.js';
import type { Phase } from '../../lib/admission/response.js';
import { encodeAdmissionResponse } from '../../lib/admission/response.js';
import type { AdmissionRequestWire, AdmissionReviewWire, KubeObject, Operation } from '../../lib/admission/types.js';
import type { PluginState } from '../../lib/admission/ports.js';
import { NO_STATE } from '../../lib/admission/ports.js';

let counter = 0;

export interface ReviewInput {
  operation?: Operation;
  /** Defaults from `object.kind` or Pod. */
  kind?: { group?: string; version?: string; kind: string };
  /** Defaults to pods. */
  resource?: { group?: string; version?: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  userInfo?: AdmissionRequestWire['userInfo'];
  dryRun?: boolean;
  uid?: string;
  apiVersion?: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';
}

/** An AdmissionReview as the apiserver would send it. */
export function review(input: ReviewInput = {}): AdmissionReviewWire & { request: AdmissionRequestWire } {
  const object = input.object === undefined ? null : input.object;
  const kindName = input.kind?.kind ?? (typeof object?.kind === 'string' ? object.kind : 'Pod');
  const kind = { group: input.kind?.group ?? '', version: input.kind?.version ?? 'v1', kind: kindName };
  const resource = {
    group: input.resource?.group ?? kind.group,
    version: input.resource?.version ?? kind.version,
    resource: input.resource?.resource ?? 'pods',
  };
  const meta = object?.metadata ?? input.oldObject?.metadata;
  const request: AdmissionRequestWire = {
    uid: input.uid ?? `uid-${++counter}`,
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    operation: input.operation ?? 'CREATE',
    userInfo: input.userInfo ?? { username: 'tester', groups: ['system:authenticated'] },
    object,
    oldObject: input.oldObject ?? null,
    dryRun: input.dryRun ?? false,
  };
  const name = input.name ?? meta?.name;
  if (name !== undefined) request.name = name;
  const namespace = input.namespace ?? meta?.namespace;
  if (namespace !== undefined) request.namespace = namespace;
  if (input.subResource) {
    request.subResource = input.subResource;
    request.requestSubResource = input.subResource;
  }
  return { apiVersion: input.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}

export function requestOf(input: ReviewInput = {}): AdmissionRequest {
  return decodeAdmissionReview(review(input));
}

export interface PhaseResult {
  decision: Decision;
  wire: AdmissionReviewWire;
  /** The object after applying the encoded patch (the object itself when there is none). */
  patchedObject: KubeObject | null;
  patch: jsonpatch.Operation[];
}

/**
 * Runs one phase of a plugin through the real codec and applies the patch it encodes with an
 * RFC 6902 implementation, validating every operation against the document (a patch that does not
 * apply fails the test, as it would fail the user's request).
 */
export async function runPhase(
  plugin: AnyAdmissionPlugin,
  phase: Phase,
  input: ReviewInput | AdmissionRequest,
  config?: unknown,
  state: PluginState = NO_STATE,
): Promise<PhaseResult> {
  const request = 'reviewVersion' in input ? input : requestOf(input);
  const fn = phase === 'mutate' ? plugin.admit : plugin.validate;
  if (!fn) throw new Error(`${plugin.metadata.name} has no ${phase} phase`);
  const decision = await fn(request, { config, state });
  const wire = encodeAdmissionResponse(request, decision, phase);
  const response = wire.response!;
  expect(response.uid).toBe(request.uid);
  expect(wire.apiVersion).toBe(request.reviewVersion);
  expect(response.patch === undefined).toBe(response.patchType === undefined);
  let patch: jsonpatch.Operation[] = [];
  let patchedObject = request.object === null ? null : (structuredClone(request.object) as KubeObject);
  if (response.patch !== undefined) {
    patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    patchedObject = jsonpatch.applyPatch(patchedObject, patch, /* validate */ true, /* mutate */ false)
      .newDocument as KubeObject;
  }
  return { decision, wire, patchedObject, patch };
}

/**
 * Mutates, applies the patch, then runs the mutation again on its own output: the second run must
 * change nothing (reinvocation and webhook retries rely on it). Returns the first run.
 */
export async function mutateIdempotently(
  plugin: AnyAdmissionPlugin,
  input: ReviewInput,
  config?: unknown,
  state: PluginState = NO_STATE,
): Promise<PhaseResult> {
  const first = await runPhase(plugin, 'mutate', input, config, state);
  if (first.patch.length > 0) {
    const again = await runPhase(plugin, 'mutate', { ...input, object: first.patchedObject }, config, state);
    expect(again.patch, 'a second run of the mutation on its own output changed something').toEqual([]);
  }
  return first;
}

/** The denial message, or undefined when allowed. */
export function deniedMessage(result: PhaseResult): string | undefined {
  const response = result.wire.response!;
  return response.allowed ? undefined : response.status?.message;
}
