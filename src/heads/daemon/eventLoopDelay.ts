// How late the daemon's event loop runs a timer, for `daemon status` (issue 35:
// the soak's target is an event-loop delay p99 ≤ 50 ms). Node's
// monitorEventLoopDelay arms a timer every RESOLUTION_MS and records how long each
// took to fire; a sample is the interval plus the lateness, so the interval is
// taken off again. The samples are kept per window (10 s): the window under
// way, the last whole one, and over the lifetime the samples, the maximum and the
// worst window's p99. Node's histogram of this kind can be neither merged nor
// copied, so the lifetime's p99 is bounded by the worst window's instead: when no
// window has more than 1 % of its samples above a value, neither has the whole.
// The timer is unref'd (it keeps no process alive); an idle daemon spends about
// 3 ms of CPU a second on it (a timer of our own in JavaScript cost about 7 ms).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const RESOLUTION_MS = 20;
const WINDOW_MS = 10_000;

export interface EventLoopDelayOptions {
  /** Epoch ms, for `lastWindow.endedAt`. */
  now?: () => number;
  /** Length of a window (default 10 s). */
  windowMs?: number;
}
const NS_PER_MS = 1_000_000;

export interface EventLoopDelaySummary {
  /** Timer firings measured. */
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface EventLoopDelayStatus {
  resolutionMs: number;
  windowMs: number;
  /** The window under way. */
  current: EventLoopDelaySummary;
  /** The last whole window: its number (1 for the first since the start) and when it ended (epoch ms); absent before the first one ends. */
  lastWindow?: EventLoopDelaySummary & { index: number; endedAt: number };
  /** Since the start: every window's samples, the largest delay and the worst window's p99 (≥ the lifetime's p99). */
  sinceStart: { windows: number; samples: number; maxMs: number; worstWindowP99Ms: number };
}

/** Lateness in ms (0.01 ms steps) of a sample, which is the interval plus the lateness. */
const lateMs = (sampleNs: number): number => Math.max(0, Math.round((sampleNs / NS_PER_MS - RESOLUTION_MS) * 100) / 100);

function summarize(histogram: IntervalHistogram): EventLoopDelaySummary {
  if (histogram.count === 0) return { samples: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 };
  return { samples: histogram.count, p50Ms: lateMs(histogram.percentile(50)), p99Ms: lateMs(histogram.percentile(99)), maxMs: lateMs(histogram.max) };
}

export class EventLoopDelay {
  private readonly monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private lastWindow: (EventLoopDelaySummary & { index: number; endedAt: number }) | undefined;
  private rolled = 0;
  private readonly lifetime = { windows: 0, samples: 0, maxMs: 0, worstWindowP99Ms: 0 };
  private timer: ReturnType<typeof setInterval> | undefined;

  private readonly now: () => number;
  private readonly windowMs: number;

  constructor(options: EventLoopDelayOptions = {}) {
    this.now = options.now ?? Date.now;
    this.windowMs = options.windowMs ?? WINDOW_MS;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.monitor.enable();
    this.timer = setInterval(() => this.roll(), this.windowMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.monitor.disable();
  }

  status(): EventLoopDelayStatus {
    const current = summarize(this.monitor);
    return {
      resolutionMs: RESOLUTION_MS,
      windowMs: this.windowMs,
      current,
      ...(this.lastWindow === undefined ? {} : { lastWindow: this.lastWindow }),
      sinceStart: this.withWindow(current),
    };
  }

  /** The lifetime figures with a window counted in (the current one, for status; the ending one, at a roll). */
  private withWindow(window: EventLoopDelaySummary): EventLoopDelayStatus['sinceStart'] {
    const { windows, samples, maxMs, worstWindowP99Ms } = this.lifetime;
    if (window.samples === 0) return { windows, samples, maxMs, worstWindowP99Ms };
    return { windows: windows + 1, samples: samples + window.samples, maxMs: Math.max(maxMs, window.maxMs), worstWindowP99Ms: Math.max(worstWindowP99Ms, window.p99Ms) };
  }

  private roll(): void {
    const window = summarize(this.monitor);
    this.monitor.reset();
    Object.assign(this.lifetime, this.withWindow(window));
    this.rolled += 1;
    this.lastWindow = { ...window, index: this.rolled, endedAt: this.now() };
  }
}
