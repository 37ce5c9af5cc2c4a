// Learned placements: which node each pod is bound to, and each Node's UID, for the lookups
// NodeRestriction makes in the apiserver's informers (`needs: ['placements']`). The handler
// records, once per request, in lib; plugins only read.
//
// A record is one incarnation (uid) of a pod or Node. What a request teaches:
//   - the stored object (`oldObject` of any pod or Node UPDATE, and of a refused DELETE) is the
//     apiserver's truth at that moment and replaces the record, unless that very incarnation was
//     already seen deleted (a finalizer's removal or a late status update must not bring it back);
//   - an admitted DELETE leaves a tombstone of the incarnation, expiring after a day;
//   - an admitted CREATE is only a claim, as the apiserver may still refuse it (AlreadyExists above
//     all): it is recorded for a name with no live record only. Nodes' own pod creates (mirror
//     pods) teach nothing: their status updates do, and a node's claim on a name could otherwise
//     let it evict the pod that really has it;
//   - an admitted Binding (the scheduler's pods/binding, naming the pod's uid, which the apiserver
//     checks) places that incarnation if it is unbound, and replaces the record of any other one.
// Observations are lost while the learning webhook is down, and concurrent Lambda instances may
// land them out of order; the next status update of a live pod or Node corrects it (README).
import type { PluginMetadata, WebhookRule } from '../admission/plugin.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { KubeObject } from '../admission/types.js';
import type { LearnedNode, LearnedPlacements, LearnedPod } from './ports.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, N, S, str } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';
import { isObjectOfKind } from '../kube/objects.js';

const POD_SK = 'placement';
/** How long a tombstone is kept: a day of deletions. */
const TOMBSTONE_SECONDS = 24 * 60 * 60;
const NODE_SK = 'node';
const podKey = (namespace: string, name: string) => ({ pk: S(`pod#${namespace}/${name}`), sk: S(POD_SK) });
const nodeKey = (name: string) => ({ pk: S(`node#${name}`), sk: S(NODE_SK) });
const BOOL = (value: boolean) => ({ BOOL: value });

/** The rules that feed placements: every write of pods (binding and status included) and Nodes. */
export function placementRules(metadata: Pick<PluginMetadata, 'needs'>): WebhookRule[] {
  if (!metadata.needs.includes('placements')) return [];
  return [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status', 'pods/binding', 'nodes', 'nodes/status'], scope: '*' }];
}

export function isPlacementRequest(request: AdmissionRequest): boolean {
  const { group, resource } = request.resource;
  return group === '' && (resource === 'pods' || resource === 'nodes');
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const nameOf = (request: AdmissionRequest, object: KubeObject | null) => request.name || text(object?.metadata?.name);
const nodeNameOf = (pod: KubeObject) => text((pod.spec as { nodeName?: unknown } | undefined)?.nodeName);

type Target = { kind: 'pod'; namespace: string; name: string } | { kind: 'node'; name: string };

/** What one pod or Node write tells, or undefined when it tells nothing. */
export type PlacementObservation =
  | { kind: 'stored' | 'created'; target: Target; uid: string; nodeName: string }
  | { kind: 'deleted'; target: Target; uid: string }
  | { kind: 'bound'; namespace: string; name: string; uid: string; nodeName: string };

/** nodeidentifier's first test: a node's credentials. */
const isNodeUser = (request: AdmissionRequest) => (request.userInfo.username ?? '').startsWith('system:node:');

/**
 * A pod or Node from a `kubectl get -o json` listing: a stored object, as an UPDATE's oldObject.
 * The kind is the listing's (typed lists may leave it out of their items).
 */
export function listedObservation(kind: 'Pod' | 'Node', object: KubeObject): PlacementObservation {
  const name = text(object.metadata?.name);
  const uid = text(object.metadata?.uid);
  if (kind === 'Node') return { kind: 'stored', target: { kind: 'node', name }, uid, nodeName: '' };
  return { kind: 'stored', target: { kind: 'pod', namespace: text(object.metadata?.namespace), name }, uid, nodeName: nodeNameOf(object) };
}

export function placementObservation(request: AdmissionRequest, admitted: boolean): PlacementObservation | undefined {
  if (!isPlacementRequest(request) || request.operation === 'CONNECT') return undefined;
  const isPod = request.resource.resource === 'pods';
  const kind = isPod ? 'Pod' : 'Node';
  const target = (object: KubeObject | null): Target | undefined => {
    const name = nameOf(request, object);
    if (name === '') return undefined;
    if (!isPod) return { kind: 'node', name };
    const namespace = request.namespace || text(object?.metadata?.namespace);
    return namespace === '' ? undefined : { kind: 'pod', namespace, name };
  };
  const facts = (object: KubeObject) => ({ uid: text(object.metadata?.uid), nodeName: isPod ? nodeNameOf(object) : '' });

  if (isPod && request.subResource === 'binding') {
    const binding = request.object;
    if (!admitted || request.operation !== 'CREATE' || !isObjectOfKind(binding, 'Binding')) return undefined;
    const nodeName = text((binding as { target?: { name?: unknown } }).target?.name);
    const name = nameOf(request, binding);
    if (nodeName === '' || name === '' || request.namespace === '') return undefined;
    return { kind: 'bound', namespace: request.namespace, name, uid: text(binding.metadata?.uid), nodeName };
  }
  // Other subresources (eviction, ephemeralcontainers, resize...) teach through their oldObject.
  const old = request.oldObject;
  if (request.operation === 'DELETE' && request.subResource === '' && admitted) {
    const at = target(old);
    return at && { kind: 'deleted', target: at, uid: text(old?.metadata?.uid) };
  }
  if ((request.operation === 'UPDATE' || request.operation === 'DELETE') && isObjectOfKind(old, kind)) {
    const at = target(old);
    return at && { kind: 'stored', target: at, ...facts(old) };
  }
  if (request.operation === 'CREATE' && request.subResource === '' && admitted && isObjectOfKind(request.object, kind) && !(isPod && isNodeUser(request))) {
    const at = target(request.object);
    return at && { kind: 'created', target: at, ...facts(request.object) };
  }
  return undefined;
}

const keyOf = (target: Target) => (target.kind === 'pod' ? podKey(target.namespace, target.name) : nodeKey(target.name));

/** No live record, or a tombstone of another incarnation (or an expired one). */
const FREE = 'attribute_not_exists(pk) OR (gone = :true AND (uid <> :uid OR expiresAt <= :now))';
/** A live record, of any incarnation, or FREE: everything but this incarnation's tombstone. */
const NOT_THIS_TOMBSTONE = 'attribute_not_exists(pk) OR gone = :false OR uid <> :uid OR expiresAt <= :now';

export class LearnedPlacementStore implements LearnedPlacements {
  constructor(private readonly store: StateStore) {}

  private async live(key: { pk: { S?: string }; sk: { S?: string } }): Promise<Item | undefined> {
    const item = await this.store.get(key.pk.S!, key.sk.S!);
    return item === undefined || item.gone?.BOOL === true ? undefined : item;
  }

  async pod(namespace: string, name: string): Promise<LearnedPod | undefined> {
    const item = await this.live(podKey(namespace, name));
    return item && { namespace, name, uid: str(item, 'uid') ?? '', nodeName: str(item, 'nodeName') ?? '', observedAt: str(item, 'observedAt') ?? '' };
  }

  async node(name: string): Promise<LearnedNode | undefined> {
    const item = await this.live(nodeKey(name));
    return item && { name, uid: str(item, 'uid') ?? '', observedAt: str(item, 'observedAt') ?? '' };
  }

  /** Records what one pod or Node write teaches. A dry run writes nothing (the gate in store). */
  async observe(request: AdmissionRequest, admitted: boolean): Promise<void> {
    const observation = placementObservation(request, admitted);
    if (observation) await this.record(observation);
  }

  async record(observation: PlacementObservation): Promise<void> {
    const now = this.store.now();
    const when = { observedAt: S(new Date(now).toISOString()), observedAtMs: N(now) };
    // DynamoDB refuses values an expression does not use: each condition gets exactly its own
    // (no name is a prefix of another).
    const condition = (expression: string, uid: string) => {
      const all = { ':true': BOOL(true), ':false': BOOL(false), ':uid': S(uid), ':now': N(this.store.nowSeconds()), ':unbound': S('') };
      return { ConditionExpression: expression, ExpressionAttributeValues: Object.fromEntries(Object.entries(all).filter(([name]) => expression.includes(name))) };
    };
    const live = (target: Target, uid: string, nodeName: string) => ({ ...keyOf(target), uid: S(uid), ...(target.kind === 'pod' && { nodeName: S(nodeName) }), gone: BOOL(false), ...when });
    try {
      switch (observation.kind) {
        case 'stored':
        case 'created': {
          const { target, uid, nodeName } = observation;
          await this.store.put({ Item: live(target, uid, nodeName), ...condition(observation.kind === 'stored' ? NOT_THIS_TOMBSTONE : FREE, uid) });
          return;
        }
        case 'deleted': {
          // Tombstones expire (TTL), so churning pods do not grow the table without bound.
          const { target, uid } = observation;
          await this.store.put({ Item: { ...keyOf(target), uid: S(uid), gone: BOOL(true), ...when, [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + TOMBSTONE_SECONDS) } });
          return;
        }
        case 'bound': {
          const { namespace, name, uid, nodeName } = observation;
          const target: Target = { kind: 'pod', namespace, name };
          if (uid === '') {
            // A Binding without a uid: only a known unbound pod can be placed.
            await this.store.update({
              Key: podKey(namespace, name),
              UpdateExpression: 'SET nodeName = :node, observedAt = :at, observedAtMs = :ms',
              ConditionExpression: 'attribute_exists(pk) AND gone = :false AND nodeName = :unbound',
              ExpressionAttributeValues: { ':node': S(nodeName), ':at': when.observedAt, ':ms': when.observedAtMs, ':false': BOOL(false), ':unbound': S('') },
            });
            return;
          }
          // The apiserver binds only the incarnation named, and only once.
          await this.store.put({ Item: live(target, uid, nodeName), ...condition(`${FREE} OR (gone = :false AND (uid <> :uid OR nodeName = :unbound))`, uid) });
          return;
        }
      }
    } catch (error) {
      // A claim on a name already held, this incarnation's tombstone, or a pod already bound: kept.
      if (error instanceof ConditionFailed) return;
      throw error;
    }
  }
}
