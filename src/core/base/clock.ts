// Time is injected everywhere (R-ARCH-2): wall time for records, monotonic time for grants.

export interface Clock {
  /** Wall-clock milliseconds since the epoch, for records and deadlines shown to people. */
  now(): number;
  /**
   * Monotonic milliseconds, for lifetimes that must not move with the wall clock.
   * Only differences count, unless `bootId` names a boot: then it is the
   * machine's own reading (CLOCK_MONOTONIC), the same in every process of that
   * boot, and a value kept by one process is compared by the next.
   */
  monotonic(): number;
  /**
   * The boot `monotonic()` counts from (Linux `/proc/sys/kernel/random/boot_id`),
   * or undefined when its readings mean nothing outside this process. After a
   * reboot the monotonic clock starts again and the boot id differs.
   */
  bootId?(): string | undefined;
}

/**
 * A clock a test advances by hand. Its monotonic reading stands for the
 * machine's (it does not start again when a "daemon" holding it is reopened),
 * so it may be kept as an absolute value; `reboot` starts it again in a new boot.
 */
export class FakeClock implements Clock {
  private wall: number;
  private mono = 0;
  private boots = 1;

  constructor(startWallMs = Date.UTC(2026, 0, 1)) {
    this.wall = startWallMs;
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.mono;
  }

  bootId(): string {
    return `fake-boot-${this.boots}`;
  }

  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }

  /** Sets the wall clock by `ms` (back when negative), as a person or NTP would; monotonic time does not move. */
  jumpWall(ms: number): void {
    this.wall += ms;
  }

  /** A reboot: a new boot id, and the monotonic clock starts again from 0; the wall clock goes on. */
  reboot(): void {
    this.boots += 1;
    this.mono = 0;
  }
}
