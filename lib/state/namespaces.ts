// Learned namespaces: what our own Namespace webhooks saw (and what `npm run sync` loaded), for
// plugins that need namespace metadata (`needs: ['namespaces']`). The handler records, once per
// request, in lib; plugins only read.
import type { AdmissionPlugin, PluginMetadata, WebhookRule } from '../admission/plugin.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { KubeObject } from '../admission/types.js';
import type { LearnedNamespace, LearnedNamespaces } from './ports.js';
import { placementRules } from './placements.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, json, N, S, str } from './store.js';

const NAMESPACE_SK = 'namespace';
const LISTING_PK = 'ns#';
const LISTING_SK = 'listing';
const namespaceKey = (name: string) => ({ pk: S(`ns#${name}`), sk: S(NAMESPACE_SK) });

type Phase = LearnedNamespace['phase'] | 'Gone';

interface NamespaceRecord {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  phase: Phase;
}

/**
 * The webhook rules that feed learned state to a plugin: the emitter adds them to the plugin's
 * validating webhook (its mutating one when it has no validating phase), so the plugin's Lambda
 * sees every Namespace (ResourceQuota, pod and Node) write it needs to learn from.
 */
export function learningRules(metadata: Pick<PluginMetadata, 'needs'>): WebhookRule[] {
  const rules: WebhookRule[] = [];
  if (metadata.needs.includes('namespaces')) {
    rules.push({ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces', 'namespaces/status'], scope: 'Cluster' });
  }
  if (metadata.needs.includes('resourcequotas')) {
    rules.push({ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['resourcequotas'], scope: 'Namespaced' });
  }
  rules.push(...placementRules(metadata));
  return rules;
}

/** The phase in which a plugin learns: the validating one sees the final object. */
export function learningPhase(plugin: Pick<AdmissionPlugin<unknown>, 'metadata'>): 'validate' | 'mutate' {
  return plugin.metadata.validating ? 'validate' : 'mutate';
}

export function isNamespaceRequest(request: AdmissionRequest): boolean {
  return request.resource.group === '' && request.resource.resource === 'namespaces' && (request.subResource === '' || request.subResource === 'status' || request.subResource === 'finalize');
}

function stringMap(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

function finalizersOf(object: KubeObject | null): string[] {
  const spec = object?.spec as { finalizers?: unknown } | undefined;
  const fromSpec = Array.isArray(spec?.finalizers) ? spec.finalizers : [];
  const fromMeta = Array.isArray(object?.metadata?.finalizers) ? object.metadata.finalizers : [];
  return [...fromSpec, ...fromMeta].filter((f): f is string => typeof f === 'string');
}

/** What a Namespace write tells us, or undefined when it tells nothing (a CONNECT). */
export function namespaceObservation(request: AdmissionRequest): { name: string; record: NamespaceRecord } | undefined {
  const object = request.operation === 'DELETE' ? request.oldObject : request.object;
  const name = request.name || object?.metadata?.name || '';
  if (name === '' || request.operation === 'CONNECT') return undefined;
  const labels = stringMap(object?.metadata?.labels);
  const annotations = stringMap(object?.metadata?.annotations);
  if (request.operation === 'DELETE') {
    // The first DELETE starts termination; the namespace controller's final DELETE (the namespace
    // already terminating, no finalizer left) removes it.
    const old = request.oldObject;
    const final = old?.metadata?.deletionTimestamp !== undefined && old?.metadata?.deletionTimestamp !== null && finalizersOf(old).length === 0;
    return { name, record: { labels, annotations, phase: final ? 'Gone' : 'Terminating' } };
  }
  const status = object?.status as { phase?: unknown } | undefined;
  const terminating = status?.phase === 'Terminating' || (object?.metadata?.deletionTimestamp !== undefined && object?.metadata?.deletionTimestamp !== null);
  return { name, record: { labels, annotations, phase: terminating ? 'Terminating' : 'Active' } };
}

function decode(name: string, item: Item): (LearnedNamespace & { gone: boolean }) | undefined {
  const record = json<NamespaceRecord>(item, 'data');
  if (!record) return undefined;
  return {
    name,
    labels: record.labels,
    annotations: record.annotations,
    phase: record.phase === 'Gone' ? 'Terminating' : record.phase,
    observedAt: str(item, 'observedAt') ?? '',
    gone: record.phase === 'Gone',
  };
}

export class LearnedNamespaceStore implements LearnedNamespaces {
  constructor(private readonly store: StateStore) {}

  async get(name: string): Promise<LearnedNamespace | undefined> {
    const item = await this.store.get(`ns#${name}`, NAMESPACE_SK);
    const learned = item && decode(name, item);
    if (!learned || learned.gone) return undefined;
    const { gone: _gone, ...namespace } = learned;
    return namespace;
  }

  async knownAbsent(name: string): Promise<boolean> {
    const item = await this.store.get(`ns#${name}`, NAMESPACE_SK);
    if (item) return decode(name, item)?.gone === true;
    return (await this.store.get(LISTING_PK, LISTING_SK)) !== undefined;
  }

  /**
   * Records one Namespace write. Idempotent by request uid: the apiserver's retries and
   * reinvocations of the same request write once. A dry run writes nothing (the gate in store).
   */
  async observe(request: AdmissionRequest): Promise<void> {
    if (!isNamespaceRequest(request)) return;
    const observation = namespaceObservation(request);
    if (!observation) return;
    await this.record(observation.name, observation.record, request.uid);
  }

  async record(name: string, record: NamespaceRecord, requestUid: string): Promise<void> {
    try {
      await this.store.put({
        Item: {
          ...namespaceKey(name),
          data: S(JSON.stringify(record)),
          observedAt: S(new Date(this.store.now()).toISOString()),
          observedAtMs: N(this.store.now()),
          lastUid: S(requestUid),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR lastUid <> :uid',
        ExpressionAttributeValues: { ':uid': S(requestUid) },
      });
    } catch (error) {
      if (error instanceof ConditionFailed) return; // the same request, already recorded
      throw error;
    }
  }

  /** `npm run sync`: a complete listing; namespaces absent from it are known not to exist. */
  async recordCompleteListing(at: number): Promise<void> {
    await this.store.put({ Item: { pk: S(LISTING_PK), sk: S(LISTING_SK), listedAtMs: N(at) } });
  }
}

export type { NamespaceRecord };
