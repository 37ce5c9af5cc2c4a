// The one retry loop of lib/state, for ports whose next step depends on what another request
// writes meanwhile: an optimistic write that lost a race, or a wait for requests ahead in a queue.
// A short pause with full jitter between attempts, growing with the attempt, so contenders that
// collided do not collide again in lockstep.
import { StoreUnavailableError } from '../admission/ports.js';

/** What an attempt returns to be run again after a pause. */
export const AGAIN = Symbol('again');

const MAX_PAUSE_MS = 50;

/** A pause before attempt `attempt + 1`: at least `floorMs`, plus full jitter growing to 50 ms. */
export function jitteredPauseMs(attempt: number, floorMs = 0): number {
  return floorMs + Math.floor(Math.random() * Math.min(MAX_PAUSE_MS, 2 + attempt * 2));
}

/**
 * Runs `attempt` until it returns something other than AGAIN, at most `maxAttempts` times; then
 * the store is as good as unavailable for this request (HTTP 500, the failurePolicy decides).
 * `floorMs` spaces attempts that wait for others' writes rather than race them.
 */
export async function retryWithJitter<T>(
  what: string,
  maxAttempts: number,
  attempt: (n: number) => Promise<T | typeof AGAIN>,
  floorMs = 0,
): Promise<T> {
  for (let n = 0; n < maxAttempts; n++) {
    const result = await attempt(n);
    if (result !== AGAIN) return result;
    await new Promise((resolve) => setTimeout(resolve, jitteredPauseMs(n, floorMs)));
  }
  throw new StoreUnavailableError(`${what}: too contended, gave up after ${maxAttempts} attempts`);
}
