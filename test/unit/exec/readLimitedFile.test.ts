import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssentError } from '../../../src/core/base/errors.js';
import { readLimitedFile } from '../../../src/exec/readLimitedFile.js';
import type { LimitedFs } from '../../../src/exec/readLimitedFile.js';
import { promises as fsPromises } from 'node:fs';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-read-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function reasonOf(promise: Promise<unknown>): Promise<unknown> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AssentError);
  return (error as AssentError).details?.['reason'];
}

describe('R-EXEC-1 readLimitedFile', () => {
  it('reads a regular file and reports its identity', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, '{"a":1}');
    const read = await readLimitedFile(file, 'request');
    expect(new TextDecoder().decode(read.bytes)).toBe('{"a":1}');
    expect(read.identity.size).toBe(7n);
  });

  it('R-EXEC-1 refuses a symlink even to a valid file', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, '{}');
    symlinkSync(file, join(dir, 'link.json'));
    expect(await reasonOf(readLimitedFile(join(dir, 'link.json'), 'request'))).toBe('symlink');
  });

  it('R-EXEC-1 refuses a directory and a FIFO as not regular files', async () => {
    mkdirSync(join(dir, 'd'));
    expect(await reasonOf(readLimitedFile(join(dir, 'd'), 'policy'))).toBe('not-regular-file');
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect(await reasonOf(readLimitedFile(join(dir, 'fifo'), 'policy'))).toBe('not-regular-file');
  });

  it('R-EXEC-1 refuses 64 KiB + 1 and accepts exactly 64 KiB', async () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(64 * 1024 + 1));
    expect(await reasonOf(readLimitedFile(join(dir, 'big'), 'request'))).toBe('too-large');
    writeFileSync(join(dir, 'ok'), 'x'.repeat(64 * 1024));
    expect((await readLimitedFile(join(dir, 'ok'), 'request')).bytes.byteLength).toBe(64 * 1024);
  });

  it('a missing file is unreadable', async () => {
    expect(await reasonOf(readLimitedFile(join(dir, 'none'), 'request'))).toBe('unreadable');
  });

  it('R-EXEC-1 a file that changes during the read is refused', async () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, '{"a":1}');
    // The path is rewritten between the read and the final identity check.
    let lstatCalls = 0;
    const racing: LimitedFs = {
      lstat: async (path, options) => {
        lstatCalls += 1;
        if (lstatCalls === 2) writeFileSync(file, '{"a":2, "b":3}');
        return fsPromises.lstat(path, options);
      },
      open: (path, flags) => fsPromises.open(path, flags),
    };
    expect(await reasonOf(readLimitedFile(file, 'request', racing))).toBe('changed-during-read');
  });
});
