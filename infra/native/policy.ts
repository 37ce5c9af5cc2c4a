// What a plugin compiles to: ValidatingAdmissionPolicies and MutatingAdmissionPolicies described
// by their logic alone (rules, variables, validations, mutations). The emitter (objects.ts) adds
// what every plugin's deployment shares with its webhook: names, labels, the binding with the
// entry's enforcement as validationActions, the excluded namespaces and the exemptions.
import type { PluginMetadata, WebhookRule } from '../../lib/admission/plugin.js';
import type { EnvironmentVersion } from '../../lib/cel/cel-env.js';

export interface NamedExpression {
  readonly name: string;
  readonly expression: string;
}

export interface Validation {
  readonly expression: string;
  /** Upstream's text when it has no values in it. */
  readonly message?: string;
  /** Upstream's text built from the request, where it has values in it. */
  readonly messageExpression?: string;
  /** Forbidden (403) unless upstream answers otherwise. */
  readonly reason?: 'Forbidden' | 'Invalid' | 'RequestEntityTooLarge';
}

export interface ValidatingPolicy {
  readonly kind: 'ValidatingAdmissionPolicy';
  /** `serverless-admission-<plugin>-<part>`; the plugin's own name when absent. */
  readonly part?: string;
  readonly rules: readonly WebhookRule[];
  readonly excludeRules?: readonly WebhookRule[];
  readonly matchConditions?: readonly NamedExpression[];
  readonly variables?: readonly NamedExpression[];
  readonly validations: readonly Validation[];
  /** The plugin's validating webhook's failurePolicy unless given. */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /**
   * What a failed validation does when the entry's enforcement is Deny: a plugin whose modes
   * refuse, warn and audit separately (PodSecurity) gives each policy its own. A Warn or Audit
   * enforcement softens it (Deny becomes Warn; everything becomes Audit).
   */
  readonly validationActions?: 'Deny' | 'Warn' | 'Audit';
  /** Audit annotations, `<policy name>/<key>`: none where the value is empty (or null). */
  readonly auditAnnotations?: readonly { readonly key: string; readonly valueExpression: string }[];
}

export type Mutation =
  | { readonly patchType: 'JSONPatch'; readonly jsonPatch: { readonly expression: string } }
  | { readonly patchType: 'ApplyConfiguration'; readonly applyConfiguration: { readonly expression: string } };

export interface MutatingPolicy {
  readonly kind: 'MutatingAdmissionPolicy';
  readonly part?: string;
  readonly rules: readonly WebhookRule[];
  readonly matchConditions?: readonly NamedExpression[];
  readonly variables?: readonly NamedExpression[];
  readonly mutations: readonly Mutation[];
  /** IfNeeded where the webhook asks to be called again when a later mutation undoes it. */
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
}

export type NativePolicy = ValidatingPolicy | MutatingPolicy;

/** A plugin as native policies on one version, or why it stays a webhook there. */
export type Compilation =
  | {
      readonly policies: readonly NativePolicy[];
      /** What the policies answer differently from the webhook, for stderr and the docs. */
      readonly differences?: readonly string[];
      /** Choices of the configuration that cannot take effect beside what the apiserver runs itself (stderr). */
      readonly warnings?: readonly string[];
    }
  | { readonly webhook: string };

export interface NativeCompiler<Config = unknown> {
  /** The plugin's kebab-case name (its registry name). */
  readonly name: string;
  compile(config: Config, version: EnvironmentVersion): Compilation;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds compilers of different configuration types side by side, as functions/index.ts holds plugins.
export type AnyNativeCompiler = NativeCompiler<any>;

/** The ValidatingAdmissionPolicy API is GA (admissionregistration.k8s.io/v1, on by default) from 1.30. */
export const VALIDATING_SINCE: EnvironmentVersion = '1.30';

/**
 * MutatingAdmissionPolicy: v1alpha1 in 1.32 and 1.33, v1beta1 in 1.34 and 1.35, both behind the
 * MutatingAdmissionPolicy feature gate and --runtime-config, off by default (managed control
 * planes let nobody turn them on); admissionregistration.k8s.io/v1, on by default, from 1.36.
 */
export const MUTATING_SINCE: EnvironmentVersion = '1.36';

const order = (v: string) => {
  const [major, minor] = v.split('.').map(Number);
  return major * 1000 + minor;
};
export const atLeast = (version: string, since: string): boolean => order(version) >= order(since);

/** Why `version` lacks what a plugin's policies need, or undefined where it has it. */
export type Requirement = (version: EnvironmentVersion) => string | undefined;

/** A compiler whose plugin stays a webhook, with the reason, on the versions `unavailable` names one for. */
export function requiring<Config>(
  name: string,
  unavailable: Requirement,
  compile: NativeCompiler<Config>['compile'],
): NativeCompiler<Config> {
  return {
    name,
    compile(config, version) {
      const reason = unavailable(version);
      return reason === undefined ? compile(config, version) : { webhook: reason };
    },
  };
}

/**
 * The requests the plugin's webhook of that phase is sent. A policy standing in for it is sent the
 * same ones: a MutatingAdmissionPolicy the mutating webhook's, a ValidatingAdmissionPolicy its twin's.
 */
export function webhookRules(
  plugin: { readonly metadata: PluginMetadata },
  phase: 'mutating' | 'validating',
): readonly WebhookRule[] {
  const rules = plugin.metadata[phase]?.rules;
  if (rules === undefined) throw new Error(`${plugin.metadata.name} has no ${phase} webhook`);
  return rules;
}

/** Why a plugin that mutates stays a webhook before 1.36. */
export function mutatingUnavailable(version: EnvironmentVersion): string | undefined {
  if (atLeast(version, MUTATING_SINCE)) return undefined;
  const api = atLeast(version, '1.34') ? 'v1beta1' : atLeast(version, '1.32') ? 'v1alpha1' : 'no';
  return api === 'no'
    ? `it mutates, and Kubernetes ${version} has no MutatingAdmissionPolicy (GA in 1.36)`
    : `it mutates, and MutatingAdmissionPolicy is ${api} in Kubernetes ${version}, off by default (GA in 1.36)`;
}

/** A CEL string literal. */
export const celString = (value: string): string => JSON.stringify(value);
/** A CEL list of string literals. */
export const celStrings = (values: Iterable<string>): string => `[${[...values].map(celString).join(', ')}]`;
