// The machine's clocks, as the daemon reads them (R-ARCH-2). Wall time is
// Date.now(). Monotonic time is CLOCK_MONOTONIC through process.hrtime (libuv
// reads that clock on Linux): counted from the boot, not from this process as
// performance.now() is, so a monotonic deadline one daemon keeps in the journal
// means the same to the daemon that follows it in the same boot. The boot id
// says which boot that is; a reboot starts the clock again and changes the id.
import { readFileSync } from 'node:fs';
import type { Clock } from '../core/base/clock.js';

export const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** This boot's id (a UUID the kernel draws at boot); undefined where there is none (not Linux, no /proc). */
export function readBootId(file = BOOT_ID_FILE): string | undefined {
  try {
    const id = readFileSync(file, 'utf8').trim().toLowerCase();
    return BOOT_ID.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

let bootId: string | null | undefined;

/** Wall time, the machine's monotonic clock in milliseconds (microsecond resolution), and the boot it counts from (read once). */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => Number(process.hrtime.bigint() / 1000n) / 1000,
  bootId: () => {
    if (bootId === undefined) bootId = readBootId() ?? null;
    return bootId ?? undefined;
  },
};
