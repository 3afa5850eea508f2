// The daemon's clock (service/systemClock.ts): its monotonic reading is the
// machine's CLOCK_MONOTONIC, the same in every process of one boot (unlike
// performance.now(), which counts from its own process's start), so a
// monotonic expiry one daemon keeps in the journal means the same to the next;
// the boot id says which boot that reading belongs to.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BOOT_ID_FILE, readBootId, systemClock } from '../../../src/service/systemClock.js';

describe('the system clock', () => {
  it('reads a monotonic clock another process reads the same: a child started later reads between two of this process’s readings', () => {
    const before = systemClock.monotonic();
    // The child's own start takes tens of milliseconds: performance.now() there would read far below `before`.
    const child = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(Number(process.hrtime.bigint() / 1000n) / 1000))'], { encoding: 'utf8' }));
    const after = systemClock.monotonic();
    expect(child).toBeGreaterThanOrEqual(before);
    expect(child).toBeLessThanOrEqual(after);
    expect(after - before).toBeLessThan(10_000);
  });

  it.skipIf(readBootId() === undefined)('names this boot by the kernel’s boot id (Linux)', () => {
    expect(systemClock.bootId?.()).toBe(readBootId(BOOT_ID_FILE));
    expect(systemClock.bootId?.()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('has no boot id where the file is missing or holds no UUID: proofs are then judged by their wall time after a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'assent-boot-'));
    try {
      expect(readBootId(join(dir, 'missing'))).toBeUndefined();
      writeFileSync(join(dir, 'garbage'), 'not a boot id\n');
      expect(readBootId(join(dir, 'garbage'))).toBeUndefined();
      writeFileSync(join(dir, 'id'), '04C3B3E5-5F33-4478-8413-E2F716842471\n');
      expect(readBootId(join(dir, 'id'))).toBe('04c3b3e5-5f33-4478-8413-e2f716842471');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
