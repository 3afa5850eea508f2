// R-SH-10: a recursive read is judged by every entry beneath its start, found
// on disk and bounded. GNU grep is the oracle for what `grep -r` and `grep -R`
// actually read: every file it opens must be among the entries.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePaths, evaluatePath } from '../../../src/core/policy/pathPolicy.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { scanTree, TREE_SCAN_LIMIT } from '../../../src/shell/treeScan.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-tree-')));
const proj = join(root, 'proj');
const home = join(root, 'home');
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(() => {
  for (const dir of ['src/deep', 'sub', '.git', 'node_modules/x', '.hidden-dir']) mkdirSync(join(proj, dir), { recursive: true });
  mkdirSync(join(root, 'outside', 'inner'), { recursive: true });
  mkdirSync(join(home, '.ssh'), { recursive: true });
  const files: Record<string, string> = {
    'proj/a.txt': 'a\n',
    'proj/src/deep/b.ts': 'b\n',
    'proj/.env': 'KEY=1\n',
    'proj/sub/.env.local': 'KEY=2\n',
    'proj/.git/config': '[core]\n',
    'proj/.hidden-dir/x': 'x\n',
    'proj/node_modules/x/index.js': 'x\n',
    'outside/secret.txt': 's\n',
    'outside/inner/deeper.txt': 'd\n',
    'home/.ssh/id_rsa': 'k\n',
  };
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  symlinkSync('../outside', join(proj, 'dirlink'));
  symlinkSync('../outside/secret.txt', join(proj, 'filelink'));
  symlinkSync('../home/.ssh', join(proj, 'keys'));
  symlinkSync('../home/.ssh/authorized_keys2', join(proj, 'dangling'));
  symlinkSync('loop', join(proj, 'loop'));
  symlinkSync('..', join(proj, 'sub', 'up'));
});

const at = (...paths: string[]): string[] => paths.map((path) => join(root, path));

describe('R-SH-10 scanTree lists what a recursive read reaches', () => {
  it('every file and directory beneath, hidden ones included; a symlink met is listed as itself (grep -r and rg skip it)', () => {
    const { entries, truncated } = scanTree(proj, { hidden: true });
    expect(truncated).toBe(false);
    expect(entries.sort()).toEqual(
      at(
        'proj',
        'proj/.env',
        'proj/.git',
        'proj/.git/config',
        'proj/.hidden-dir',
        'proj/.hidden-dir/x',
        'proj/a.txt',
        'proj/dangling',
        'proj/dirlink',
        'proj/filelink',
        'proj/keys',
        'proj/loop',
        'proj/node_modules',
        'proj/node_modules/x',
        'proj/node_modules/x/index.js',
        'proj/src',
        'proj/src/deep',
        'proj/src/deep/b.ts',
        'proj/sub',
        'proj/sub/.env.local',
        'proj/sub/up',
      ).sort(),
    );
  });

  it('without hidden, dot-entries are neither listed nor entered (rg without --hidden)', () => {
    const { entries } = scanTree(proj, { hidden: false });
    expect(entries.filter((entry) => entry.slice(root.length).split('/').some((part) => part.startsWith('.'))).sort()).toEqual([]);
    expect(entries).not.toContain(join(proj, '.env'));
    expect(entries).not.toContain(join(proj, 'sub', '.env.local'));
  });

  it('with follow, symlinked directories are walked too, each real directory once (grep -R, rg -L)', () => {
    const { entries, truncated } = scanTree(proj, { hidden: true, follow: true });
    expect(truncated).toBe(false);
    expect(entries).toEqual(expect.arrayContaining(at('outside/inner/deeper.txt', 'home/.ssh/id_rsa', 'outside/secret.txt')));
    // sub/up -> .. leads back to proj: listed once, not walked again.
    expect(entries.filter((entry) => entry === proj)).toHaveLength(1);
    expect(new Set(entries).size).toBe(entries.length);
  });

  it('GNU grep -r reads only files among the entries (-r), and grep -R only among the followed entries', () => {
    for (const [flag, follow] of [['-r', false], ['-R', true]] as const) {
      const run = spawnSync('grep', [flag, '-l', '', proj], { encoding: 'utf8' });
      const read = run.stdout
        .trim()
        .split('\n')
        .map((path) => realpathSync.native(path));
      expect(read.length, flag).toBeGreaterThan(5);
      const { entries } = scanTree(proj, { hidden: true, follow });
      expect(read.filter((path) => !entries.includes(path)), flag).toEqual([]);
    }
  });

  it('stops at the limit and says so', () => {
    const scan = scanTree(proj, { hidden: true, limit: 5 });
    expect(scan).toMatchObject({ truncated: true });
    expect(scan.entries).toHaveLength(5);
    expect(scan.entries[0]).toBe(proj);
    expect(scanTree(join(proj, 'src'), { hidden: true, limit: 4 })).toEqual({ entries: at('proj/src', 'proj/src/deep', 'proj/src/deep/b.ts'), truncated: false });
  });

  it('a start that does not exist, or is a file, or a symlink, is itself the entry (physical)', () => {
    expect(scanTree(join(proj, 'missing'), { hidden: true })).toEqual({ entries: [join(proj, 'missing')], truncated: false });
    expect(scanTree(join(proj, 'a.txt'), { hidden: true })).toEqual({ entries: [join(proj, 'a.txt')], truncated: false });
    expect(scanTree(join(proj, 'keys'), { hidden: true }).entries).toEqual(at('home/.ssh', 'home/.ssh/id_rsa'));
    expect(scanTree(join(proj, 'dangling'), { hidden: true }).entries).toEqual(at('home/.ssh/authorized_keys2'));
  });

  it.skipIf(process.getuid?.() === 0)('a directory that cannot be listed is skipped (the agent cannot read beneath it either)', () => {
    mkdirSync(join(root, 'locked', 'closed'), { recursive: true });
    writeFileSync(join(root, 'locked', 'closed', 'f'), 'f\n');
    chmodSync(join(root, 'locked', 'closed'), 0o000);
    try {
      expect(scanTree(join(root, 'locked'), { hidden: true }).entries).toEqual(at('locked', 'locked/closed'));
    } finally {
      chmodSync(join(root, 'locked', 'closed'), 0o755);
    }
  });

  it('judged by the default path rules, a .env beneath is denied, and with follow the ~/.ssh a symlink leads to', () => {
    const paths = compilePaths(DEFAULT_CONFIG.policy.paths, { home, assentHome: join(home, '.assent'), codexHome: join(home, '.codex') });
    const denied = (entries: string[]): string[] => entries.filter((entry) => evaluatePath(paths, entry, 'read', [proj]).decision === 'deny');
    expect(denied(scanTree(proj, { hidden: true }).entries).sort()).toEqual(at('proj/.env', 'proj/sub/.env.local'));
    expect(denied(scanTree(proj, { hidden: true, follow: true }).entries).sort()).toEqual(expect.arrayContaining(at('home/.ssh', 'home/.ssh/authorized_keys2', 'home/.ssh/id_rsa', 'proj/.env')));
    expect(denied(scanTree(join(proj, 'src'), { hidden: true }).entries)).toEqual([]);
  });

  it('the glob ~/.ssh/** matches ~/.ssh itself (picomatch, dot: true), so a listed symlink target directory is caught', () => {
    const paths = compilePaths({ read: 'allow', write: 'allow', rules: [{ glob: '~/.ssh/**', access: 'any', decision: 'deny' }] }, { home, assentHome: join(home, '.assent'), codexHome: join(home, '.codex') });
    expect(evaluatePath(paths, join(home, '.ssh'), 'read', [proj]).decision).toBe('deny');
    expect(evaluatePath(paths, join(home, '.ssh', 'id_rsa'), 'read', [proj]).decision).toBe('deny');
    expect(evaluatePath(paths, join(home, '.sshx'), 'read', [proj]).decision).toBe('allow');
    expect(evaluatePath(paths, home, 'read', [proj]).decision).toBe('allow');
  });

  it(`walks ${TREE_SCAN_LIMIT} entries quickly (time printed, not asserted)`, () => {
    const big = join(root, 'big');
    for (let d = 0; d < 100; d += 1) {
      mkdirSync(join(big, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f += 1) writeFileSync(join(big, `d${d}`, `f${f}`), '');
    }
    const start = performance.now();
    const scan = scanTree(big, { hidden: true });
    const ms = performance.now() - start;
    expect(scan).toMatchObject({ truncated: true });
    expect(scan.entries).toHaveLength(TREE_SCAN_LIMIT);
    const small = performance.now();
    const all = scanTree(join(big, 'd0'), { hidden: true });
    console.log(`scanTree: ${TREE_SCAN_LIMIT} entries in ${ms.toFixed(1)} ms; ${all.entries.length} entries in ${(performance.now() - small).toFixed(2)} ms`);
  });
});
