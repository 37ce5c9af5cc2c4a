// A policy plugin's loaded manifests, grouped as the apiserver groups the objects it stores:
// `<Kind>` policies by name (a name defined twice is refused), `<Kind>Binding`s attached to the
// policy they name (a binding defined twice is refused; one naming a policy that is not loaded is
// accepted and does nothing, as the apiserver stores it and its policy source skips it), and every
// other object a param. ValidatingAdmissionPolicy and MutatingAdmissionPolicy differ only in how
// one policy and one binding are read.
import type { EnvironmentVersion } from '../cel/cel-env.js';
import { ConfigError } from '../config/errors.js';
import type { Fields } from './fields.js';
import type { Manifest, PluginOptions } from './manifests.js';
import { ADMISSION_REGISTRATION_VERSIONS } from './manifests.js';
import { PolicyIndex } from './matching.js';
import type { MatchResources } from './matching.js';
import { ParamStore } from './params.js';

export interface ReadBinding<Binding> {
  readonly policyName: string;
  readonly binding: Binding;
  /** The binding's spec, for errors that name its fields. */
  readonly owner: Fields;
}

export interface PolicySet<Policy extends { readonly order: number; readonly matchConstraints: MatchResources }> {
  readonly policies: Policy[];
  readonly index: PolicyIndex<Policy>;
  readonly params: ParamStore;
  readonly unknownNamespace: PluginOptions['unknownNamespace'];
}

const kindOf = (m: Manifest) =>
  ADMISSION_REGISTRATION_VERSIONS.includes(String(m.object.apiVersion)) ? String(m.object.kind) : '';

export function loadPolicySet<
  Binding extends { readonly name: string },
  Policy extends {
    readonly name: string;
    readonly order: number;
    readonly matchConstraints: MatchResources;
    bindings: Binding[];
  },
>(
  plugin: string,
  options: PluginOptions,
  policyOf: (manifest: Manifest, order: number, celEnvironment: EnvironmentVersion) => Policy,
  bindingOf: (manifest: Manifest) => ReadBinding<Binding>,
  builtInKind?: (apiVersion: string, kind: string) => boolean,
): PolicySet<Policy> {
  const policies = new Map<string, Policy>();
  const bindings: ReadBinding<Binding>[] = [];
  const params: Manifest[] = [];
  for (const manifest of options.manifests) {
    const kind = kindOf(manifest);
    if (kind === plugin) {
      const policy = policyOf(manifest, policies.size, options.celEnvironment);
      if (policies.has(policy.name))
        throw new ConfigError(plugin, `${plugin} ${JSON.stringify(policy.name)} (${manifest.origin})`, 'defined twice');
      policies.set(policy.name, policy);
    } else if (kind === `${plugin}Binding`) bindings.push(bindingOf(manifest));
    else params.push(manifest);
  }
  for (const { policyName, binding, owner } of bindings) {
    const policy = policies.get(policyName);
    // policy_source.go: "Just skip bindings that refer to non-existent policies".
    if (!policy) continue;
    if (policy.bindings.some((b) => b.name === binding.name))
      throw owner.error('', `binding ${JSON.stringify(binding.name)} defined twice`);
    policy.bindings.push(binding);
  }
  const list = [...policies.values()];
  return {
    policies: list,
    index: new PolicyIndex(list),
    params: new ParamStore(params, builtInKind),
    unknownNamespace: options.unknownNamespace,
  };
}
