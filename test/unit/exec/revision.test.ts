import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RevisionKeeper } from '../../../src/exec/revision.js';

let dir: string;
let paths: { policy: string; request: string };
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-rev-'));
  paths = { policy: join(dir, 'p.json'), request: join(dir, 'r.json') };
  writeFileSync(paths.policy, '{"p":1}');
  writeFileSync(paths.request, '{"r":1}');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const pause = () => new Promise((r) => setTimeout(r, 15));

describe('R-TTY-2/R-TTY-7 revision binding', () => {
  it('R-TTY-7 untouched files verify as unchanged', async () => {
    const keeper = new RevisionKeeper(paths);
    await keeper.capture();
    expect(await keeper.verify()).toBe('unchanged');
  });

  it('R-TTY-7 changed bytes are seen', async () => {
    const keeper = new RevisionKeeper(paths);
    await keeper.capture();
    writeFileSync(paths.request, '{"r":2}');
    expect(await keeper.verify()).toBe('changed');
  });

  it('R-TTY-7 a change restored to the same bytes is still seen (identity)', async () => {
    const keeper = new RevisionKeeper(paths);
    await keeper.capture();
    const original = readFileSync(paths.policy);
    await pause();
    writeFileSync(paths.policy, '{"p":9}');
    writeFileSync(paths.policy, original);
    expect(await keeper.verify()).toBe('changed');
  });

  it('R-TTY-7 a file replaced by rename with identical bytes is seen (inode)', async () => {
    const keeper = new RevisionKeeper(paths);
    await keeper.capture();
    writeFileSync(join(dir, 'copy'), readFileSync(paths.request));
    renameSync(join(dir, 'copy'), paths.request);
    expect(await keeper.verify()).toBe('changed');
  });

  it('R-TTY-7 a deleted file is unavailable', async () => {
    const keeper = new RevisionKeeper(paths);
    await keeper.capture();
    rmSync(paths.policy);
    expect(await keeper.verify()).toBe('unavailable');
  });
});
