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
// land them out of order; the next status update of a live pod or Node corrects it
// (docs/design/state.md).
import type { PlacementObservation, PlacementTarget as Target } from '../admission/learning.js';
import { placementObservation } from '../admission/learning.js';
import type { AdmissionRequest } from '../admission/request.js';
import type { LearnedNode, LearnedPlacements, LearnedPod } from '../admission/ports.js';
import type { Item, StateStore } from './store.js';
import { ConditionFailed, N, S, str } from './store.js';
import { TTL_ATTRIBUTE } from './table.js';
import { PARTITION } from './partitions.js';

const POD_SK = 'placement';
/** How long a tombstone is kept: a day of deletions. */
const TOMBSTONE_SECONDS = 24 * 60 * 60;
const NODE_SK = 'node';
const podKey = (namespace: string, name: string) => ({ pk: S(`${PARTITION.pod}${namespace}/${name}`), sk: S(POD_SK) });
const nodeKey = (name: string) => ({ pk: S(`${PARTITION.node}${name}`), sk: S(NODE_SK) });
const BOOL = (value: boolean) => ({ BOOL: value });

const keyOf = (target: Target) =>
  target.kind === 'pod' ? podKey(target.namespace, target.name) : nodeKey(target.name);

/** No live record, or a tombstone of another incarnation (or an expired one). */
const FREE = 'attribute_not_exists(pk) OR (gone = :true AND (uid <> :uid OR expiresAt <= :now))';
/** A live record, of any incarnation, or FREE: everything but this incarnation's tombstone. */
const NOT_THIS_TOMBSTONE = 'attribute_not_exists(pk) OR gone = :false OR uid <> :uid OR expiresAt <= :now';

export class LearnedPlacementStore implements LearnedPlacements {
  constructor(private readonly store: StateStore) {}

  private async live(key: { pk: { S: string }; sk: { S: string } }): Promise<Item | undefined> {
    const item = await this.store.get(key.pk.S, key.sk.S);
    return item === undefined || item.gone?.BOOL === true ? undefined : item;
  }

  async pod(namespace: string, name: string): Promise<LearnedPod | undefined> {
    const item = await this.live(podKey(namespace, name));
    return (
      item && {
        namespace,
        name,
        uid: str(item, 'uid') ?? '',
        nodeName: str(item, 'nodeName') ?? '',
        observedAt: str(item, 'observedAt') ?? '',
      }
    );
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
      const all = {
        ':true': BOOL(true),
        ':false': BOOL(false),
        ':uid': S(uid),
        ':now': N(this.store.nowSeconds()),
        ':unbound': S(''),
      };
      return {
        ConditionExpression: expression,
        ExpressionAttributeValues: Object.fromEntries(
          Object.entries(all).filter(([name]) => expression.includes(name)),
        ),
      };
    };
    const live = (target: Target, uid: string, nodeName: string) => ({
      ...keyOf(target),
      uid: S(uid),
      ...(target.kind === 'pod' && { nodeName: S(nodeName) }),
      gone: BOOL(false),
      ...when,
    });
    try {
      switch (observation.kind) {
        case 'stored':
        case 'created': {
          const { target, uid, nodeName } = observation;
          await this.store.put({
            Item: live(target, uid, nodeName),
            ...condition(observation.kind === 'stored' ? NOT_THIS_TOMBSTONE : FREE, uid),
          });
          return;
        }
        case 'deleted': {
          // Tombstones expire (TTL), so churning pods do not grow the table without bound.
          const { target, uid } = observation;
          await this.store.put({
            Item: {
              ...keyOf(target),
              uid: S(uid),
              gone: BOOL(true),
              ...when,
              [TTL_ATTRIBUTE]: N(this.store.nowSeconds() + TOMBSTONE_SECONDS),
            },
          });
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
              ExpressionAttributeValues: {
                ':node': S(nodeName),
                ':at': when.observedAt,
                ':ms': when.observedAtMs,
                ':false': BOOL(false),
                ':unbound': S(''),
              },
            });
            return;
          }
          // The apiserver binds only the incarnation named, and only once.
          await this.store.put({
            Item: live(target, uid, nodeName),
            ...condition(`${FREE} OR (gone = :false AND (uid <> :uid OR nodeName = :unbound))`, uid),
          });
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
