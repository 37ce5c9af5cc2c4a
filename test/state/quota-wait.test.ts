// The quota ledger's pause between two reads while requests ahead of a create are undecided:
// paced by the store (the last read's round trip), growing by half per read, within 5-100 ms,
// with jitter of -50 % to +50 %.
import { describe, expect, it } from 'vitest';
import { waitPauseMs } from '../../lib/state/quota-ledger.js';

const middle = () => 0.5; // no jitter: the paced value itself
const lowest = () => 0;
const highest = () => 0.999_999;

describe('waitPauseMs', () => {
  it.each([
    { name: 'a fast store: the 5 ms floor', wait: 0, readMs: 1, expected: 5 },
    { name: 'a slow store: about its round trip', wait: 0, readMs: 40, expected: 40 },
    { name: 'grows by half with each read', wait: 2, readMs: 20, expected: 45 },
    { name: 'the floor grows too', wait: 3, readMs: 0, expected: 17 },
    { name: 'never past 100 ms', wait: 20, readMs: 30, expected: 100 },
    { name: 'a very slow read: 100 ms', wait: 0, readMs: 900, expected: 100 },
  ])('$name', ({ wait, readMs, expected }) => {
    expect(waitPauseMs(wait, readMs, middle)).toBe(expected);
  });

  it('spreads the waiters of one burst between half and one and a half times the paced pause', () => {
    expect(waitPauseMs(0, 40, lowest)).toBe(20);
    expect(waitPauseMs(0, 40, highest)).toBe(60);
    expect(waitPauseMs(20, 40, highest)).toBe(150);
  });
});
