// The daemon's memory against its cap (issue 35 item 4), limit and usage
// injected: one warning per episode near the cap, naming it and the fix, one
// line when it is back under; and the cgroup reader on this machine.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCgroupMemoryLimit, startMemoryWatch } from '../../../../src/heads/daemon/memoryWatch.js';
import { createLogger } from '../../../../src/service/logger.js';

const MiB = 1_048_576;

function watchWith(state: { used: number | undefined; heapUsed: number }): { sample: () => void; lines: () => Record<string, unknown>[]; stop: () => void; status: () => unknown } {
  const written: string[] = [];
  const watch = startMemoryWatch({
    logger: createLogger({ write: (line: string) => written.push(line) }),
    intervalMs: 60_000,
    readLimit: () => ({ bytes: 200 * MiB, source: '/sys/fs/cgroup/memory/x/memory.limit_in_bytes', usage: () => state.used }),
    heap: () => ({ used: state.heapUsed, limit: 1000 * MiB }),
  });
  return { sample: watch.sample, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>), stop: watch.stop, status: watch.status };
}

describe('memoryWatch', () => {
  it('warns once when the cgroup usage passes 80 % of its limit, naming the limit, its file and the fix, and says once when it is under 70 % again', () => {
    const state = { used: 100 * MiB as number | undefined, heapUsed: 10 * MiB };
    const { sample, lines, stop } = watchWith(state);
    sample();
    expect(lines()).toEqual([]);
    state.used = 170 * MiB;
    sample();
    sample();
    state.used = 150 * MiB;
    sample();
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({ level: 'warn', limitMb: 200, usedMb: 170 });
    expect(String(lines()[0]?.['msg'])).toMatch(/170 MiB of the daemon's 200 MiB limit are in use \(\/sys\/fs\/cgroup\/memory\/x\/memory\.limit_in_bytes\)/);
    expect(String(lines()[0]?.['msg'])).toMatch(/kernel kills it.*MemoryMax=/);
    state.used = 130 * MiB;
    sample();
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatchObject({ level: 'info', msg: 'memory: back under 70 % of the limit' });
    state.used = 190 * MiB;
    sample();
    expect(lines()).toHaveLength(3);
    stop();
  });

  it('warns near the JavaScript heap limit, naming --max-old-space-size; an unreadable usage warns of nothing', () => {
    const state = { used: undefined as number | undefined, heapUsed: 900 * MiB };
    const { sample, lines, stop, status } = watchWith(state);
    sample();
    expect(lines()).toHaveLength(1);
    expect(String(lines()[0]?.['msg'])).toMatch(/JavaScript heap uses 900 MiB of its 1000 MiB limit.*--max-old-space-size/);
    expect(status()).toEqual({ limitMb: 200, limitSource: '/sys/fs/cgroup/memory/x/memory.limit_in_bytes', heapLimitMb: 1000 });
    stop();
  });

  it.skipIf(process.platform !== 'linux')('reads the tightest limit on the way up from this process cgroup, and its usage less the inactive file cache', () => {
    // A copy of the cgroup tree this process is in, under a temp root: v1's memory controller, or v2's unified tree.
    const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
    const v1 = lines.map((line) => /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/.exec(line)?.[1]).find((path) => path !== undefined);
    const own = (v1 ?? lines.map((line) => /^0::(.*)$/.exec(line)?.[1]).find((path) => path !== undefined) ?? '/').replace(/\/+$/, '');
    const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
    try {
      const base = v1 === undefined ? root : join(root, 'memory');
      const files = v1 === undefined ? { limit: 'memory.max', usage: 'memory.current', inactive: 'inactive_file' } : { limit: 'memory.limit_in_bytes', usage: 'memory.usage_in_bytes', inactive: 'total_inactive_file' };
      mkdirSync(join(base, own), { recursive: true });
      writeFileSync(join(base, own, files.limit), String(200 * MiB));
      writeFileSync(join(base, own, files.usage), String(150 * MiB));
      writeFileSync(join(base, own, 'memory.stat'), `cache 1\n${files.inactive} ${String(30 * MiB)}\n`);
      writeFileSync(join(base, files.limit), v1 === undefined ? 'max' : '9223372036854771712');
      const limit = readCgroupMemoryLimit(root);
      expect(limit?.bytes).toBe(200 * MiB);
      expect(limit?.source).toBe(join(base, own, files.limit));
      expect(limit?.usage()).toBe(120 * MiB);
      writeFileSync(join(base, own, files.limit), v1 === undefined ? 'max' : '9223372036854771712');
      expect(readCgroupMemoryLimit(root)).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
