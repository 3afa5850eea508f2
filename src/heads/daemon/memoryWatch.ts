// The daemon's memory against its cap (issue 35 item 4). Under a hard cap — a
// cgroup's memory limit (systemd's MemoryMax=), or V8's heap limit — the daemon
// is not asked when the cap is reached: the kernel kills it with SIGKILL, or V8
// aborts it. Every hook and gateway call is then refused until it runs again
// (no daemon means no decision), and a restart continues the audit chain. What
// the daemon can do is say so before: once the memory charged against the cap
// passes 80 % of it (the cgroup's usage less its inactive file cache, which
// the kernel reclaims before it kills; or the heap against V8's limit) it writes
// one warning to daemon.log naming the cap and the fix, and one line when it is
// back under 70 %.
import { readFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from '../../service/logger.js';

/** A cgroup limit at or above this is "no limit" (cgroup v1 writes 2^63 rounded down to a page). */
const UNLIMITED_BYTES = 2 ** 60;
const WARN_RATIO = 0.8;
const CLEAR_RATIO = 0.7;
const DEFAULT_INTERVAL_MS = 500;
/** The cgroup can change under a running daemon (moved, limit rewritten); it is read again this often. */
const LIMIT_REREAD_MS = 10_000;

export interface MemoryLimit {
  bytes: number;
  /** The file the limit was read from. */
  source: string;
  /** What the kernel counts against it now: the cgroup's usage less its inactive file cache; undefined when unreadable. */
  usage(): number | undefined;
}

const mebibytes = (bytes: number): number => Math.round(bytes / 1_048_576);

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1').trim();
  } catch {
    return undefined;
  }
}

/**
 * The tightest memory limit of this process's cgroup and its ancestors (Linux,
 * cgroup v1 `memory.limit_in_bytes` or v2 `memory.max`); undefined when there is none.
 */
export function readCgroupMemoryLimit(root = '/sys/fs/cgroup'): MemoryLimit | undefined {
  const lines = (readText('/proc/self/cgroup') ?? '').split('\n');
  const v1 = lines.map((line) => /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/.exec(line)?.[1]).find((path) => path !== undefined);
  const v2 = lines.map((line) => /^0::(.*)$/.exec(line)?.[1]).find((path) => path !== undefined);
  const candidates: { dir: string; own: string; files: { limit: string; usage: string; inactive: string } }[] = [];
  if (v1 !== undefined) candidates.push({ dir: `${root}/memory`, own: v1, files: { limit: 'memory.limit_in_bytes', usage: 'memory.usage_in_bytes', inactive: 'total_inactive_file' } });
  if (v2 !== undefined) candidates.push({ dir: root, own: v2, files: { limit: 'memory.max', usage: 'memory.current', inactive: 'inactive_file' } });
  let best: MemoryLimit | undefined;
  for (const { dir, own, files } of candidates) {
    // The limit that binds is the smallest on the way up to the root.
    for (let path = own.replace(/\/+$/, ''); ; path = path.slice(0, path.lastIndexOf('/'))) {
      const source = `${dir}${path}/${files.limit}`;
      const text = readText(source);
      if (text !== undefined && /^\d+$/.test(text)) {
        const bytes = Number(text);
        if (bytes < UNLIMITED_BYTES && (best === undefined || bytes < best.bytes)) best = { bytes, source, usage: () => cgroupUsage(`${dir}${path}`, files) };
      }
      if (path === '') break;
    }
  }
  return best;
}

/** A cgroup's memory usage less its inactive file cache, as `docker stats` counts it. */
function cgroupUsage(dir: string, files: { usage: string; inactive: string }): number | undefined {
  const usage = readText(`${dir}/${files.usage}`);
  if (usage === undefined || !/^\d+$/.test(usage)) return undefined;
  const stat = readText(`${dir}/memory.stat`) ?? '';
  const inactive = new RegExp(`^${files.inactive} (\\d+)$`, 'm').exec(stat)?.[1];
  return Math.max(0, Number(usage) - Number(inactive ?? 0));
}

export interface MemoryWatchOptions {
  logger: Logger;
  intervalMs?: number;
  readLimit?: () => MemoryLimit | undefined;
  /** The JavaScript heap in use and its limit (--max-old-space-size). */
  heap?: () => { used: number; limit: number };
  now?: () => number;
}

export interface MemoryWatch {
  /** For daemon.status: the cap and where it comes from, when there is one. */
  status(): { limitMb?: number; limitSource?: string; limitUsedMb?: number; heapLimitMb: number };
  /** Takes one sample now (the timer does it every interval). */
  sample(): void;
  stop(): void;
}

const defaultHeap = (): { used: number; limit: number } => {
  const stats = getHeapStatistics();
  return { used: stats.used_heap_size, limit: stats.heap_size_limit };
};

/** Samples memory every interval (an unref'd timer) and warns once per episode near the cap. */
export function startMemoryWatch(options: MemoryWatchOptions): MemoryWatch {
  const { logger } = options;
  const readLimit = options.readLimit ?? (() => readCgroupMemoryLimit());
  const heap = options.heap ?? defaultHeap;
  const now = options.now ?? (() => performance.now());
  let limit = readLimit();
  let limitReadAt = now();
  let warned: 'cgroup' | 'heap' | undefined;

  const sample = (): void => {
    if (now() - limitReadAt >= LIMIT_REREAD_MS) {
      limit = readLimit();
      limitReadAt = now();
    }
    const charged = limit?.usage();
    const js = heap();
    const cgroupRatio = limit === undefined || charged === undefined ? 0 : charged / limit.bytes;
    const heapRatio = js.used / js.limit;
    if (warned === undefined && cgroupRatio >= WARN_RATIO && limit !== undefined && charged !== undefined) {
      warned = 'cgroup';
      logger.warn(
        `memory: ${mebibytes(charged)} MiB of the daemon's ${mebibytes(limit.bytes)} MiB limit are in use (${limit.source}); at the limit the kernel kills it, and every hook and gateway call is refused until it runs again. ` +
          'Decide or let expire the approvals that wait (each holds its call\'s arguments), or raise the limit (MemoryMax= in its systemd unit)',
        { usedMb: mebibytes(charged), limitMb: mebibytes(limit.bytes), source: limit.source },
      );
    } else if (warned === undefined && heapRatio >= WARN_RATIO) {
      warned = 'heap';
      logger.warn(
        `memory: the daemon's JavaScript heap uses ${mebibytes(js.used)} MiB of its ${mebibytes(js.limit)} MiB limit; at the limit V8 aborts the daemon, and every hook and gateway call is refused until it runs again. ` +
          'Decide or let expire the approvals that wait, or raise the limit (node --max-old-space-size, in NODE_OPTIONS of what starts the daemon)',
        { heapUsedMb: mebibytes(js.used), heapLimitMb: mebibytes(js.limit) },
      );
    } else if (warned === 'cgroup' && cgroupRatio < CLEAR_RATIO) {
      warned = undefined;
      logger.info('memory: back under 70 % of the limit', { usedMb: mebibytes(charged ?? 0) });
    } else if (warned === 'heap' && heapRatio < CLEAR_RATIO) {
      warned = undefined;
      logger.info('memory: the JavaScript heap is back under 70 % of its limit', { heapUsedMb: mebibytes(js.used) });
    }
  };

  const timer = setInterval(sample, options.intervalMs ?? DEFAULT_INTERVAL_MS);
  timer.unref();
  return {
    status: () => {
      const charged = limit?.usage();
      return {
        ...(limit === undefined ? {} : { limitMb: mebibytes(limit.bytes), limitSource: limit.source }),
        ...(charged === undefined ? {} : { limitUsedMb: mebibytes(charged) }),
        heapLimitMb: mebibytes(heap().limit),
      };
    },
    sample,
    stop: () => clearInterval(timer),
  };
}
