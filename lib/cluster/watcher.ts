// The cluster reader: keeps the store in step with the cluster's committed state, as upstream's
// plugins keep their informers. Per kind: a list (once, or after 410 Gone), then a watch from the
// list's resourceVersion with bookmarks, resumed from the last resourceVersion seen after the
// apiserver ends the stream, restarts or cannot be reached. Each kind's resourceVersion and the
// keys it holds are checkpointed in the store, so another process (the next scheduled run of the
// deployed function, a restarted `npm start`) resumes where this one stopped.
//
//   list ──rv──> watch(rv) ──events──> sinks (lib/state records) ── checkpoint(rv, keys)
//     ^                 │ stream ended / apiserver restarted: watch(last rv) again
//     └──── 410 Gone ───┘ (the rv is older than the apiserver keeps: list again, drop what vanished)
import { gunzipSync, gzipSync } from 'node:zlib';
import type { KubeObject } from '../admission/types.js';
import type { ApiClient, WatchEvent } from '../kube/api-client.js';
import { ApiError } from '../kube/api-client.js';
import type { ReaderMetrics } from '../metrics/index.js';
import type { StateStore } from '../state/store.js';
import { N, S, str } from '../state/store.js';
import type { ReadKind } from './kinds.js';
import { collectionPath } from './kinds.js';
import { keyOf, sinkFor } from './sinks.js';

export interface WatcherOptions {
  readonly client: ApiClient;
  readonly kinds: readonly ReadKind[];
  /** Writes pass its dryRun gate like every other write (the reader's store is never a dry run). */
  readonly store: StateStore;
  readonly metrics?: ReaderMetrics;
  /** Progress and failures, one line each; never a token or an object's content. */
  readonly log?: (line: string) => void;
  /** How long each watch request lasts at most (the apiserver ends it then; it is resumed). */
  readonly watchSeconds?: number;
  /** Pauses between failed attempts, growing to this (ms). */
  readonly maxBackoffMs?: number;
}

interface Checkpoint {
  resourceVersion: string;
  keys: Set<string>;
}

const checkpointKey = (kind: ReadKind) => ({ pk: `reader#${kind.name}`, sk: 'checkpoint' });
/** Checkpoints are written at most this often while events flow (and at every bookmark and stop). */
const CHECKPOINT_EVERY_MS = 5_000;

function errorReason(error: unknown): 'gone' | 'unavailable' | 'forbidden' | 'store' {
  if (error instanceof ApiError) {
    if (error.gone) return 'gone';
    if (error.status === 401 || error.status === 403) return 'forbidden';
    return 'unavailable';
  }
  return 'store';
}

export class ClusterWatcher {
  private readonly controller = new AbortController();
  private readonly current = new Map<string, boolean>();
  private readonly lastCurrentAt = new Map<string, number>();
  private readonly synced = new Map<string, Promise<void>>();
  private readonly markSynced = new Map<string, () => void>();
  private running: Promise<void> | undefined;

  constructor(private readonly options: WatcherOptions) {
    for (const kind of options.kinds) {
      this.synced.set(kind.name, new Promise((resolve) => this.markSynced.set(kind.name, resolve)));
      this.lastCurrentAt.set(kind.name, Date.now());
      options.metrics?.lag(kind.name, () => this.lagSeconds(kind.name));
    }
  }

  /** Seconds since `resource` was last known complete: 0 while its watch is open. */
  lagSeconds(resource: string): number {
    if (this.current.get(resource)) return 0;
    return Math.max(0, (Date.now() - (this.lastCurrentAt.get(resource) ?? Date.now())) / 1000);
  }

  /** Resolves once every kind has been listed or resumed from its checkpoint. */
  async synchronized(): Promise<void> {
    await Promise.all(this.synced.values());
  }

  /**
   * Runs until stop(), or until `untilMs` (Date.now() time) when given: each watch asks the
   * apiserver to end by then, and one that does not is cut 2 s later (a scheduled run must end
   * inside its function's timeout, checkpointed).
   */
  start(untilMs?: number): Promise<void> {
    if (this.running) return this.running;
    const deadline =
      untilMs === undefined ? undefined : setTimeout(() => this.controller.abort(), untilMs - Date.now() + 2_000);
    this.running = Promise.all(this.options.kinds.map((kind) => this.runKind(kind, untilMs))).then(() => {
      clearTimeout(deadline);
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private async loadCheckpoint(kind: ReadKind): Promise<Checkpoint> {
    const { pk, sk } = checkpointKey(kind);
    const item = await this.options.store.get(pk, sk);
    const keys = str(item, 'keys');
    return {
      resourceVersion: str(item, 'resourceVersion') ?? '',
      keys: new Set(keys ? (JSON.parse(gunzipSync(Buffer.from(keys, 'base64')).toString('utf8')) as string[]) : []),
    };
  }

  private async saveCheckpoint(kind: ReadKind, checkpoint: Checkpoint): Promise<void> {
    const { pk, sk } = checkpointKey(kind);
    const keys = gzipSync(JSON.stringify([...checkpoint.keys])).toString('base64');
    await this.options.store.put({
      Item: {
        pk: S(pk),
        sk: S(sk),
        resourceVersion: S(checkpoint.resourceVersion),
        keys: S(keys),
        savedAtMs: N(this.options.store.now()),
      },
    });
  }

  private async runKind(kind: ReadKind, untilMs: number | undefined): Promise<void> {
    const { client, store, metrics } = this.options;
    const signal = this.controller.signal;
    const sink = sinkFor(kind, store);
    const path = collectionPath(kind);
    const watchSeconds = this.options.watchSeconds ?? 300;
    let backoffMs = 250;
    let checkpoint: Checkpoint | undefined;
    const remainingSeconds = () =>
      untilMs === undefined ? watchSeconds : Math.min(watchSeconds, Math.floor((untilMs - Date.now()) / 1000));
    while (!signal.aborted && remainingSeconds() > 0) {
      try {
        checkpoint ??= await this.loadCheckpoint(kind);
        if (checkpoint.resourceVersion === '') {
          const listed = await client.list(path, { metadataOnly: kind.metadataOnly });
          metrics?.relist(kind.name);
          await sink.list(listed.items, checkpoint.keys);
          checkpoint = {
            resourceVersion: listed.resourceVersion,
            keys: new Set(listed.items.map((o) => keyOf(kind, o))),
          };
          await this.saveCheckpoint(kind, checkpoint);
          this.log(`reader: ${kind.name}: ${listed.items.length} listed at resourceVersion ${listed.resourceVersion}`);
        }
        this.lastCurrentAt.set(kind.name, Date.now());
        this.markSynced.get(kind.name)?.();
        const held = checkpoint;
        let savedAt = Date.now();
        this.current.set(kind.name, true);
        try {
          await client.watch(
            path,
            {
              resourceVersion: held.resourceVersion,
              metadataOnly: kind.metadataOnly,
              timeoutSeconds: remainingSeconds(),
              signal,
            },
            async (event: WatchEvent) => {
              metrics?.event(kind.name, event.type);
              if (event.type === 'BOOKMARK') {
                held.resourceVersion = event.resourceVersion;
                await this.saveCheckpoint(kind, held);
                savedAt = Date.now();
                return;
              }
              const object: KubeObject = event.object;
              await sink.event(event.type, object);
              const key = keyOf(kind, object);
              if (event.type === 'DELETED') held.keys.delete(key);
              else held.keys.add(key);
              held.resourceVersion = String(object.metadata?.resourceVersion ?? held.resourceVersion);
              if (Date.now() - savedAt >= CHECKPOINT_EVERY_MS) {
                await this.saveCheckpoint(kind, held);
                savedAt = Date.now();
              }
            },
          );
        } finally {
          this.current.set(kind.name, false);
          this.lastCurrentAt.set(kind.name, Date.now());
        }
        await this.saveCheckpoint(kind, held);
        backoffMs = 250;
      } catch (error) {
        if (signal.aborted) break;
        const reason = errorReason(error);
        metrics?.error(kind.name, reason);
        if (reason === 'gone' && checkpoint) {
          // The resourceVersion is older than the apiserver keeps: list again (keeping what was held,
          // so the list can tell what vanished meanwhile).
          this.log(`reader: ${kind.name}: resourceVersion ${checkpoint.resourceVersion} expired (410): listing again`);
          checkpoint = { resourceVersion: '', keys: checkpoint.keys };
          continue;
        }
        this.log(`reader: ${kind.name}: ${reason}: ${(error as Error).message}`);
        await pause(backoffMs, signal);
        backoffMs = Math.min(backoffMs * 2, this.options.maxBackoffMs ?? 10_000);
      }
    }
    if (checkpoint && checkpoint.resourceVersion !== '') await this.saveCheckpoint(kind, checkpoint).catch(() => {});
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
