// Many deadlines, one timer. Thousands of pending approvals each expire at their
// own time; instead of a timer per approval, a min-heap keeps them ordered and a
// single timer waits for the earliest (SPEC §14: 10,000 pending within budget).
// A deadline is given in wall time (what the record says) and kept in monotonic
// time from the moment it is set: setting the wall clock back does not lengthen
// a wait, nor does setting it forward shorten one (the decision itself still
// refuses what its recorded wall time says has expired).
import type { Clock } from '../core/base/clock.js';
import type { Timers } from '../core/base/timers.js';

export class Deadlines {
  /**
   * A binary min-heap of [deadline, id], kept as two parallel arrays (the
   * deadlines as plain doubles, no pair object per entry). Entries whose id was
   * dropped or re-set are skipped lazily, and the heap is rebuilt once they
   * outnumber the live ones, so resolved approvals do not pile up in it.
   */
  /** Monotonic deadlines. */
  private readonly times: number[] = [];
  private readonly ids: string[] = [];
  private readonly current = new Map<string, number>();
  private timer: unknown;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly timers: Timers,
    private readonly clock: Pick<Clock, 'now' | 'monotonic'>,
    private readonly onExpire: (id: string) => void,
  ) {}

  get size(): number {
    return this.current.size;
  }

  /** Entries in the heap, stale ones included (for tests). */
  get heapSize(): number {
    return this.ids.length;
  }

  /** Expires `id` at wall time `at`, measured from now on the monotonic clock. */
  set(id: string, wallAt: number): void {
    const at = this.clock.monotonic() + (wallAt - this.clock.now());
    this.current.set(id, at);
    this.push(at, id);
    if (this.ids.length > 2 * this.current.size + 64) this.rebuild();
    if (at < this.timerAt) this.arm();
  }

  delete(id: string): void {
    this.current.delete(id);
    if (this.current.size === 0) this.clear();
    else if (this.ids.length > 2 * this.current.size + 64) this.rebuild();
  }

  clear(): void {
    this.current.clear();
    this.times.length = 0;
    this.ids.length = 0;
    this.disarm();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.monotonic();
    while (this.ids.length > 0 && (this.times[0] as number) <= now) {
      const at = this.times[0] as number;
      const id = this.ids[0] as string;
      this.pop();
      if (this.current.get(id) !== at) continue;
      this.current.delete(id);
      this.onExpire(id);
    }
    this.arm();
  }

  private arm(): void {
    while (this.ids.length > 0 && this.current.get(this.ids[0] as string) !== this.times[0]) this.pop();
    if (this.ids.length === 0) return this.disarm();
    const next = this.times[0] as number;
    if (this.timer !== undefined && this.timerAt === next) return;
    this.disarm();
    this.timerAt = next;
    this.timer = this.timers.setTimeout(() => this.fire(), Math.max(0, next - this.clock.monotonic()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  /** Only the live entries, heap-ordered again. */
  private rebuild(): void {
    this.times.length = 0;
    this.ids.length = 0;
    for (const [id, at] of this.current) this.push(at, id);
  }

  private push(at: number, id: string): void {
    const { times, ids } = this;
    let i = ids.length;
    times.push(at);
    ids.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((times[parent] as number) <= at) break;
      times[i] = times[parent] as number;
      ids[i] = ids[parent] as string;
      i = parent;
    }
    times[i] = at;
    ids[i] = id;
  }

  private pop(): void {
    const { times, ids } = this;
    const lastAt = times.pop();
    const lastId = ids.pop();
    if (lastAt === undefined || lastId === undefined || ids.length === 0) return;
    const length = ids.length;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && (times[right] as number) < (times[left] as number) ? right : left;
      if ((times[child] as number) >= lastAt) break;
      times[i] = times[child] as number;
      ids[i] = ids[child] as string;
      i = child;
    }
    times[i] = lastAt;
    ids[i] = lastId;
  }
}
