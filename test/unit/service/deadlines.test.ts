// One timer for many approval deadlines (the approval service's expiry).
import { describe, expect, it } from 'vitest';
import { Deadlines } from '../../../src/service/deadlines.js';

function fakeTimers() {
  let now = 0;
  let seq = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    live: () => pending.size,
    timers: {
      setTimeout: (fn: () => void, ms: number) => {
        seq += 1;
        pending.set(seq, { at: now + ms, fn });
        return seq;
      },
      clearTimeout: (handle: unknown) => void pending.delete(handle as number),
    },
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const next = [...pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (next === undefined) break;
        pending.delete(next[0]);
        now = next[1].at;
        next[1].fn();
      }
      now = until;
    },
  };
}

describe('Deadlines', () => {
  it('expires each id at its own time, in order, with at most one live timer', () => {
    const clock = fakeTimers();
    const expired: string[] = [];
    const deadlines = new Deadlines(clock.timers, { now: clock.now, monotonic: clock.now }, (id) => expired.push(`${id}@${clock.now()}`));
    deadlines.set('c', 300);
    deadlines.set('a', 100);
    deadlines.set('b', 200);
    deadlines.set('d', 200);
    expect(clock.live()).toBe(1);
    clock.advance(150);
    expect(expired).toEqual(['a@100']);
    clock.advance(1000);
    expect(expired.sort()).toEqual(['a@100', 'b@200', 'c@300', 'd@200']);
    expect(clock.live()).toBe(0);
  });

  it('a deleted or re-set id does not fire at its old time', () => {
    const clock = fakeTimers();
    const expired: string[] = [];
    const deadlines = new Deadlines(clock.timers, { now: clock.now, monotonic: clock.now }, (id) => expired.push(`${id}@${clock.now()}`));
    deadlines.set('a', 100);
    deadlines.set('b', 100);
    deadlines.delete('a');
    deadlines.set('b', 500);
    clock.advance(400);
    expect(expired).toEqual([]);
    clock.advance(200);
    expect(expired).toEqual(['b@500']);
    deadlines.set('x', 700);
    deadlines.clear();
    clock.advance(1000);
    expect(expired).toEqual(['b@500']);
    expect(deadlines.size).toBe(0);
  });

  it('handles 10,000 deadlines with one timer', () => {
    const clock = fakeTimers();
    let count = 0;
    const deadlines = new Deadlines(clock.timers, { now: clock.now, monotonic: clock.now }, () => (count += 1));
    for (let i = 0; i < 10_000; i += 1) deadlines.set(`id${i}`, 1000 + ((i * 7919) % 5000));
    expect(clock.live()).toBe(1);
    clock.advance(10_000);
    expect(count).toBe(10_000);
  });

  it('approvals resolved long before their deadline do not pile up in the heap, and the rest still expire in order', () => {
    const clock = fakeTimers();
    const expired: string[] = [];
    const deadlines = new Deadlines(clock.timers, { now: clock.now, monotonic: clock.now }, (id) => expired.push(id));
    for (let i = 0; i < 5000; i += 1) {
      deadlines.set(`gone${i}`, 1_000_000 + i);
      if (i % 10 === 0) deadlines.set(`kept${i}`, 2_000_000 - i);
      deadlines.delete(`gone${i}`);
    }
    expect(deadlines.size).toBe(500);
    expect(deadlines.heapSize).toBeLessThanOrEqual(2 * 500 + 64);
    clock.advance(3_000_000);
    expect(expired).toEqual(Array.from({ length: 500 }, (_, k) => `kept${(499 - k) * 10}`));
    expect(clock.live()).toBe(0);
  });

  it('keeps each deadline on the monotonic clock: the wall clock set back 1 h does not lengthen a wait, nor set forward shorten it', () => {
    const time = fakeTimers();
    let wall = 1_000_000;
    const expired: string[] = [];
    const deadlines = new Deadlines(time.timers, { now: () => wall + time.now(), monotonic: time.now }, (id) => expired.push(`${id}@${time.now()}`));
    deadlines.set('back', wall + 60_000);
    deadlines.set('forward', wall + 120_000);
    wall -= 3_600_000;
    time.advance(60_000);
    expect(expired).toEqual(['back@60000']);
    wall += 7_200_000;
    time.advance(59_999);
    expect(expired).toEqual(['back@60000']);
    time.advance(1);
    expect(expired).toEqual(['back@60000', 'forward@120000']);
  });
});

