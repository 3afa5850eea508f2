// Time is injected everywhere (R-ARCH-2): wall time for records, monotonic time for grants.

export interface Clock {
  /** Wall-clock milliseconds since the epoch, for records and deadlines shown to people. */
  now(): number;
  /** Monotonic milliseconds, for lifetimes that must not move with the wall clock. */
  monotonic(): number;
}

/** A clock a test advances by hand. */
export class FakeClock implements Clock {
  private wall: number;
  private mono = 0;

  constructor(startWallMs = Date.UTC(2026, 0, 1)) {
    this.wall = startWallMs;
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.mono;
  }

  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }

  /** Sets the wall clock by `ms` (back when negative), as a person or NTP would; monotonic time does not move. */
  jumpWall(ms: number): void {
    this.wall += ms;
  }
}
