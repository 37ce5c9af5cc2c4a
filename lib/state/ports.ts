// What plugins may know about the cluster beyond the request, and the only way they record side
// effects. Plugins see these interfaces; lib/state implements them over DynamoDB, and the dryRun
// gate lives behind them (a dry run reads but never writes).

/** A namespace as last seen by one of our Namespace webhooks or loaded by `npm run sync`. */
export interface LearnedNamespace {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** Terminating once a DELETE was seen or status.phase said so. */
  readonly phase: 'Active' | 'Terminating';
  /** ISO time of the observation. */
  readonly observedAt: string;
}

export interface LearnedNamespaces {
  /** undefined when the namespace was never seen: each plugin documents what it then does. */
  get(name: string): Promise<LearnedNamespace | undefined>;
}

/** The state a plugin's phase functions receive, scoped to one request. */
export interface PluginState {
  readonly learnedNamespaces: LearnedNamespaces;
}

/** Thrown when the store cannot be reached or refuses: answered as HTTP 5xx, never an allow. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/** The state of a deployment without a store: every read fails loudly (HTTP 500). */
export const NO_STATE: PluginState = {
  learnedNamespaces: {
    get: async () => {
      throw new StoreUnavailableError('no store is configured for this plugin (DYNAMODB_ENDPOINT / STATE_TABLE)');
    },
  },
};
