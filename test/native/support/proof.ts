// The proof that a plugin's native policies answer as its webhook does: each ported upstream case
// goes to the plugin's own phase functions and, as the apiserver would run them, to the compiled
// policies loaded into the project's ValidatingAdmissionPolicy and MutatingAdmissionPolicy engines
// (with the version's CEL environment, the request's namespace as namespaceObject). Loading them is
// the apiserver's creation-time validation as the engines reproduce it: a policy that would be
// refused fails the test.
import { afterAll, expect } from 'vitest';
import mapPlugin from '../../../functions/mutating-admission-policy/plugin.js';
import vapPlugin from '../../../functions/validating-admission-policy/plugin.js';
import type { AnyAdmissionPlugin } from '../../../lib/admission/plugin.js';
import type { LearnedNamespace, PluginState } from '../../../lib/admission/ports.js';
import { NO_STATE } from '../../../lib/admission/ports.js';
import type { KubeObject } from '../../../lib/admission/types.js';
import type { EnvironmentVersion } from '../../../lib/cel/cel-env.js';
import type { AuthorizationAttributes } from '../../../lib/cel/library/authorizer.js';
import { installAuthorizer } from '../../../lib/cel/library/authorizer.js';
import type { Enforcement, Exemptions } from '../../../lib/config/enforcement.js';
import { NO_EXEMPTIONS } from '../../../lib/config/enforcement.js';
import type { ConfiguredPlugin } from '../../../lib/config/plugins.js';
import type { NativeObject } from '../../../infra/native/objects.js';
import { nativeName } from '../../../infra/native/objects.js';
import { planPlugin } from '../../../infra/native/plan.js';
import type { PhaseResult, ReviewInput } from '../../support/review.js';
import { runPhase } from '../../support/review.js';
import { defaultObject } from '../../../lib/kube/defaults.js';
import { MERGE_SCHEMA } from '../../../lib/kube/merge-schema.js';

const SOURCE = { file: 'native policies (emit --native)', baseDir: process.cwd() };

export interface NamespaceFixture {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly phase?: 'Active' | 'Terminating';
}

/**
 * Learned namespaces as the apiserver knows them: every one has its kubernetes.io/metadata.name
 * label. A namespace not listed exists too, with that label alone: the apiserver knows every
 * namespace a request names, and the engine would otherwise skip a policy whose binding selects
 * namespaces (a never-seen namespace's answer).
 */
export function namespaceState(namespaces: readonly NamespaceFixture[]): PluginState {
  const known = new Map<string, LearnedNamespace>(
    namespaces.map((n) => [
      n.name,
      {
        name: n.name,
        labels: { 'kubernetes.io/metadata.name': n.name, ...n.labels },
        annotations: { ...n.annotations },
        phase: n.phase ?? 'Active',
        observedAt: new Date(0).toISOString(),
      },
    ]),
  );
  const unlisted = (name: string): LearnedNamespace => ({
    name,
    labels: { 'kubernetes.io/metadata.name': name },
    annotations: {},
    phase: 'Active',
    observedAt: new Date(0).toISOString(),
  });
  return {
    ...NO_STATE,
    learnedNamespaces: {
      get: async (name) => known.get(name) ?? (name === '' ? undefined : unlisted(name)),
      knownAbsent: async () => false,
    },
  };
}

export interface Configured {
  readonly config: unknown;
  readonly enforcement?: Enforcement;
  readonly exemptions?: Exemptions;
}

/** A plugin as `emit --native` configures it, from its entry's raw configuration. */
export function configured(
  plugin: AnyAdmissionPlugin,
  raw?: unknown,
  extra: Omit<Configured, 'config'> = {},
): ConfiguredPlugin {
  return {
    plugin,
    config: plugin.configure ? plugin.configure(raw, SOURCE) : undefined,
    enforcement: extra.enforcement ?? 'Deny',
    exemptions: extra.exemptions ?? NO_EXEMPTIONS,
    hasEntry: raw !== undefined,
  };
}

/** The compiled objects of a plugin on a version; fails when it stays a webhook there. */
export function nativeObjectsOf(plugin: ConfiguredPlugin, version: EnvironmentVersion): readonly NativeObject[] {
  const plan = planPlugin(plugin, version);
  if (plan.objects === undefined) throw new Error(`not native on ${version}: ${plan.line}`);
  return plan.objects;
}

const isKind = (prefix: string) => (o: NativeObject) => o.kind.startsWith(prefix);

/** The native objects loaded into the engines, as an apiserver of `version` runs them. */
export class NativeCluster {
  private readonly vapConfig: unknown;
  private readonly mapConfig: unknown;
  readonly validating: boolean;
  readonly mutating: boolean;

  constructor(
    readonly objects: readonly NativeObject[],
    readonly version: EnvironmentVersion,
  ) {
    const validating = objects.filter(isKind('ValidatingAdmissionPolicy'));
    const mutating = objects.filter(isKind('MutatingAdmissionPolicy'));
    this.validating = validating.length > 0;
    this.mutating = mutating.length > 0;
    this.vapConfig = vapPlugin.configure?.({ manifests: validating, celEnvironment: version }, SOURCE);
    this.mapConfig = mapPlugin.configure?.({ manifests: mutating, celEnvironment: version }, SOURCE);
  }

  /** The validating policies' answer, through the real codec. */
  validate(input: ReviewInput, state: PluginState = namespaceState([])): Promise<PhaseResult> {
    return runPhase(vapPlugin, 'validate', input, this.vapConfig, state);
  }

  /**
   * The mutating policies' answer (a patch), through the real codec, on the object as the
   * apiserver holds it when it calls them: defaulted (upstream's rows build objects without).
   */
  mutate(input: ReviewInput, state: PluginState = namespaceState([])): Promise<PhaseResult> {
    const stored = <T extends KubeObject | null | undefined>(object: T): T =>
      (object ? defaultObject(MERGE_SCHEMA, object) : object) as T;
    const held = { ...input, object: stored(input.object), oldObject: stored(input.oldObject) };
    return runPhase(mapPlugin, 'mutate', held, this.mapConfig, state);
  }
}

/**
 * Where the apiserver puts a policy's refusal: after `<resource> "<name>" is forbidden: `. An
 * aggregate of refusals (`[pods "p" is forbidden: e1, pods "p" is forbidden: e2]`) becomes one
 * refusal listing them, `[e1, e2]`: a policy has one message.
 */
export function asPolicyMessage(webhookMessage: string, policy: string, binding = policy): string {
  const marker = ' is forbidden: ';
  const aggregate = webhookMessage.startsWith('[') && webhookMessage.endsWith(']');
  const body = aggregate ? webhookMessage.slice(1, -1) : webhookMessage;
  const at = body.indexOf(marker);
  if (at < 0) throw new Error(`not a Forbidden message: ${webhookMessage}`);
  const head = body.slice(0, at + marker.length);
  const reasons = aggregate ? `[${body.slice(head.length).split(`, ${head}`).join(', ')}]` : body.slice(head.length);
  return `${head}ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${reasons}`;
}

/**
 * The native validating answer agrees with the webhook's: both admit, or both refuse with the same
 * code and reason and the webhook's message as the policy's (the apiserver's prefix added).
 */
export function expectSameValidation(webhook: PhaseResult, native: PhaseResult, plugin: string, part?: string): void {
  const w = webhook.wire.response;
  const n = native.wire.response;
  expect(n?.allowed, `native ${n?.status?.message ?? 'allowed'} / webhook ${w?.status?.message ?? 'allowed'}`).toBe(
    w?.allowed,
  );
  expect(n?.warnings ?? []).toEqual(w?.warnings ?? []);
  if (w?.allowed) return;
  const name = nativeName(plugin, part);
  expect(n?.status?.message).toBe(asPolicyMessage(w?.status?.message ?? '', name));
  expect(n?.status?.code).toBe(w?.status?.code);
  expect(n?.status?.reason).toBe(w?.status?.reason);
}

/**
 * A validating plugin's case through its webhook and through the policies, which answer alike
 * (expectSameValidation). Returns the webhook's answer, for the case's own expectations.
 */
export async function expectSameValidationOf(
  plugin: AnyAdmissionPlugin,
  config: unknown,
  cluster: NativeCluster,
  input: ReviewInput,
): Promise<PhaseResult> {
  const webhook = await runPhase(plugin, 'validate', input, config);
  expectSameValidation(webhook, await cluster.validate(input), plugin.metadata.name);
  return webhook;
}

/**
 * A mutating plugin's case through both, as the apiserver chains them: the webhook's mutation (it
 * may refuse), then its validating twin on the final object; the mutating policy (which never
 * refuses: a refusal of upstream's Admit is the validating policy's), then the validating policy.
 * The chains end alike: both admit the same final object, or both refuse with the same message.
 * Each phase is compared too: the mutation where the webhook's admits, and the twin on the object
 * as received and as mutated. Returns the mutating phases' results.
 */
export async function expectSameAdmission(
  plugin: AnyAdmissionPlugin,
  config: unknown,
  cluster: NativeCluster,
  input: ReviewInput,
  state: PluginState = namespaceState([]),
): Promise<{ webhook: PhaseResult; native: PhaseResult; outcome: PhaseResult }> {
  const name = plugin.metadata.name;
  const webhook = await runPhase(plugin, 'mutate', input, config, state);
  const native = await cluster.mutate(input, state);
  expect(native.wire.response?.allowed).toBe(true);
  if (webhook.wire.response?.allowed) expectSameMutation(webhook, native);
  const final = { ...input, object: native.patchedObject };
  const nativeOutcome = await cluster.validate(final, state);
  let outcome = webhook;
  if (webhook.wire.response?.allowed && plugin.validate) {
    outcome = await runPhase(plugin, 'validate', { ...input, object: webhook.patchedObject }, config, state);
    expectSameValidation(
      await runPhase(plugin, 'validate', input, config, state),
      await cluster.validate(input, state),
      name,
    );
  }
  expectSameValidation(outcome, nativeOutcome, name);
  return { webhook, native, outcome };
}

/** The native mutation leaves the object exactly as the webhook's patch does. */
/**
 * The same final object, as the apiserver stores it: it applies the type's defaults after a
 * webhook's patch (when it decodes the patched object) as after a mutating policy's (lib/kube/defaults).
 */
export function expectSameMutation(webhook: PhaseResult, native: PhaseResult): void {
  expect(native.wire.response?.allowed).toBe(true);
  const stored = (object: KubeObject | null) => (object === null ? object : defaultObject(MERGE_SCHEMA, object));
  expect(stored(native.patchedObject)).toEqual(stored(webhook.patchedObject));
}

/** Counts of a proof, for the report and the docs. */
export interface ProofCount {
  cases: number;
  agreed: number;
}

export const objectOf = (result: PhaseResult): KubeObject | null => result.patchedObject;

/** The text after `is forbidden: `: what a refusal says, whatever it names the resource. */
export const refusalReason = (result: PhaseResult): string | undefined => {
  const message = result.wire.response?.status?.message;
  return message === undefined
    ? undefined
    : message.slice(message.indexOf(' is forbidden: ') + ' is forbidden: '.length);
};

/**
 * For a listed difference in how the resource is named: both admit, or both refuse, the native
 * refusal saying exactly what the webhook's says after the apiserver's prefix.
 */
export function expectSameDecisionAndReason(webhook: PhaseResult, native: PhaseResult, plugin: string): void {
  const w = webhook.wire.response;
  expect(native.wire.response?.allowed).toBe(w?.allowed);
  if (w?.allowed) return;
  const name = nativeName(plugin);
  expect(refusalReason(native)).toBe(
    `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: ${refusalReason(webhook)}`,
  );
}

/**
 * The apiserver's authorizer as a test models it: installed now (policies compile with
 * `authorizer` from here on, this file's clusters included), removed after the file. Records what
 * it was asked.
 */
export function useAuthorizer(
  allows: (attributes: AuthorizationAttributes) => boolean | 'error',
): AuthorizationAttributes[] {
  const asked: AuthorizationAttributes[] = [];
  const uninstall = installAuthorizer((attributes) => {
    asked.push(attributes);
    const verdict = allows(attributes);
    if (verdict === 'error') return { decision: 'NoOpinion', reason: '', error: 'authorizer unavailable' };
    return verdict ? { decision: 'Allow', reason: 'allowed by the test' } : { decision: 'NoOpinion', reason: '' };
  });
  afterAll(uninstall);
  return asked;
}
