// The daemon's event-loop delay for `daemon status` (issue 35 item 5): a loop
// blocked for 150 ms shows as a delay of at least 100 ms in the window under way
// and in the lifetime; a window that ends keeps it as the last window and in the
// lifetime's maximum and worst-window p99; a stopped monitor counts nothing more.
import { afterEach, describe, expect, it } from 'vitest';
import { EventLoopDelay } from '../../../../src/heads/daemon/eventLoopDelay.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const block = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // A loop that runs nothing else.
  }
};

const monitors: EventLoopDelay[] = [];
afterEach(() => {
  for (const monitor of monitors.splice(0)) monitor.stop();
});

function started(windowMs?: number): EventLoopDelay {
  const monitor = new EventLoopDelay({ now: () => 1234, ...(windowMs === undefined ? {} : { windowMs }) });
  monitors.push(monitor);
  monitor.start();
  return monitor;
}

describe('EventLoopDelay', () => {
  it('a loop blocked for 150 ms is a delay of at least 100 ms, in the window under way and since the start', async () => {
    const monitor = started();
    await sleep(100);
    block(150);
    await sleep(100);
    const status = monitor.status();
    expect(status).toMatchObject({ resolutionMs: 20, windowMs: 10_000 });
    expect(status.lastWindow).toBeUndefined();
    expect(status.current.samples).toBeGreaterThan(0);
    expect(status.current.maxMs).toBeGreaterThanOrEqual(100);
    expect(status.current.p50Ms).toBeLessThan(status.current.maxMs);
    expect(status.sinceStart).toMatchObject({ windows: 1, samples: status.current.samples, maxMs: status.current.maxMs, worstWindowP99Ms: status.current.p99Ms });
  });

  it('a window that ends becomes the last window; the lifetime keeps its maximum and its p99 as the worst window p99', async () => {
    const monitor = started(400);
    await sleep(50);
    block(150);
    await expect.poll(() => monitor.status().lastWindow, { timeout: 5000, interval: 50 }).toBeDefined();
    const first = monitor.status();
    expect(first.lastWindow).toMatchObject({ endedAt: 1234 });
    expect(first.lastWindow?.index).toBeGreaterThanOrEqual(1);
    expect(first.lastWindow?.maxMs).toBeGreaterThanOrEqual(100);
    expect(first.sinceStart.maxMs).toBeGreaterThanOrEqual(100);
    expect(first.sinceStart.worstWindowP99Ms).toBeGreaterThanOrEqual(first.lastWindow?.p99Ms ?? Infinity);
    expect(first.sinceStart.samples).toBeGreaterThanOrEqual((first.lastWindow?.samples ?? 0) + first.current.samples);
    // Later windows add to the lifetime and never lower its maximum.
    await sleep(900);
    const later = monitor.status();
    expect(later.sinceStart.windows).toBeGreaterThan(first.sinceStart.windows);
    expect(later.sinceStart.samples).toBeGreaterThan(first.sinceStart.samples);
    expect(later.sinceStart.maxMs).toBeGreaterThanOrEqual(first.sinceStart.maxMs);
    expect(later.lastWindow?.index).toBeGreaterThan(first.lastWindow?.index ?? Infinity);
  });

  it('stop() ends the counting', async () => {
    const monitor = started();
    await sleep(100);
    monitor.stop();
    const samples = monitor.status().current.samples;
    await sleep(100);
    expect(monitor.status().current.samples).toBe(samples);
  });
});
