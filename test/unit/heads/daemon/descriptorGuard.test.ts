// The daemon's reserve below its limit of open files (issue 35 item 4), with
// the limit, the count and the clock injected: which connection it refuses,
// when it counts again, and what the refusal says.
import { describe, expect, it } from 'vitest';
import { DescriptorGuard, descriptorRefusal, descriptorReserve, readOpenFileLimit, countOpenDescriptors } from '../../../../src/heads/daemon/descriptorGuard.js';

function guardWith(state: { limit: number | undefined; open: number | undefined; now: number }): { guard: DescriptorGuard; counts: () => number } {
  let counts = 0;
  const guard = new DescriptorGuard({
    readLimit: () => state.limit,
    countOpen: () => {
      counts += 1;
      return state.open;
    },
    now: () => state.now,
  });
  return { guard, counts: () => counts };
}

describe('descriptorGuard', () => {
  it('keeps an eighth of the limit in reserve, at least 16 and at most 64', () => {
    expect(descriptorReserve(64)).toBe(16);
    expect(descriptorReserve(256)).toBe(32);
    expect(descriptorReserve(1024)).toBe(64);
    expect(descriptorReserve(1_048_576)).toBe(64);
  });

  it('admits a connection while the open descriptors stay out of the reserve, and refuses the one that would use it', () => {
    const state = { limit: 64, open: 48, now: 0 };
    const { guard } = guardWith(state);
    expect(guard.admit()).toBeUndefined();
    state.open = 49;
    state.now = 1000;
    expect(guard.admit()).toEqual({ open: 49, limit: 64, reserve: 16 });
  });

  it('near the reserve it counts at every connection; far from it, once a second', () => {
    const far = { limit: 1024, open: 30, now: 0 };
    const { guard, counts } = guardWith(far);
    for (let i = 0; i < 100; i += 1) expect(guard.admit()).toBeUndefined();
    expect(counts()).toBe(1);
    far.now = 1000;
    guard.admit();
    expect(counts()).toBe(2);
    const near = { limit: 64, open: 40, now: 0 };
    const second = guardWith(near);
    for (let i = 0; i < 5; i += 1) second.guard.admit();
    expect(second.counts()).toBe(5);
  });

  it('counts again before the second is up when the connections accepted since could have reached the reserve', () => {
    const state = { limit: 256, open: 100, now: 0 };
    const { guard, counts } = guardWith(state);
    guard.admit();
    // 256 - 2 × 32 = 192: 91 more connections after a count of 100 may reach it.
    for (let i = 0; i < 91; i += 1) guard.admit();
    expect(counts()).toBe(1);
    state.open = 230;
    expect(guard.admit()).toEqual({ open: 230, limit: 256, reserve: 32 });
    expect(counts()).toBe(2);
  });

  it('reads the limit again after a second (prlimit on a running daemon), and keeps the last one when a read fails', () => {
    const state: { limit: number | undefined; open: number; now: number } = { limit: 1024, open: 60, now: 0 };
    const { guard } = guardWith(state);
    expect(guard.admit()).toBeUndefined();
    state.limit = 64;
    state.now = 1000;
    expect(guard.admit()).toMatchObject({ limit: 64 });
    state.limit = undefined;
    state.now = 2000;
    expect(guard.admit()).toMatchObject({ limit: 64 });
  });

  it('a count that cannot be made (the listing itself got EMFILE) counts as the limit; no known limit admits everything', () => {
    expect(guardWith({ limit: 64, open: undefined, now: 0 }).guard.admit()).toEqual({ open: 64, limit: 64, reserve: 16 });
    expect(guardWith({ limit: undefined, open: 10_000, now: 0 }).guard.admit()).toBeUndefined();
  });

  it('the refusal names the numbers, EMFILE and the fix, typed unavailable with reason descriptors', () => {
    const error = descriptorRefusal({ open: 49, limit: 64, reserve: 16 });
    expect(error.type).toBe('unavailable');
    expect(error.details).toEqual({ reason: 'descriptors', open: 49, limit: 64, reserve: 16 });
    expect(error.message).toMatch(/49 of 64 are open \(ulimit -n\)/);
    expect(error.message).toMatch(/EMFILE/);
    expect(error.message).toMatch(/ulimit -n 4096.*LimitNOFILE=4096/);
  });

  it.skipIf(process.platform !== 'linux')('on Linux reads this process limit and count from /proc', () => {
    const limit = readOpenFileLimit();
    const open = countOpenDescriptors();
    expect(limit).toBeGreaterThan(0);
    expect(open).toBeGreaterThan(2);
    expect(open).toBeLessThan(limit as number);
  });
});
