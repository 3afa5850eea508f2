// R-SH-9: the repository git would use from a cwd, and the keys of its config
// that execute. Real git is the oracle: temp repositories of every shape
// (plain, bare, linked worktree, gitfile, an embedded bare repository in a
// clone), `git rev-parse` from each cwd, and marker files that show git really
// ran what a key names.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIT_CONFIG_MAX_BYTES, gitExecutionKeys } from '../../../src/shell/gitRepository.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-gitrepo-')));
const home = join(root, 'home');
const env = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
  LC_ALL: 'C',
};
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** What real git uses from `cwd`: its git dir and common dir (physical), or undefined outside any repository. */
function gitsChoice(cwd: string): { repository: string; commonDir: string } | undefined {
  const run = spawnSync('git', ['rev-parse', '--absolute-git-dir', '--git-common-dir'], { cwd, env, encoding: 'utf8' });
  if (run.status !== 0) return undefined;
  const [gitDir, common] = run.stdout.trim().split('\n') as [string, string];
  return { repository: realpathSync(gitDir), commonDir: realpathSync(isAbsolute(common) ? common : resolve(cwd, common)) };
}

function ours(cwd: string): { repository: string; commonDir: string } | undefined {
  const found = gitExecutionKeys(cwd, home);
  return found.repository === undefined ? undefined : { repository: found.repository, commonDir: found.commonDir as string };
}

function script(name: string): { path: string; marker: string } {
  const marker = join(root, `${name}.ran`);
  const path = join(root, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\ntouch '${marker}'\ncat "$1" 2>/dev/null\n`);
  chmodSync(path, 0o755);
  return { path, marker };
}

beforeAll(() => {
  mkdirSync(home);
  // A plain repository with a deep directory, a hook and a sample.
  git(root, 'init', '-q', '-b', 'main', 'plain');
  mkdirSync(join(root, 'plain', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'), { recursive: true });
  writeFileSync(join(root, 'plain', 'README'), 'hi\n');
  git(join(root, 'plain'), 'add', 'README');
  git(join(root, 'plain'), 'commit', '-q', '-m', 'init');
  writeFileSync(join(root, 'plain', '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
  chmodSync(join(root, 'plain', '.git', 'hooks', 'pre-commit'), 0o755);
  // Bare, linked worktree, gitfiles (absolute from --separate-git-dir, and a relative one).
  git(root, 'init', '-q', '--bare', 'bare.git');
  git(join(root, 'plain'), 'worktree', 'add', '-q', '-b', 'wt', join(root, 'wt'));
  mkdirSync(join(root, 'wt', 'sub'));
  mkdirSync(join(root, 'store'));
  git(root, 'init', '-q', '--separate-git-dir', join(root, 'store', 'sep.git'), 'sep');
  git(root, 'init', '-q', '--separate-git-dir', join(root, 'store', 'rel.git'), 'rel');
  writeFileSync(join(root, 'rel', '.git'), 'gitdir: ../store/rel.git\n');
  // A project that ships an embedded bare repository (objects, refs, a textconv in its config), cloned.
  const { path: textconv } = script('textconv');
  git(root, 'init', '-q', '-b', 'main', 'lib-src');
  writeFileSync(join(root, 'lib-src', 'a.txt'), 'hello\n');
  git(join(root, 'lib-src'), 'add', 'a.txt');
  git(join(root, 'lib-src'), 'commit', '-q', '-m', 'lib');
  git(root, 'init', '-q', '-b', 'main', 'outer');
  git(join(root, 'outer'), 'init', '-q', '--bare', '-b', 'main', 'vendor/lib');
  git(join(root, 'lib-src'), 'push', '-q', join(root, 'outer', 'vendor', 'lib'), 'main');
  appendFileSync(join(root, 'outer', 'vendor', 'lib', 'config'), `[diff "x"]\n\ttextconv = ${textconv}\n`);
  writeFileSync(join(root, 'outer', 'vendor', 'lib', 'info', 'attributes'), '* diff=x\n');
  git(join(root, 'outer'), 'add', 'vendor');
  git(join(root, 'outer'), 'commit', '-q', '-m', 'vendored');
  git(root, 'clone', '-q', join(root, 'outer'), 'clone');
  // The minimal form: vendor/lib/{HEAD,config,info/attributes} only.
  git(root, 'init', '-q', '-b', 'main', 'minimal');
  mkdirSync(join(root, 'minimal', 'vendor', 'lib', 'info'), { recursive: true });
  writeFileSync(join(root, 'minimal', 'vendor', 'lib', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(root, 'minimal', 'vendor', 'lib', 'config'), `[diff "x"]\n\ttextconv = ${textconv}\n`);
  writeFileSync(join(root, 'minimal', 'vendor', 'lib', 'info', 'attributes'), '* diff=x\n');
  writeFileSync(join(root, 'minimal', 'a.txt'), 'hello\n');
  git(join(root, 'minimal'), 'add', 'a.txt');
  git(join(root, 'minimal'), 'commit', '-q', '-m', 'a');
  mkdirSync(join(root, 'nowhere', 'deep'), { recursive: true });
});

describe('R-SH-9 gitExecutionKeys finds the repository git itself uses', () => {
  it.each([
    ['plain'],
    ['plain/a'],
    ['plain/a/b/c/d/e/f/g/h/i/j'],
    ['plain/.git'],
    ['plain/.git/refs'],
    ['bare.git'],
    ['bare.git/refs/heads'],
    ['wt'],
    ['wt/sub'],
    ['sep'],
    ['rel'],
    ['outer'],
    ['outer/vendor/lib'],
    ['clone'],
    ['clone/vendor/lib'],
    ['clone/vendor/lib/refs'],
    ['clone/vendor/lib/info'],
    ['minimal'],
    ['minimal/vendor/lib'],
    ['minimal/vendor/lib/info'],
    ['nowhere/deep'],
  ])('from %s, the same git dir and common dir as git rev-parse', (cwd) => {
    expect(ours(join(root, cwd))).toEqual(gitsChoice(join(root, cwd)));
  });

  it('a linked worktree uses its own git dir and the main repository\'s common dir (whose config counts)', () => {
    expect(ours(join(root, 'wt', 'sub'))).toEqual({ repository: join(root, 'plain', '.git', 'worktrees', 'wt'), commonDir: join(root, 'plain', '.git') });
    expect(gitExecutionKeys(join(root, 'wt'), home).configs).toContain(join(root, 'plain', '.git', 'config'));
  });

  it('from a directory that does not exist yet, the repository of its nearest existing ancestor', () => {
    expect(ours(join(root, 'plain', 'a', 'missing', 'deeper'))).toEqual(gitsChoice(join(root, 'plain', 'a')));
  });

  it('the issue\'s embedded bare repository in a clone: git uses it from vendor/lib and below, and `git show HEAD` runs its textconv', () => {
    const lib = join(root, 'clone', 'vendor', 'lib');
    const found = gitExecutionKeys(join(lib, 'refs'), home);
    expect(found).toMatchObject({ repository: lib, commonDir: lib, keys: ['diff.x.textconv'] });
    const marker = join(root, 'textconv.ran');
    rmSync(marker, { force: true });
    git(lib, 'show', 'HEAD');
    expect(existsSync(marker)).toBe(true);
  });

  it('the minimal form (HEAD, config, info/attributes; no objects, no refs): git passes it by, yet its keys are reported', () => {
    const lib = join(root, 'minimal', 'vendor', 'lib');
    // Real git 2.39 does not take it: is_git_directory wants objects/ and refs/, so it uses the outer repository and the textconv does not run.
    expect(gitsChoice(lib)?.repository).toBe(join(root, 'minimal', '.git'));
    const marker = join(root, 'textconv.ran');
    rmSync(marker, { force: true });
    git(join(root, 'minimal'), 'show', 'HEAD', '--', 'a.txt');
    expect(existsSync(marker)).toBe(false);
    // Conservatively it counts anyway, because one `mkdir objects refs` (no write to a gate file) makes git take it.
    const found = gitExecutionKeys(join(lib, 'info'), home);
    expect(found).toMatchObject({ repository: join(root, 'minimal', '.git'), keys: ['diff.x.textconv'] });
    expect(found.configs).toEqual([join(lib, 'config'), join(root, 'minimal', '.git', 'config')]);
  });

  it('a gitfile that is not a valid gitfile, or points at no repository, is unreadable (git dies there)', () => {
    mkdirSync(join(root, 'badfile'));
    writeFileSync(join(root, 'badfile', '.git'), 'not a gitfile\n');
    expect(gitsChoice(join(root, 'badfile'))).toBeUndefined();
    expect(gitExecutionKeys(join(root, 'badfile'), home).unreadable).toMatch(/not a valid gitfile/);
    mkdirSync(join(root, 'dangling'));
    writeFileSync(join(root, 'dangling', '.git'), 'gitdir: ../store/none.git\n');
    expect(gitsChoice(join(root, 'dangling'))).toBeUndefined();
    expect(gitExecutionKeys(join(root, 'dangling'), home).unreadable).toMatch(/not a git repository/);
  });

  it('executable hooks of the repository are listed, samples are not', () => {
    expect(gitExecutionKeys(join(root, 'plain', 'a'), home).hooks).toEqual([join(root, 'plain', '.git', 'hooks', 'pre-commit')]);
  });

  it(`is fast: a cwd 10 levels below the top of a repository (printed)`, () => {
    const deep = join(root, 'plain', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j');
    const runs = 500;
    const start = performance.now();
    for (let i = 0; i < runs; i += 1) gitExecutionKeys(deep, home);
    console.log(`gitExecutionKeys from 10 levels deep: ${((performance.now() - start) / runs).toFixed(3)} ms per call`);
  });
});

describe('R-SH-9 gitExecutionKeys reports every key that executes', () => {
  it('core.fsmonitor really runs on git status, and is reported', () => {
    git(root, 'init', '-q', 'fsm');
    const { path, marker } = script('fsmonitor');
    git(join(root, 'fsm'), 'config', 'core.fsmonitor', path);
    git(join(root, 'fsm'), 'status');
    expect(existsSync(marker)).toBe(true);
    expect(gitExecutionKeys(join(root, 'fsm'), home)).toMatchObject({ repository: join(root, 'fsm', '.git'), keys: ['core.fsmonitor'] });
  });

  it('each key family, written by git config itself', () => {
    git(root, 'init', '-q', 'keys');
    const set: [string, string][] = [
      ['core.fsmonitor', '/x'],
      ['core.pager', 'less'],
      ['core.editor', 'vi'],
      ['core.sshCommand', 'ssh -i k'],
      ['core.hooksPath', '.husky'],
      ['core.askPass', '/x'],
      ['core.gitProxy', '/x'],
      ['core.alternateRefsCommand', '/x'],
      ['sequence.editor', 'vi'],
      ['diff.external', '/x'],
      ['diff.Drv.textconv', '/x'],
      ['diff.drv.command', '/x'],
      ['filter.lfs.smudge', 'git-lfs smudge %f'],
      ['filter.lfs.process', 'git-lfs filter-process'],
      ['merge.drv.driver', '/x %O %A %B'],
      ['alias.sh', '!sh -c x'],
      ['alias.st', 'status'],
      ['pager.log', 'less -S'],
      ['pager.diff', 'false'],
      ['include.path', 'missing.cfg'],
      ['includeIf.gitdir:/nowhere/.path', 'missing.cfg'],
      ['gpg.program', '/x'],
      ['gpg.ssh.program', '/x'],
      ['credential.helper', 'store'],
      ['credential.https://example.com.helper', '/x'],
      ['uploadpack.packObjectsHook', '/x'],
      ['interactive.diffFilter', '/x'],
      ['user.name', 'not a command'],
    ];
    for (const [key, value] of set) git(join(root, 'keys'), 'config', key, value);
    expect(gitExecutionKeys(join(root, 'keys'), home).keys).toEqual([
      'core.fsmonitor',
      'core.pager',
      'core.editor',
      'core.sshcommand',
      'core.askpass',
      'core.gitproxy',
      'core.alternaterefscommand',
      'sequence.editor',
      'diff.external',
      'diff.Drv.textconv',
      'diff.drv.command',
      'filter.lfs.smudge',
      'filter.lfs.process',
      'merge.drv.driver',
      'alias.sh',
      'pager.log',
      'include.path',
      'includeif.gitdir:/nowhere/.path',
      'gpg.program',
      'gpg.ssh.program',
      'credential.helper',
      'credential.https://example.com.helper',
      'uploadpack.packobjectshook',
      'interactive.difffilter',
    ]);
  });

  it('the legacy [Diff.X] form and odd spacing are read as git reads them', () => {
    git(root, 'init', '-q', 'legacy');
    appendFileSync(join(root, 'legacy', '.git', 'config'), '[Diff.X]\n  TextConv=/x ; c\n[CORE]PAGER\n');
    expect(git(join(root, 'legacy'), 'config', '--list', '--local')).toContain('diff.x.textconv=/x');
    expect(gitExecutionKeys(join(root, 'legacy'), home).keys).toEqual(['diff.x.textconv', 'core.pager']);
  });

  it('follows include.path (relative to the including file, ~ is the home) and every includeIf, whatever its condition', () => {
    git(root, 'init', '-q', 'inc');
    const config = join(root, 'inc', '.git', 'config');
    appendFileSync(config, '[include]\n\tpath = extra.cfg\n[includeIf "gitdir:/nowhere/"]\n\tpath = ~/home.cfg\n');
    writeFileSync(join(root, 'inc', '.git', 'extra.cfg'), '[core]\n\tpager = /x\n[include]\n\tpath = config\n');
    writeFileSync(join(home, 'home.cfg'), '[diff]\n\texternal = /x\n');
    const found = gitExecutionKeys(join(root, 'inc'), home);
    expect(found.keys).toEqual(['include.path', 'core.pager', 'includeif.gitdir:/nowhere/.path', 'diff.external']);
    expect(found.configs).toEqual([config, join(root, 'inc', '.git', 'extra.cfg'), join(home, 'home.cfg')]);
    expect(found.unreadable).toBeUndefined();
    // git follows extra.cfg too, and dies on its include of config (a cycle): each file is read once here, and include.path is reported anyway.
    expect(spawnSync('git', ['config', 'core.pager'], { cwd: join(root, 'inc'), env, encoding: 'utf8' }).stderr).toMatch(/exceeded maximum include depth/);
    writeFileSync(join(root, 'inc', '.git', 'extra.cfg'), '[core]\n\tpager = /x\n');
    expect(git(join(root, 'inc'), 'config', 'core.pager')).toBe('/x');
  });

  it('a config git cannot parse, or one too large to read, is unreadable', () => {
    git(root, 'init', '-q', 'broken');
    appendFileSync(join(root, 'broken', '.git', 'config'), '[core]\n\tpager # comment\n');
    expect(spawnSync('git', ['status'], { cwd: join(root, 'broken'), env }).status).not.toBe(0);
    expect(gitExecutionKeys(join(root, 'broken'), home).unreadable).toBe(`${join(root, 'broken', '.git', 'config')}: bad config line 7`);
    git(root, 'init', '-q', 'huge');
    appendFileSync(join(root, 'huge', '.git', 'config'), `[user]\n\tname = ${'x'.repeat(GIT_CONFIG_MAX_BYTES)}\n`);
    expect(gitExecutionKeys(join(root, 'huge'), home).unreadable).toMatch(/larger than 256 KiB/);
  });

  it('outside any repository: no repository, no keys', () => {
    const found = gitExecutionKeys(join(root, 'nowhere', 'deep'), home);
    expect(found).toMatchObject({ keys: [], hooks: [], configs: [] });
    expect(found.repository).toBeUndefined();
  });
});
