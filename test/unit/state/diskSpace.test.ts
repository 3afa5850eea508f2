// Issue 35: what a failed write means (a full or a failing device) and the
// free space below which the daemon allows no call, with the words that name
// the device, the cause and the fix.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DISK_RESERVE_BYTES, FreeSpaceProbe, ROOMY_BYTES, ROOMY_REUSE_MS, describeStorageFault, freeSpaceFault, storageFaultOf, storageReasonOf, storageRefusalHint, storageUnavailable } from '../../../src/state/diskSpace.js';

const HOME = '/srv/assent-home';
const statfs = (freeBlocks: number, rootBlocks = freeBlocks, ffree = 1000) => () => ({ bsize: 4096, bavail: freeBlocks, bfree: rootBlocks, files: 100_000, ffree });

describe('issue 35 diskSpace', () => {
  it('reads a full device and a failing one from Node.js and SQLite error codes; anything else is not the disk', () => {
    expect(storageFaultOf(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', path: '/srv/assent-home/audit/x.jsonl' }), HOME)).toEqual({
      kind: 'full',
      code: 'ENOSPC',
      home: HOME,
      file: '/srv/assent-home/audit/x.jsonl',
    });
    expect(storageFaultOf({ code: 'EDQUOT' }, HOME)?.kind).toBe('full');
    expect(storageFaultOf({ code: 'SQLITE_FULL' }, HOME)?.kind).toBe('full');
    expect(storageFaultOf({ code: 'EIO' }, HOME)?.kind).toBe('io');
    expect(storageFaultOf({ code: 'EROFS' }, HOME)?.kind).toBe('io');
    expect(storageFaultOf({ code: 'SQLITE_IOERR_FSYNC' }, HOME)).toEqual({ kind: 'io', code: 'SQLITE_IOERR_FSYNC', home: HOME });
    for (const other of [{ code: 'EACCES' }, { code: 'SQLITE_CONSTRAINT' }, new Error('boom'), 'text', null, undefined]) expect(storageFaultOf(other, HOME)).toBeUndefined();
  });

  it('measures the device: below the reserve (for this user) or out of inodes it is full; a device it cannot measure is left to the writes', () => {
    const reserveBlocks = DISK_RESERVE_BYTES / 4096;
    const uid = process.getuid?.();
    // Root may use the blocks the file system keeps for it, everyone else only what is available.
    const short = uid === 0 ? statfs(reserveBlocks * 10, reserveBlocks - 1) : statfs(reserveBlocks - 1, reserveBlocks * 10);
    expect(freeSpaceFault(HOME, DISK_RESERVE_BYTES, short)).toMatchObject({ kind: 'full', code: 'ENOSPC', home: HOME, freeBytes: (reserveBlocks - 1) * 4096 });
    expect(freeSpaceFault(HOME, DISK_RESERVE_BYTES, statfs(reserveBlocks, reserveBlocks))).toBeUndefined();
    expect(freeSpaceFault(HOME, DISK_RESERVE_BYTES, statfs(reserveBlocks * 10, reserveBlocks * 10, 3))).toMatchObject({ kind: 'full', inodes: true });
    expect(
      freeSpaceFault(HOME, DISK_RESERVE_BYTES, () => {
        throw new Error('ENOSYS');
      }),
    ).toBeUndefined();
  });

  it('names the device holding ASSENT_HOME, the cause and the fix, for the operator and for the agent', () => {
    const full = { kind: 'full' as const, code: 'ENOSPC', home: HOME, freeBytes: 8192 };
    expect(describeStorageFault(full)).toBe(
      'No space left on the device holding /srv/assent-home (ENOSPC, 0.01 MiB free where assent needs 1.00 MiB), where assent keeps its journal and audit log, so it allows no call it could not record. ' +
        'Free space on that device (`df -h /srv/assent-home` shows it) and assent resumes by itself, no restart needed.',
    );
    expect(storageRefusalHint(full)).toMatch(/^no space left on the device holding \/srv\/assent-home .*no restart needed$/);
    const io = { kind: 'io' as const, code: 'EIO', home: HOME, file: '/srv/assent-home/journal.db' };
    expect(describeStorageFault(io)).toMatch(/^The device holding \/srv\/assent-home failed a write \(EIO on \/srv\/assent-home\/journal.db\).*Check that device \(`dmesg`/);
    expect(storageReasonOf(full)).toBe('disk_full');
    expect(storageReasonOf(io)).toBe('disk_error');
    expect(storageUnavailable(io).toJSON()).toMatchObject({ type: 'unavailable', details: { reason: 'disk_error', code: 'EIO', home: HOME, file: '/srv/assent-home/journal.db' } });
  });

  it('the probe reuses a measurement only while the device is roomy and only for ROOMY_REUSE_MS; a shortage or a near one is measured on every call', () => {
    // Any sequence of free-space readings and monotonic steps: the probe never answers "room" where the
    // device had none, unless its last measurement, under ROOMY_REUSE_MS ago, found ROOMY_BYTES above the reserve.
    const GiB = 1024 * 1024 * 1024;
    const reading = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 4 * GiB }), fc.constantFrom(DISK_RESERVE_BYTES - 1, DISK_RESERVE_BYTES + ROOMY_BYTES - 1, DISK_RESERVE_BYTES + ROOMY_BYTES));
    const step = fc.record({ free: reading, ffree: fc.constantFrom(0, 7, 8, 9_999, 10_000, 1_000_000), advanceMs: fc.double({ min: 0, max: 3 * ROOMY_REUSE_MS, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
        let now = 1000;
        let current = steps[0]!;
        let measurements = 0;
        const probe = new FreeSpaceProbe(
          HOME,
          DISK_RESERVE_BYTES,
          () => {
            measurements += 1;
            return { bsize: 1, bavail: current.free, bfree: current.free, files: 2_000_000, ffree: current.ffree };
          },
          () => now,
        );
        let lastMeasured: { at: number; roomy: boolean } | undefined;
        for (const next of steps) {
          now += next.advanceMs;
          current = next;
          const before = measurements;
          const fault = probe.fault();
          const truth = freeSpaceFault(HOME, DISK_RESERVE_BYTES, () => ({ bsize: 1, bavail: next.free, bfree: next.free, files: 2_000_000, ffree: next.ffree }));
          if (measurements > before) {
            expect(fault).toEqual(truth);
            lastMeasured = { at: now, roomy: truth === undefined && next.ffree >= 10_000 && next.free - DISK_RESERVE_BYTES >= ROOMY_BYTES };
          } else {
            // Reused: only after a roomy measurement less than ROOMY_REUSE_MS ago.
            expect(fault).toBeUndefined();
            expect(lastMeasured?.roomy).toBe(true);
            expect(now - (lastMeasured?.at ?? Number.NEGATIVE_INFINITY)).toBeLessThan(ROOMY_REUSE_MS);
          }
          // A shortage is never reused.
          if (truth !== undefined && measurements > before) expect(fault).toBeDefined();
        }
      }),
      { numRuns: 500 },
    );
  });
});
