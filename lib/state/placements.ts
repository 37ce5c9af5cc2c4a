// Learned placements: which node each pod is bound to, and each Node's UID, for the lookups
// NodeRestriction makes in the apiserver's informers (`needs: ['placements']`). The handler
// records, once per request, in lib; plugins only read.
//
// What a request teaches, strongest first:
//   - the stored object (`oldObject` of any pod or Node UPDATE, and of a refused DELETE) is the
//     apiserver's truth at that moment: always recorded, as confirmed;
//   - an admitted DELETE leaves a tombstone: the object reads as unknown;
//   - an admitted CREATE is a claim the apiserver may still refuse (AlreadyExists above all: every
//     kubelet restart re-creates its Node): recorded unconfirmed, and never over a confirmed
//     record of a live object, so a failed create cannot replace what is known;
//   - an admitted Binding (the scheduler's pods/binding) sets the node of a known pod that is still
//     unbound, as the apiserver itself only binds unbound pods.
// Out-of-order writes from concurrent Lambda instances can leave an older observation last; the
// next status update of the same pod or Node corrects it (README, NodeRestriction).
import type { PluginMetadata, WebhookRule } from '../admission/plugin.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { KubeObject } from '../admission/types.js';
import type { LearnedNode, LearnedPlacements, LearnedPod } from './ports.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, N, S, str } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';

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

const isKind = (object: KubeObject | null, kind: string): object is KubeObject => object !== null && typeof object === 'object' && (object.kind === undefined || object.kind === kind);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const nameOf = (request: AdmissionRequest, object: KubeObject | null) => request.name || text(object?.metadata?.name);
const nodeNameOf = (pod: KubeObject) => text((pod.spec as { nodeName?: unknown } | undefined)?.nodeName);

type Target = { kind: 'pod'; namespace: string; name: string } | { kind: 'node'; name: string };

/** What one pod or Node write tells, or undefined when it tells nothing. */
export type PlacementObservation =
  | { kind: 'stored' | 'created'; target: Target; uid: string; nodeName: string }
  | { kind: 'deleted'; target: Target }
  | { kind: 'bound'; namespace: string; name: string; uid: string; nodeName: string };

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
    if (!admitted || request.operation !== 'CREATE' || !isKind(binding, 'Binding')) return undefined;
    const nodeName = text((binding as { target?: { name?: unknown } }).target?.name);
    const name = nameOf(request, binding);
    if (nodeName === '' || name === '' || request.namespace === '') return undefined;
    return { kind: 'bound', namespace: request.namespace, name, uid: text(binding.metadata?.uid), nodeName };
  }
  // Other subresources (eviction, ephemeralcontainers, resize...) teach through their oldObject.
  const old = request.oldObject;
  if (request.operation === 'DELETE' && request.subResource === '' && admitted) {
    const at = target(old);
    return at && { kind: 'deleted', target: at };
  }
  if ((request.operation === 'UPDATE' || request.operation === 'DELETE') && isKind(old, kind)) {
    const at = target(old);
    return at && { kind: 'stored', target: at, ...facts(old) };
  }
  if (request.operation === 'CREATE' && request.subResource === '' && admitted && isKind(request.object, kind)) {
    const at = target(request.object);
    return at && { kind: 'created', target: at, ...facts(request.object) };
  }
  return undefined;
}

const keyOf = (target: Target) => (target.kind === 'pod' ? podKey(target.namespace, target.name) : nodeKey(target.name));

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
    try {
      switch (observation.kind) {
        case 'stored':
        case 'created': {
          const { target, uid, nodeName } = observation;
          const confirmed = observation.kind === 'stored';
          await this.store.put({
            Item: { ...keyOf(target), uid: S(uid), ...(target.kind === 'pod' && { nodeName: S(nodeName) }), confirmed: BOOL(confirmed), gone: BOOL(false), ...when },
            // A claim never replaces a confirmed record of a live object.
            ...(!confirmed && {
              ConditionExpression: 'attribute_not_exists(pk) OR confirmed = :false OR gone = :true',
              ExpressionAttributeValues: { ':false': BOOL(false), ':true': BOOL(true) },
            }),
          });
          return;
        }
        case 'deleted':
          // Tombstones expire (TTL), so churning pods do not grow the table without bound; an
          // expired tombstone reads as unknown, which is what it says.
          await this.store.put({ Item: { ...keyOf(observation.target), confirmed: BOOL(true), gone: BOOL(true), ...when, [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + TOMBSTONE_SECONDS) } });
          return;
        case 'bound': {
          const { namespace, name, uid, nodeName } = observation;
          await this.store.update({
            Key: podKey(namespace, name),
            UpdateExpression: 'SET nodeName = :node, observedAt = :at, observedAtMs = :ms' + (uid === '' ? '' : ', uid = :uid'),
            ConditionExpression: 'attribute_exists(pk) AND gone = :false AND nodeName = :unbound' + (uid === '' ? '' : ' AND (uid = :uid OR uid = :unbound)'),
            ExpressionAttributeValues: { ':node': S(nodeName), ':at': when.observedAt, ':ms': when.observedAtMs, ':false': BOOL(false), ':unbound': S(''), ...(uid !== '' && { ':uid': S(uid) }) },
          });
          return;
        }
      }
    } catch (error) {
      // A claim over a confirmed record, or a Binding of a pod not known to be unbound: kept as is.
      if (error instanceof ConditionFailed) return;
      throw error;
    }
  }
}
