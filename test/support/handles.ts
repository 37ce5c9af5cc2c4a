// Upstream's TestHandles and TestOtherResources, once for every plugin. TestHandles: each of the
// four operations is sent with an object the plugin would act on; a handled operation is acted on
// (the mutating phase patches, the validating phase refuses), the others pass untouched.
// TestOtherResources: the same object sent as another resource, a subresource, or from another
// API group is left alone.
import { expect, it } from 'vitest';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { Phase } from '../../lib/admission/response.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { OPERATIONS } from '../../lib/admission/types.js';
import type { PluginState } from '../../lib/admission/ports.js';
import type { ReviewInput } from './review.js';
import { runPhase } from './review.js';

/** An object, or how to make it once the suite's fixtures exist (keys made in beforeAll...). */
type Lazy<T> = T | (() => T);
const resolve = <T extends object>(value: Lazy<T>): T => (typeof value === 'function' ? (value as () => T)() : value);

export interface HandlesCase {
  /** The object acted on: the new object (none on DELETE), and the old one unless `oldObject`. */
  readonly object: Lazy<KubeObject>;
  /** The stored object of UPDATE and DELETE (none on CREATE); defaults to `object`. */
  readonly oldObject?: Lazy<KubeObject>;
  /** Kind, resource, name... of every review. */
  readonly input?: ReviewInput;
  readonly config?: unknown;
  readonly state?: (operation: Operation) => PluginState;
  /** The phases to run; defaults to every phase the plugin has. */
  readonly phases?: readonly Phase[];
}

/** The phases asked for, else every phase the plugin has. */
const phasesOf = (plugin: AnyAdmissionPlugin, phases: readonly Phase[] | undefined): readonly Phase[] =>
  phases ??
  (['mutate', 'validate'] as const).filter(
    (phase) => (phase === 'mutate' ? plugin.admit : plugin.validate) !== undefined,
  );

/** One test per operation: `handled` ones are acted on by every phase, the others by none. */
export function itHandles(plugin: AnyAdmissionPlugin, handled: readonly Operation[], c: HandlesCase): void {
  const phases = phasesOf(plugin, c.phases);
  const table = OPERATIONS.map((operation) => ({ operation, handled: handled.includes(operation) }));
  it.each(table)('$operation handled: $handled', async ({ operation, handled: acted }) => {
    const object = resolve(c.object);
    const input: ReviewInput = {
      ...c.input,
      operation,
      object: operation === 'DELETE' ? null : object,
      oldObject: operation === 'CREATE' ? null : c.oldObject === undefined ? object : resolve(c.oldObject),
    };
    const state = c.state?.(operation);
    for (const phase of phases) {
      const result = await runPhase(plugin, phase, input, c.config, state);
      // A DELETE carries no object to patch.
      if (phase === 'mutate' && operation !== 'DELETE') expect(result.patch.length > 0).toBe(acted);
      if (phase === 'validate') expect(result.wire.response!.allowed).toBe(!acted);
    }
  });
}

/** A request for something other than what the plugin judges. */
export interface OtherRequest {
  readonly name: string;
  readonly kind: NonNullable<ReviewInput['kind']>;
  readonly resource: NonNullable<ReviewInput['resource']>;
  readonly subResource?: string;
}

/** TestOtherResources' three: another resource, a subresource of this one, this one in another API group. */
export function otherResources(kind: string, resource: string, subResource: string): OtherRequest[] {
  const singular = kind.toLowerCase();
  return [
    { name: `non-${singular} resource`, kind: { kind: 'Foo' }, resource: { resource: 'foos' } },
    { name: `${singular} ${subResource} subresource`, kind: { kind }, resource: { resource }, subResource },
    {
      name: `${resource} of another group`,
      kind: { group: 'example.com', kind },
      resource: { group: 'example.com', resource },
    },
  ];
}

/** One test per request: every phase answers a plain allow, without patch, warning or annotation. */
export function itLeavesAlone(
  plugin: AnyAdmissionPlugin,
  requests: readonly OtherRequest[],
  c: Pick<HandlesCase, 'object' | 'config' | 'phases'>,
): void {
  it.each(requests)('$name is left alone', async ({ kind, resource, subResource }) => {
    for (const phase of phasesOf(plugin, c.phases)) {
      const result = await runPhase(
        plugin,
        phase,
        { object: resolve(c.object), kind, resource, subResource },
        c.config,
      );
      expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
    }
  });
}
