// The daemon's limit of open files (issue 35 item 4). At the limit accept(2)
// fails with EMFILE, and libuv then accepts the connection on a spare
// descriptor and closes it at once: the client sees it dropped unread, and the
// daemon hears nothing. So the daemon keeps a reserve below the limit: a
// connection that would eat into it is answered with the cause and the fix and
// closed, and what the daemon opens while it serves (the day's audit file, the
// journal's files, a peer lookup's `ss`, the web page) still finds descriptors.
//
// Counting /proc/self/fd costs about 10 µs for 20 descriptors and 150 µs for 500,
// so it is done when the count may be near the reserve (the last count plus the
// connections accepted since) and at least once a second otherwise; the limit
// (which prlimit can change under a running daemon) is read once a second too.
// The server also counts once a second without a connection (rpcServer.ts): at
// the limit itself no connection reaches the daemon to be counted.
import { readdirSync, readFileSync } from 'node:fs';
import { AssentError } from '../../core/base/errors.js';
import { DESCRIPTOR_LIMIT_FIX } from '../../core/base/resourceFaults.js';

/** How many descriptors the daemon keeps free for its own work: an eighth of the limit, at least 16, at most 64. */
export function descriptorReserve(limit: number): number {
  return Math.min(64, Math.max(16, Math.ceil(limit / 8)));
}

/** How long a count or a read of the limit is trusted while far from the reserve. */
const RECOUNT_MS = 1000;

export interface DescriptorUse {
  open: number;
  /** The soft limit of open files (RLIMIT_NOFILE, what `ulimit -n` says). */
  limit: number;
  reserve: number;
}

export interface DescriptorGuardOptions {
  /** The soft limit of open files; undefined where it cannot be read (the guard then admits everything). */
  readLimit?: () => number | undefined;
  /** Descriptors open in this process now; undefined when they cannot be counted (then counted as at the limit). */
  countOpen?: () => number | undefined;
  now?: () => number;
}

/** The soft `Max open files` of this process from /proc/self/limits (Linux); undefined elsewhere or when unlimited. */
export function readOpenFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'latin1')
      .split('\n')
      .find((entry) => entry.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

/** Descriptors open in this process (Linux /proc/self/fd, less the one the listing itself holds). */
export function countOpenDescriptors(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}

export class DescriptorGuard {
  private readonly readLimit: () => number | undefined;
  private readonly countOpen: () => number | undefined;
  private readonly now: () => number;
  private limit: number | undefined;
  private limitReadAt = Number.NEGATIVE_INFINITY;
  private lastCount = 0;
  private countedAt = Number.NEGATIVE_INFINITY;
  private acceptedSince = 0;

  constructor(options: DescriptorGuardOptions = {}) {
    this.readLimit = options.readLimit ?? readOpenFileLimit;
    this.countOpen = options.countOpen ?? countOpenDescriptors;
    this.now = options.now ?? (() => performance.now());
    // Read once now, while there is a descriptor to read it with: at the limit the read itself fails.
    this.limit = this.readLimit();
    this.limitReadAt = this.now();
  }

  /**
   * Called for each accepted connection (already holding its descriptor): the
   * use that leaves no room for it, or undefined when it fits or the limit
   * cannot be known.
   */
  admit(): DescriptorUse | undefined {
    const now = this.now();
    if (now - this.limitReadAt >= RECOUNT_MS) {
      // The limit can change under a running daemon (prlimit); a failed read keeps the last one.
      this.limit = this.readLimit() ?? this.limit;
      this.limitReadAt = now;
    }
    const limit = this.limit;
    if (limit === undefined) return undefined;
    const reserve = descriptorReserve(limit);
    this.acceptedSince += 1;
    if (now - this.countedAt < RECOUNT_MS && this.lastCount + this.acceptedSince < limit - 2 * reserve) return undefined;
    // Not even the listing could open: the daemon is at its limit.
    const open = this.countOpen() ?? limit;
    this.lastCount = open;
    this.countedAt = now;
    this.acceptedSince = 0;
    return open > limit - reserve ? { open, limit, reserve } : undefined;
  }

  /** Descriptors open now (the limit when they cannot be counted), the limit and the reserve; undefined where the limit cannot be read. */
  use(): DescriptorUse | undefined {
    const now = this.now();
    this.limit = this.readLimit() ?? this.limit;
    this.limitReadAt = now;
    const limit = this.limit;
    if (limit === undefined) return undefined;
    // Not even the listing could open: the daemon is at its limit. The count serves admit() too.
    const open = this.countOpen() ?? limit;
    this.lastCount = open;
    this.countedAt = now;
    this.acceptedSince = 0;
    return { open, limit, reserve: descriptorReserve(limit) };
  }
}

/** The answer to a connection refused for want of descriptors: the cause, the numbers and the fix. */
export function descriptorRefusal(use: DescriptorUse): AssentError {
  return new AssentError(
    'unavailable',
    `The daemon is at its limit of open files: ${use.open} of ${use.limit} are open (ulimit -n) and it keeps ${use.reserve} for the calls it serves, ` +
      `so it refused this connection rather than fail with EMFILE. To fix it, ${DESCRIPTOR_LIMIT_FIX}, or end idle agent sessions and gateways; retrying the call afterwards is fine.`,
    { details: { reason: 'descriptors', open: use.open, limit: use.limit, reserve: use.reserve } },
  );
}
