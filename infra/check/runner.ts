// The admission chain of a cluster with our webhooks installed, in one process: the webhook
// configurations `npm run emit` would register (infra/emit/webhooks.ts, under the same
// AdmissionConfiguration), dispatched as the apiserver dispatches them (lib/admission/chain.ts),
// each call answered by the plugin's own Lambda handler over an API Gateway event, with the state
// ports kept in memory (memory-state.ts). `npm run check` and `npm run audit` are built on it.
import { randomUUID } from 'node:crypto';
import jsonpatch from 'fast-json-patch';
import type { Context } from 'aws-lambda';
import { plugins as registry } from '../../functions/index.js';
import { compileExpression } from '../../lib/cel/compile.js';
import type { CompiledExpression } from '../../lib/cel/compile.js';
import { requestVariable, toCel } from '../../lib/cel/values.js';
import type { ChainPorts, ChainResult, ChainWebhook, WebhookAnswer, WebhookCall } from '../../lib/admission/chain.js';
import { runChain } from '../../lib/admission/chain.js';
import type { JsonPatchOperation } from '../../lib/admission/diff.js';
import type { LabelSelector } from '../../lib/admission/label-selector.js';
import type { AnyAdmissionPlugin, WebhookRule } from '../../lib/admission/plugin.js';
import type { AdmissionRequest } from '../../lib/admission/request.js';
import type { AdmissionRequestWire, AdmissionReviewWire, KubeObject, UserInfo } from '../../lib/admission/types.js';
import type { ConfiguredPlugin } from '../../lib/config/plugins.js';
import { activePlugins, loadPluginSet } from '../../lib/config/plugins.js';
import type { AdmissionHandler } from '../../lib/http/admission-handler.js';
import { AUDIT_REFUSAL_KEY } from '../../lib/http/enforcement.js';
import { setLogSink } from '../../lib/http/log.js';
import { createPluginHandler } from '../../lib/state/handler.js';
import type { WebhookConfiguration } from '../emit/webhooks.js';
import { NAMESPACE_NAME_LABEL, WEBHOOK_DOMAIN, webhookConfigurations } from '../emit/webhooks.js';
import { groupVersion, kindMapping } from './kinds.js';
import { MemoryState } from './memory-state.js';

/** A host no request ever reaches: the in-process caller routes on the path alone. */
export const OFFLINE_BASE_URL = 'https://serverless-admission.check.invalid';

/** `kubectl apply` as a cluster administrator: what `--user` and `--group` default to. */
export const DEFAULT_USER: UserInfo = {
  username: 'kubernetes-admin',
  groups: ['system:masters', 'system:authenticated'],
};

/** One emitted webhook, with the plugin (and role) its name says it belongs to (design item 4). */
export interface CheckWebhook extends ChainWebhook {
  readonly plugin: string;
  /** `judge`: the plugin decides; `learn`: its fail-open twin that only records cluster state. */
  readonly role: 'judge' | 'learn';
  readonly url: string;
}

/** The webhooks of the configurations, in the apiserver's order: configurations by name, then in order. */
export function chainWebhooks(configurations: readonly WebhookConfiguration[]): CheckWebhook[] {
  const sorted = [...configurations].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  return sorted.flatMap((configuration) =>
    (configuration.webhooks ?? []).map((webhook): CheckWebhook => {
      const [plugin, phase] = webhook.name.slice(0, -`.${WEBHOOK_DOMAIN}`.length).split('.');
      return {
        name: webhook.name,
        plugin,
        role: phase === 'learn' ? 'learn' : 'judge',
        phase: configuration.kind === 'MutatingWebhookConfiguration' ? 'mutate' : 'validate',
        url: webhook.clientConfig.url ?? '',
        rules: (webhook.rules ?? []) as unknown as WebhookRule[],
        namespaceSelector: webhook.namespaceSelector as LabelSelector | undefined,
        objectSelector: webhook.objectSelector as LabelSelector | undefined,
        matchConditions: webhook.matchConditions ?? [],
        failurePolicy: (webhook.failurePolicy ?? 'Fail') as 'Fail' | 'Ignore',
        reinvocationPolicy: ('reinvocationPolicy' in webhook ? webhook.reinvocationPolicy : 'Never') as
          | 'Never'
          | 'IfNeeded',
      };
    }),
  );
}

/**
 * The webhooks' matchConditions compiled once with the project's CEL (the apiserver's
 * environment for them: object, oldObject, request; no params), evaluated as the apiserver's
 * matcher does: a false condition skips the webhook, an error alone goes to failurePolicy.
 */
export function celConditions(webhooks: readonly CheckWebhook[]): ChainPorts<CheckWebhook>['conditionsMatch'] {
  const compiled = new Map<string, { name: string; expression: CompiledExpression }[]>(
    webhooks.map((w) => [
      w.name,
      (w.matchConditions ?? []).map((c) => ({
        name: c.name,
        expression: compileExpression(c.expression, { variables: new Set(), role: 'matchCondition', params: false }),
      })),
    ]),
  );
  return (webhook, request: AdmissionRequest) => {
    const conditions = compiled.get(webhook.name) ?? [];
    if (conditions.length === 0) return true;
    const bindings = {
      object: toCel(request.object),
      oldObject: toCel(request.oldObject),
      request: requestVariable(request),
      params: null,
      namespaceObject: null,
    };
    const errors: string[] = [];
    for (const { name, expression } of conditions) {
      const outcome = expression.evaluate(bindings, 1_000_000);
      if ('error' in outcome) errors.push(`${name}: ${outcome.error}`);
      else if (outcome.value === false) return false;
    }
    return errors.length === 0 ? true : { error: errors.join('; ') };
  };
}

const lambdaContext = { getRemainingTimeInMillis: () => 900_000 } as unknown as Context;

/** Calls the plugin's Lambda handler as API Gateway would, for the webhook's URL path. */
export function inProcessCaller(handlers: ReadonlyMap<string, AdmissionHandler>): ChainPorts<CheckWebhook>['call'] {
  return async (webhook, request) => {
    const handler = handlers.get(webhook.plugin);
    if (!handler) return { failure: `no handler for plugin ${webhook.plugin}` };
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
    const event = {
      path: new URL(webhook.url).pathname,
      httpMethod: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(review),
      isBase64Encoded: false,
      requestContext: { identity: { clientCert: { subjectDN: 'CN=kube-apiserver-admission-client' } } },
    } as unknown as Parameters<AdmissionHandler>[0];
    const result = await handler(event, lambdaContext);
    return answerOf(result.statusCode, result.body);
  };
}

/** An HTTP answer as the apiserver reads it: 200 with an AdmissionReview, or a failed call. */
export function answerOf(statusCode: number, body: string): WebhookAnswer {
  if (statusCode !== 200) return { failure: `the server responded with HTTP ${statusCode}: ${body.trim()}` };
  const review = JSON.parse(body) as AdmissionReviewWire;
  if (!review.response) return { failure: 'webhook response was absent' };
  return { response: review.response };
}

export interface ChainOptions {
  /** The AdmissionConfiguration file (ADMISSION_CONFIG and config/admission.yaml otherwise). */
  readonly configFile?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly user?: UserInfo;
  /** Namespaces that exist before the run, with their labels (learned, as `npm run sync` would). */
  readonly namespaces?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Audit: every request reads state and writes none. */
  readonly readOnly?: boolean;
  readonly plugins?: readonly AnyAdmissionPlugin[];
  /** Another transport for the calls (a test sends them to the local server over HTTPS). */
  readonly call?: ChainPorts<CheckWebhook>['call'];
  /** The webhooks' base URL (the local server's, with `call`). */
  readonly baseUrl?: string;
}

/** Where an object came from: `file#index` (index of the YAML document, from 1). */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly source: string;
}

export type PluginDecision = 'allowed' | 'patched' | 'warned' | 'denied' | 'error';

/** One plugin's part in one object's admission: its judging webhooks' calls, summed up. */
export interface PluginOutcome {
  readonly plugin: string;
  readonly decision: PluginDecision;
  readonly messages: readonly string[];
  readonly warnings: readonly string[];
  readonly patch: readonly { readonly webhook: string; readonly round: 1 | 2; readonly diff: readonly string[] }[];
  readonly auditAnnotations: Readonly<Record<string, string>>;
}

export interface ObjectResult {
  readonly ref: ObjectRef;
  readonly allowed: boolean;
  readonly status?: ChainResult<CheckWebhook>['status'];
  readonly warnings: readonly string[];
  readonly plugins: readonly PluginOutcome[];
  readonly calls: readonly WebhookCall<CheckWebhook>[];
}

/** A manifest that cannot be a request: exit 2 names it. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

const pointerTokens = (path: string) =>
  path
    .split('/')
    .slice(1)
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));

function valueAt(object: unknown, path: string): unknown {
  let at = object;
  for (const token of pointerTokens(path)) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[token];
  }
  return at;
}

/** `/spec/containers/0/image` → `spec.containers[0].image`: the field paths of upstream's messages. */
export function fieldPath(path: string): string {
  return pointerTokens(path)
    .map((t, i) =>
      /^\d+$/.test(t) ? `[${t}]` : i === 0 ? t : /^[A-Za-z_][\w-]*$/.test(t) ? `.${t}` : `[${JSON.stringify(t)}]`,
    )
    .join('');
}

/** A patch as lines a reviewer reads: `~ field: old -> new`, `+ field: value`, `- field: old`. */
export function readableDiff(before: KubeObject | null, patch: readonly JsonPatchOperation[]): string[] {
  const show = (v: unknown) => JSON.stringify(v);
  return patch.map((op) => {
    const field = fieldPath(op.path) || '(object)';
    if (op.op === 'remove') return `- ${field}: ${show(valueAt(before, op.path))}`;
    if (op.op === 'replace') return `~ ${field}: ${show(valueAt(before, op.path))} -> ${show(op.value)}`;
    return `+ ${field}: ${show(op.value)}`;
  });
}

/** Judging calls of one plugin, summed up: a denial wins, then an error, a warning, a patch. */
export function pluginOutcomes(calls: readonly WebhookCall<CheckWebhook>[]): PluginOutcome[] {
  const byPlugin = new Map<string, WebhookCall<CheckWebhook>[]>();
  for (const call of calls) {
    if (call.webhook.role !== 'judge') continue;
    byPlugin.set(call.webhook.plugin, [...(byPlugin.get(call.webhook.plugin) ?? []), call]);
  }
  return [...byPlugin].map(([plugin, own]) => {
    const warnings = own.flatMap((c) => c.warnings);
    const outcomes = own.map((c) => c.outcome);
    const decision: PluginDecision = outcomes.includes('denied')
      ? 'denied'
      : outcomes.some((o) => o === 'failed' || o === 'failed-open')
        ? 'error'
        : warnings.length > 0 || own.some((c) => AUDIT_REFUSAL_KEY in c.auditAnnotations)
          ? 'warned'
          : outcomes.includes('patched')
            ? 'patched'
            : 'allowed';
    return {
      plugin,
      decision,
      messages: own.flatMap((c) => [
        ...(c.status?.message ? [c.status.message] : []),
        ...(c.error ? [c.error] : []),
        ...Object.entries(c.auditAnnotations).map(([k, v]) => `${c.webhook.name}/${k}: ${v}`),
      ]),
      warnings,
      patch: own
        .filter((c) => c.patch.length > 0)
        .map((c) => ({ webhook: c.webhook.name, round: c.round, diff: readableDiff(c.before, c.patch) })),
      auditAnnotations: Object.assign({}, ...own.map((c) => c.auditAnnotations)),
    };
  });
}

export class AdmissionChain {
  readonly memory: MemoryState;
  readonly webhooks: readonly CheckWebhook[];
  readonly active: readonly ConfiguredPlugin[];
  readonly configurationFile: string;
  private readonly ports: ChainPorts<CheckWebhook>;
  private readonly user: UserInfo;
  /** Namespaces of the cluster so far (given, or created by this run) and their labels. */
  private readonly clusterNamespaces = new Map<string, Readonly<Record<string, string>>>();

  constructor(options: ChainOptions = {}) {
    const env = {
      ...(options.env ?? process.env),
      ...(options.configFile && { ADMISSION_CONFIG: options.configFile }),
    };
    const set = loadPluginSet(options.plugins ?? registry, env);
    this.configurationFile = set.configuration.source.file;
    this.active = activePlugins(set);
    this.user = options.user ?? DEFAULT_USER;
    this.memory = new MemoryState(options.readOnly ?? false);
    const configurations = webhookConfigurations(
      this.active.map((p) => p.plugin),
      {
        baseUrl: options.baseUrl ?? OFFLINE_BASE_URL,
        auth: { mode: 'mtls' },
        matchConditions: true,
        configs: new Map(this.active.map((p) => [p.plugin.metadata.name, p.config])),
        enforcement: new Map(
          this.active.map(({ plugin, enforcement, exemptions }) => [plugin.metadata.name, { enforcement, exemptions }]),
        ),
      },
    );
    this.webhooks = chainWebhooks(configurations);
    for (const [name, labels] of options.namespaces ?? []) {
      const withName = { ...labels, [NAMESPACE_NAME_LABEL]: name };
      this.clusterNamespaces.set(name, withName);
      this.memory.recordNamespace(name, { labels: withName, annotations: {}, phase: 'Active' });
    }
    let call = options.call;
    if (!call) {
      // The handlers' request log is for CloudWatch; a command's output is its report.
      setLogSink(() => {});
      const handlers = new Map<string, AdmissionHandler>(
        this.active.map(({ plugin, config, enforcement, exemptions }) => [
          plugin.metadata.name,
          createPluginHandler(plugin, {
            config,
            enforcement,
            exemptions,
            callerAuth: { mode: 'mtls', allowedSubjects: [] },
            state: (request) => this.memory.state(request, plugin.metadata.name),
          }),
        ]),
      );
      call = inProcessCaller(handlers);
    }
    this.ports = {
      call,
      conditionsMatch: celConditions(this.webhooks),
      // A namespace neither given nor created in the run is taken to exist, with the label the
      // apiserver sets on every namespace: manifests name namespaces they do not create.
      namespaceLabels: (name) => this.clusterNamespaces.get(name) ?? { [NAMESPACE_NAME_LABEL]: name },
      applyPatch: (object, patch) =>
        jsonpatch.applyPatch(structuredClone(object), patch as jsonpatch.Operation[], true, false).newDocument,
      uid: () => randomUUID(),
      beforeValidation: storedOnCreate,
    };
  }

  /** The request the apiserver would send for creating `object` (namespace defaulted, as kubectl). */
  createRequest(object: KubeObject, source: string, defaultNamespace = 'default'): AdmissionRequestWire {
    if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || object.kind === '')
      throw new ManifestError(`${source}: not a Kubernetes object (apiVersion and kind are required)`);
    const meta = object.metadata ?? {};
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (name === '' && typeof meta.generateName !== 'string')
      throw new ManifestError(`${source}: ${object.kind} has neither metadata.name nor metadata.generateName`);
    const { group, version } = groupVersion(object.apiVersion);
    const given = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
    const mapping = kindMapping(group, object.kind, given !== undefined);
    const namespace = mapping.namespaced ? (given ?? defaultNamespace) : '';
    const created: KubeObject = { ...object, metadata: { ...meta, ...(mapping.namespaced && { namespace }) } };
    const kind = { group, version, kind: object.kind };
    const resource = { group, version, resource: mapping.resource };
    return {
      uid: randomUUID(),
      kind,
      resource,
      requestKind: kind,
      requestResource: resource,
      name,
      namespace,
      operation: 'CREATE',
      userInfo: this.user,
      object: created,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    } as AdmissionRequestWire;
  }

  /**
   * Admits one object as a CREATE through `phases` (audit: validating only). A Namespace the chain
   * admits exists for the objects after it, with its final labels.
   */
  async admit(
    object: KubeObject,
    source: string,
    phases: 'all' | 'validate' = 'all',
    defaultNamespace = 'default',
  ): Promise<ObjectResult> {
    const request = this.createRequest(object, source, defaultNamespace);
    const webhooks = phases === 'all' ? this.webhooks : this.webhooks.filter((w) => w.phase === 'validate');
    const result = await runChain(webhooks, request, this.ports);
    const name = request.name ?? '';
    if (result.allowed && request.kind.group === '' && request.kind.kind === 'Namespace' && name !== '') {
      const labels = (result.object?.metadata?.labels as Record<string, string> | undefined) ?? {};
      this.clusterNamespaces.set(name, { ...labels, [NAMESPACE_NAME_LABEL]: name });
    }
    return {
      ref: {
        apiVersion: object.apiVersion as string,
        kind: object.kind as string,
        namespace: request.namespace ?? '',
        name: name || `${object.metadata?.generateName ?? ''}*`,
        source,
      },
      allowed: result.allowed,
      ...(result.status && { status: result.status }),
      warnings: result.warnings,
      plugins: pluginOutcomes(result.calls),
      calls: result.calls,
    };
  }
}

/**
 * The registry's BeforeCreate between mutating and validating admission: a uid and a creation
 * time when the object has none, and for a Namespace the `kubernetes.io/metadata.name` label its
 * strategy sets (Kubernetes 1.21+). Other strategies' defaults are not modelled.
 */
export function storedOnCreate(request: AdmissionRequestWire): KubeObject | null {
  const object = request.object ?? null;
  if (request.operation !== 'CREATE' || object === null) return object;
  const metadata = { ...object.metadata };
  metadata.uid ??= randomUUID();
  metadata.creationTimestamp ??= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (request.kind.group === '' && request.kind.kind === 'Namespace' && typeof metadata.name === 'string')
    metadata.labels = {
      ...(metadata.labels as Record<string, string> | undefined),
      [NAMESPACE_NAME_LABEL]: metadata.name,
    };
  return { ...object, metadata };
}

/** Namespaces first (they are learned before the objects in them), then the rest in input order. */
export function namespacesFirst<T extends { object: KubeObject }>(items: readonly T[]): T[] {
  const isNamespace = (o: KubeObject) =>
    o.kind === 'Namespace' && groupVersion(String(o.apiVersion ?? '')).group === '';
  return [...items.filter((i) => isNamespace(i.object)), ...items.filter((i) => !isNamespace(i.object))];
}
