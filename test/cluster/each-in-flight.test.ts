import { describe, expect, it } from 'vitest';
import { eachInFlight } from '../../lib/cluster/sinks.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('eachInFlight: a list written several at a time', () => {
  it('writes every item once, never more than 16 at a time', async () => {
    let inFlight = 0;
    let most = 0;
    const written: number[] = [];
    await eachInFlight(
      Array.from({ length: 100 }, (_, i) => i),
      async (i) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await tick();
        written.push(i);
        inFlight--;
      },
    );
    expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(most).toBe(16);
  });

  it('throws the first failure and takes no item after it', async () => {
    const started: number[] = [];
    const failing = eachInFlight(
      Array.from({ length: 100 }, (_, i) => i),
      async (i) => {
        started.push(i);
        await tick();
        if (i === 3) throw new Error('store refused item 3');
      },
    );
    await expect(failing).rejects.toThrow('store refused item 3');
    // The 16 first taken, and at most one more by each worker that finished before the failure.
    expect(started.length).toBeLessThan(100);
    expect(Math.max(...started)).toBeLessThan(32);
  });

  it('does nothing for an empty list', async () => {
    await expect(eachInFlight([], async () => {})).resolves.toBeUndefined();
  });
});
