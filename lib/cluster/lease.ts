// One watcher per cluster: the deployed reader runs on a schedule, and two runs may overlap (a run
// that outlives its minute, a retried invocation). Each run first takes a lease in the state table
// with one conditional write, in the manner of Powertools' idempotency lock: the put succeeds only
// if no lease exists, the last one has lapsed, or this holder already has it. A run that cannot
// take it exits at once; a run that dies without releasing blocks the next ones only until its
// lease lapses.
//
//   run A (t=0)                               run B (t=60, A overran)            run C (t=120)
//   put IF absent OR until<now OR holder=A
//     -> ok, until = t+90 s
//   watch ~50 s ... (overruns)                put IF absent OR until<now ...
//                                               -> ConditionFailed: A holds it
//                                               -> exit, nothing read
//   delete IF holder=A (t=100)                                                   put IF ... -> ok
//   (A crashed instead: its lease lapses at t=90; C takes it)
import type { StateStore } from '../state/store.js';
import { ConditionFailed, N, S, str } from '../state/store.js';
import { TTL_ATTRIBUTE } from '../state/table.js';

const LEASE_KEY = { pk: S('lease#cluster-reader'), sk: S('lease') };

export class ReaderLease {
  constructor(
    private readonly store: StateStore,
    /** Who holds it: the invocation's request id. */
    readonly holder: string,
    /** How long the lease lasts unless released: longer than a run, shorter than a few schedules. */
    private readonly durationMs: number,
  ) {}

  /** True when this holder has the lease now; false when another run holds it. */
  async acquire(): Promise<boolean> {
    const now = this.store.now();
    try {
      await this.store.put({
        Item: {
          ...LEASE_KEY,
          holder: S(this.holder),
          untilMs: N(now + this.durationMs),
          [TTL_ATTRIBUTE]: N(Math.ceil((now + this.durationMs) / 1000) + 3_600),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR untilMs < :now OR holder = :holder',
        ExpressionAttributeValues: { ':now': N(now), ':holder': S(this.holder) },
      });
      return true;
    } catch (error) {
      if (error instanceof ConditionFailed) return false;
      throw error;
    }
  }

  /** Gives the lease up, if this holder still has it (a lapsed lease may be another's now). */
  async release(): Promise<void> {
    try {
      await this.store.delete({
        Key: LEASE_KEY,
        ConditionExpression: 'holder = :holder',
        ExpressionAttributeValues: { ':holder': S(this.holder) },
      });
    } catch (error) {
      if (!(error instanceof ConditionFailed)) throw error;
    }
  }

  /** The current holder, if any (tests, operators). */
  async heldBy(): Promise<string | undefined> {
    const item = await this.store.get(LEASE_KEY.pk.S, LEASE_KEY.sk.S);
    return str(item, 'holder');
  }
}
