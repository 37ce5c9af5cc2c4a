// The ClusterResourceQuota ledger: what each ClusterResourceQuota counts, across every namespace
// it selects. One partition per quota (`crq#<quota>`), so a single strongly consistent Query reads
// everything the quota's check needs, whichever namespace a charge is in; charges are keyed by
// `<namespace>/<name>` within it. The reservation algorithm is the ResourceQuota ledger's
// (quota-ledger.ts: queued, conditional, idempotent by request uid, reservations that expire
// unless confirmed), on its own partitions. The quota itself is a learned object
// (learned-objects.ts), as OpenShift's admission reads it from an informer.
import type { Charge, ChargedObject, ClusterQuotaLedger, LiveCharge, ReserveOutcome } from '../admission/ports.js';
import { QuotaLedgerStore, reservationSecondsFromEnv } from './quota-ledger.js';
import type { StateStore } from './store.js';
import { PARTITION } from './partitions.js';

/** The object as the quota's ledger keys it: the quota is the scope, the namespace part of the name. */
const inLedger = (quota: string, object: ChargedObject): ChargedObject => ({
  namespace: quota,
  resource: object.resource,
  name: `${object.namespace}/${object.name}`,
  ...(object.uid && { uid: object.uid }),
});

/** A charge of the quota's ledger with its object's own namespace and name again. */
function fromLedger(charge: LiveCharge): LiveCharge {
  const slash = charge.object.name.indexOf('/');
  return {
    ...charge,
    object: {
      ...charge.object,
      namespace: charge.object.name.slice(0, slash),
      name: charge.object.name.slice(slash + 1),
    },
  };
}

export class ClusterQuotaLedgerStore implements ClusterQuotaLedger {
  private readonly ledger: QuotaLedgerStore;

  constructor(store: StateStore, requestUid: string, reservationSeconds: number = reservationSecondsFromEnv()) {
    this.ledger = new QuotaLedgerStore(store, requestUid, reservationSeconds, PARTITION.clusterQuota);
  }

  reserve<Refusal>(
    quota: string,
    object: ChargedObject,
    charge: Charge,
    check: (charges: readonly LiveCharge[]) => Refusal | undefined,
  ): Promise<ReserveOutcome<Refusal>> {
    return this.ledger.reserve(inLedger(quota, object), charge, (snapshot) => check(snapshot.charges.map(fromLedger)));
  }

  confirm(quota: string, object: ChargedObject, charge: Charge): Promise<void> {
    return this.ledger.confirm(inLedger(quota, object), charge);
  }

  release(quota: string, object: ChargedObject): Promise<void> {
    return this.ledger.release(inLedger(quota, object));
  }

  /**
   * `npm run sync`: replaces the quota's charges of `resources` in the `listed` namespaces with
   * confirmed charges for `objects` (those of the listed namespaces it selects): stale
   * reservations, and charges of vanished objects or of namespaces it no longer selects, go.
   * Charges in namespaces the listing does not cover stay.
   */
  recount(
    quota: string,
    resources: ReadonlySet<string>,
    objects: readonly { object: ChargedObject; charge: Charge }[],
    listed: ReadonlySet<string>,
  ): Promise<{ written: number; removed: number }> {
    return this.ledger.recount(
      quota,
      resources,
      objects.map(({ object, charge }) => ({ object: inLedger(quota, object), charge })),
      (name) => listed.has(name.slice(0, name.indexOf('/'))),
    );
  }
}
