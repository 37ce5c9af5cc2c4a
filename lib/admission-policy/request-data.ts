// The request's data for policy expressions, shared by every policy a request meets: converted
// for CEL once and only if some policy gets that far, the namespace read once and only if needed.
import type { LearnedNamespace } from '../admission/ports.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { UnstructuredRequest } from '../admission/unstructured.js';
import { unstructuredRequest } from '../admission/unstructured.js';
import { namespaceVariable, requestVariable, toCel } from '../cel/values.js';
import { neverSeenWarning } from '../state/never-seen.js';
import type { UnknownNamespaceRule } from './manifests.js';
import { SKIP_UNKNOWN } from './matching.js';

export class RequestData {
  private cache?: { object: unknown; oldObject: unknown; request: unknown };
  private exactValues?: UnstructuredRequest;
  private old?: { value: unknown };
  private requestCache?: { value: unknown };
  private namespace?: Promise<LearnedNamespace | undefined>;
  /** Set when a selector skipped a policy or binding because the namespace was never seen. */
  private skippedUnknown = false;

  constructor(
    readonly request: AdmissionRequest,
    private readonly learnedNamespaces: { get(name: string): Promise<LearnedNamespace | undefined> },
    private readonly unknownNamespace: UnknownNamespaceRule,
  ) {}

  /** object, oldObject and options with numbers typed as the apiserver types them (from the review's text). */
  private get exact(): UnstructuredRequest {
    this.exactValues ??= unstructuredRequest(this.request);
    return this.exactValues;
  }

  get converted() {
    this.cache ??= {
      object: this.exact.object,
      oldObject: this.exact.oldObject,
      request: requestVariable(this.request, this.exact.options),
    };
    return this.cache;
  }

  /** `oldObject` alone (a mutating policy converts each object it sees itself). */
  get oldObject(): unknown {
    this.old ??= { value: this.cache?.oldObject ?? this.exact.oldObject };
    return this.old.value;
  }

  /** `request` alone. */
  get requestValue(): unknown {
    this.requestCache ??= { value: this.cache?.request ?? requestVariable(this.request, this.exact.options) };
    return this.requestCache.value;
  }

  /** upstream: the Namespace object itself is not its own namespace; cluster-scoped has none. */
  get namespaceName(): string {
    const { kind } = this.request;
    return kind.group === '' && kind.version === 'v1' && kind.kind === 'Namespace' ? '' : this.request.namespace;
  }

  learned(): Promise<LearnedNamespace | undefined> {
    this.namespace ??= this.learnedNamespaces.get(this.request.namespace);
    return this.namespace;
  }

  /** Labels for namespaceSelector: a namespace being written is read from the request itself. */
  readonly labels = async () => {
    const r = this.request;
    if (
      r.resource.resource === 'namespaces' &&
      r.subResource === '' &&
      (r.operation === 'CREATE' || r.operation === 'UPDATE')
    )
      return r.object?.metadata?.labels ?? {};
    const learned = await this.learned();
    if (learned) return learned.labels;
    if (this.unknownNamespace === 'NoLabels') return {};
    if (this.unknownNamespace === 'Fail') return null;
    this.skippedUnknown = true;
    return SKIP_UNKNOWN;
  };

  /** The one warning of unknownNamespace Skip, when a selector skipped something for this request. */
  neverSeenWarnings(upstreamName: string): string[] {
    if (!this.skippedUnknown) return [];
    const consequence = 'every policy and binding whose namespaceSelector reads its labels was skipped';
    return [neverSeenWarning(upstreamName, this.request.namespace, consequence)];
  }

  async namespaceObject(): Promise<unknown> {
    if (this.namespaceName === '') return null;
    return toCel(namespaceVariable(this.namespaceName, await this.learned()));
  }
}
