// Param objects loaded with the policies (any kind), found as upstream's generic.CollectParams finds
// them through an informer. A param kind is namespaced when its loaded objects carry a namespace.
import type { Manifest } from './manifests.js';
import type { BindingCommon, PolicyCommon } from './spec.js';
import { toCel } from '../cel/values.js';

interface ParamObject {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Converted for CEL once, at start. */
  readonly value: unknown;
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');
const kindKey = (apiVersion: string, kind: string) => `${groupOf(apiVersion)}/${kind}`;

/** A binding that cannot get its params: answered under the policy's failurePolicy. */
export class ParamError extends Error {
  override readonly name = 'ParamError';
}

export class ParamStore {
  private readonly byKind = new Map<string, ParamObject[]>();

  /**
   * `builtInKind` says which kinds the cluster serves without objects loaded here (the built-in
   * kinds a plugin knows); without it, every paramKind counts as served.
   */
  constructor(
    manifests: readonly Manifest[],
    private readonly builtInKind?: (apiVersion: string, kind: string) => boolean,
  ) {
    for (const { object } of manifests) {
      const metadata = (object.metadata ?? {}) as {
        name?: string;
        namespace?: string;
        labels?: Record<string, string>;
      };
      const key = kindKey(String(object.apiVersion ?? ''), String(object.kind ?? ''));
      const list = this.byKind.get(key) ?? [];
      list.push({
        name: metadata.name ?? '',
        namespace: metadata.namespace ?? '',
        labels: metadata.labels ?? {},
        value: toCel(object),
      });
      this.byKind.set(key, list);
    }
  }

  /**
   * policy_source.go ensureParamsForPolicyLocked: the policy's configuration error when its
   * paramKind names a kind the cluster does not serve (no built-in kind, no object loaded), else
   * undefined. The dispatcher answers it for the policy, before any binding.
   */
  paramKindError(policy: Pick<PolicyCommon, 'paramKind'>): ParamError | undefined {
    const { paramKind } = policy;
    if (!paramKind || this.builtInKind === undefined) return undefined;
    const { apiVersion, kind } = paramKind;
    if (this.byKind.has(kindKey(apiVersion, kind)) || this.builtInKind(apiVersion, kind)) return undefined;
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    return new ParamError(`failed to find resource referenced by paramKind: '${group}/${version}, Kind=${kind}'`);
  }

  /**
   * The params one binding evaluates with: [null] when the policy has no paramKind or the binding
   * no paramRef (upstream evaluates once with params = null), else the objects found, possibly none.
   */
  collect(
    policy: Pick<PolicyCommon, 'paramKind'>,
    binding: Pick<BindingCommon, 'paramRef'>,
    requestNamespace: string,
  ): unknown[] {
    const { paramKind } = policy;
    const ref = binding.paramRef;
    if (!paramKind || !ref) return [null];
    const objects = this.byKind.get(kindKey(paramKind.apiVersion, paramKind.kind)) ?? [];
    const namespaced = objects.some((o) => o.namespace !== '');
    let namespace = '';
    if (namespaced) {
      namespace = ref.namespace ?? requestNamespace;
      if (namespace === '')
        throw new ParamError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    } else if (ref.namespace !== undefined && objects.length > 0) {
      throw new ParamError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
    }
    const inScope = objects.filter((o) => o.namespace === namespace);
    const found =
      ref.name !== undefined
        ? inScope.filter((o) => o.name === ref.name)
        : inScope.filter((o) => ref.selector.matches(o.labels));
    if (found.length === 0 && ref.parameterNotFoundAction === 'Deny') {
      throw new ParamError('no params found for policy binding with `Deny` parameterNotFoundAction');
    }
    return found.map((o) => o.value);
  }
}
