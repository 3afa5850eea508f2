// Issue 35: what a failed write means (a full or a failing device) and the
// free space below which the daemon allows no call, with the words that name
// the device, the cause and the fix.
import { describe, expect, it } from 'vitest';
import { DISK_RESERVE_BYTES, describeStorageFault, freeSpaceFault, storageFaultOf, storageReasonOf, storageRefusalHint, storageUnavailable } from '../../../src/state/diskSpace.js';

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
});
