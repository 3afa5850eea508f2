// Issue 35: the daemon's guard over its state directory's device. A failed
// write holds every call until that writer's probe succeeds; a device measured
// below the reserve holds until it has room; the log says when a spell of
// refusals began (cause and fix) and when it ended, once each.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import { AssentError } from '../../../src/core/base/errors.js';
import type { Timers } from '../../../src/core/base/timers.js';
import type { Logger } from '../../../src/service/logger.js';
import { StorageGuard } from '../../../src/service/storageGuard.js';

const HOME = '/srv/home';

function manualTimers(): Timers & { fire(): Promise<void>; pending(): number } {
  const queue: (() => void)[] = [];
  return {
    setTimeout: (callback) => queue.push(callback),
    clearTimeout: () => undefined,
    pending: () => queue.length,
    async fire() {
      for (const callback of queue.splice(0)) callback();
      for (let i = 0; i < 10; i += 1) await Promise.resolve();
    },
  };
}

function recordingLogger(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const logger = {
    lines,
    debug: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'debug', message, ...(fields ? { fields } : {}) }),
    info: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
    warn: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
    error: (message: string, fields?: Record<string, unknown>) => lines.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
    child: () => logger,
  };
  return logger;
}

function guard(options: { freeBytes?: () => number; journalProbe?: () => Promise<void> } = {}) {
  const timers = manualTimers();
  const logger = recordingLogger();
  const free = options.freeBytes ?? (() => 100 * 1024 * 1024);
  const storage = new StorageGuard({
    home: HOME,
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
    timers,
    logger,
    probes: { journal: options.journalProbe ?? (() => Promise.resolve()) },
    statfs: () => ({ bsize: 1, bavail: free(), bfree: free(), files: 0, ffree: 0 }),
    retryMs: 10,
  });
  return { storage, timers, logger };
}

describe('issue 35 StorageGuard', () => {
  it('a device below the reserve refuses every call with the disk named, and serves again once it has room, saying both once', () => {
    let free = 0;
    const { storage, logger } = guard({ freeBytes: () => free });
    const refusal = storage.callRefusal('fs/write_file');
    expect(refusal).toBeInstanceOf(AssentError);
    expect(refusal?.type).toBe('policy_denied');
    expect(refusal?.message).toMatch(/^assent did not allow fs\/write_file: no space left on the device holding \/srv\/home \(ENOSPC, 0.00 MiB free/);
    expect(refusal?.details).toMatchObject({ reason: 'unavailable', detail: 'disk_full', code: 'ENOSPC', home: HOME });
    storage.callRefusal('fs/write_file');
    expect(storage.status()).toMatchObject({ ok: false, code: 'ENOSPC', source: 'free space', refusedCalls: 2 });
    expect(storage.refusal()?.type).toBe('unavailable');
    free = 10 * 1024 * 1024;
    expect(storage.callRefusal('fs/write_file')).toBeUndefined();
    expect(storage.status()).toMatchObject({ ok: true });
    expect(logger.lines.map((line) => [line.level, line.message])).toEqual([
      ['error', 'assent cannot write to its state directory; every call is refused until it can'],
      ['info', 'assent writes to its state directory again; calls are served'],
    ]);
    expect(logger.lines[0]?.fields?.['cause']).toMatch(/Free space on that device/);
    expect(logger.lines[1]?.fields).toMatchObject({ was: 'ENOSPC', refusedCalls: 2 });
  });

  it('a failed journal write (SQLITE_IOERR, room on the device) holds calls until the journal probe succeeds', async () => {
    let healthy = false;
    const { storage, timers } = guard({ journalProbe: () => (healthy ? Promise.resolve() : Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }))) });
    const error = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    const refusal = storage.callRefusal('claude/Bash', error);
    expect(refusal?.details).toMatchObject({ reason: 'unavailable', detail: 'disk_error', code: 'SQLITE_IOERR_WRITE' });
    expect(refusal?.message).toMatch(/failed a write \(SQLITE_IOERR_WRITE\).*Check that device|check that device/);
    expect(storage.callRefusal('claude/Bash')).toBeDefined();
    await timers.fire();
    expect(storage.callRefusal('claude/Bash')).toBeDefined();
    healthy = true;
    await timers.fire();
    expect(storage.callRefusal('claude/Bash')).toBeUndefined();
    expect(timers.pending()).toBe(0);
  });

  it('a failed step that is not the disk refuses nothing, and an audit writer that recovers lifts its hold', () => {
    const { storage } = guard();
    expect(storage.callRefusal('fs/x', new AssentError('conflict', 'taken'))).toBeUndefined();
    expect(storage.callRefusal('fs/x', Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT' }))).toBeUndefined();
    expect(storage.noteFailure('audit', Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }))).toMatchObject({ kind: 'full' });
    expect(storage.callRefusal('fs/x')).toBeDefined();
    expect(storage.status()).toMatchObject({ ok: false, source: 'audit' });
    storage.noteRecovered('audit');
    expect(storage.callRefusal('fs/x')).toBeUndefined();
  });
});
