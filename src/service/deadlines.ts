// Many deadlines, one timer. Thousands of pending approvals each expire at their
// own time; instead of a timer per approval, a min-heap keeps them ordered and a
// single timer waits for the earliest (SPEC §14: 10,000 pending within budget).
import type { Timers } from '../core/base/timers.js';

export class Deadlines {
  /** [deadline, id] ordered by deadline; entries whose id was dropped or re-set are skipped lazily. */
  private readonly heap: [number, string][] = [];
  private readonly current = new Map<string, number>();
  private timer: unknown;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly timers: Timers,
    private readonly now: () => number,
    private readonly onExpire: (id: string) => void,
  ) {}

  get size(): number {
    return this.current.size;
  }

  set(id: string, at: number): void {
    this.current.set(id, at);
    this.push([at, id]);
    if (at < this.timerAt) this.arm();
  }

  delete(id: string): void {
    this.current.delete(id);
    if (this.current.size === 0) this.disarm();
  }

  clear(): void {
    this.current.clear();
    this.heap.length = 0;
    this.disarm();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    for (let top = this.heap[0]; top !== undefined && top[0] <= now; top = this.heap[0]) {
      this.pop();
      const [at, id] = top;
      if (this.current.get(id) !== at) continue;
      this.current.delete(id);
      this.onExpire(id);
    }
    this.arm();
  }

  private arm(): void {
    while (this.heap[0] !== undefined && this.current.get(this.heap[0][1]) !== this.heap[0][0]) this.pop();
    const next = this.heap[0];
    if (next === undefined) return this.disarm();
    if (this.timer !== undefined && this.timerAt === next[0]) return;
    this.disarm();
    this.timerAt = next[0];
    this.timer = this.timers.setTimeout(() => this.fire(), Math.max(0, next[0] - this.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  private push(entry: [number, string]): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as [number, string])[0] <= entry[0]) break;
      heap[i] = heap[parent] as [number, string];
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right] as [number, string])[0] < (heap[left] as [number, string])[0] ? right : left;
      if ((heap[child] as [number, string])[0] >= last[0]) break;
      heap[i] = heap[child] as [number, string];
      i = child;
    }
    heap[i] = last;
  }
}
