// R-SH-11: git's reading subcommands are allowed in their reading forms, with
// real git as the witness: every accepted form, run in a real repository,
// changes no file there (the index aside, which git refreshes on its own); every
// refused form a peer might allow does the harm its reason names.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../../src/core/config/config.js';
import { judgeShell } from '../../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../../helpers/shellFixture.js';
import { expectAccepted, expectRefused } from './programTable.js';

const ALLOWED = [
  'git blame README.md', 'git blame -L 1,2 -- README.md', 'git blame -w -M HEAD README.md', 'git rev-parse HEAD', 'git rev-parse --show-toplevel',
  'git rev-parse --abbrev-ref HEAD', 'git rev-parse --short=7 HEAD', 'git rev-parse --git-dir', 'git ls-files', 'git ls-files -m -o --exclude-standard',
  'git ls-tree -r HEAD', 'git ls-tree --name-only HEAD src', 'git cat-file -t HEAD', 'git cat-file -p HEAD', 'git cat-file -p HEAD:README.md', 'git cat-file blob HEAD:README.md',
  'git describe --tags --always', 'git describe --dirty --always', "git for-each-ref --format='%(refname)' refs/heads", 'git show-ref --heads',
  'git merge-base HEAD main', 'git merge-base --is-ancestor HEAD main', 'git rev-list --count HEAD', 'git rev-list -n 3 HEAD', 'git shortlog -sn HEAD',
  'git grep -n readme', 'git grep -i -e readme -- README.md', 'git reflog', 'git reflog show -n 2', 'git tag', 'git tag -l', "git tag -l 'v*'", 'git tag --contains HEAD',
  'git tag -n', 'git worktree list', 'git worktree list --porcelain', 'git remote', 'git remote -v', 'git remote get-url origin', 'git remote show -n origin',
  'git config --get user.name', 'git config user.name', 'git config --list', 'git config -l --show-origin', 'git config --get-regexp ^user', 'git config --global --get user.name',
];

let parser: ShellParser;
let host: ShellHost;

function git(args: string, cwd = host.cwd): { status: number | null; stdout: string } {
  const run = spawnSync('bash', ['--norc', '--noprofile', '-c', `git ${args}`], { cwd, env: { PATH: '/usr/bin:/bin', HOME: host.home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout };
}

/** Every file beneath the repository and HOME but the index, by content hash: what a reading command must leave as it was. */
function snapshot(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = statSync(path, { throwIfNoEntry: false });
      if (stats === undefined) continue;
      if (stats.isDirectory()) walk(path);
      else if (!path.endsWith('/.git/index')) files.set(relative(host.root, path), createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  walk(host.root);
  return files;
}

beforeAll(async () => {
  parser = await loadShellParser();
  host = makeShellHost();
  writeFileSync(join(host.home, '.gitconfig'), '[user]\n\tname = Test\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n');
  mkdirSync(join(host.cwd, 'src'));
  writeFileSync(join(host.cwd, 'src', 'a.ts'), 'export const readme = 1;\n');
  writeFileSync(join(host.cwd, '.env'), 'API_KEY=CANARY-3e1f\n');
  writeFileSync(join(host.cwd, '.gitignore'), '.env\nlink\n');
  for (const step of ['init -q', 'add README.md src .gitignore', 'commit -qm one', 'remote add origin https://example.invalid/r.git']) expect(git(step).status).toBe(0);
});

afterAll(() => host[Symbol.dispose]());

describe('R-SH-11 git reading subcommands', () => {
  it.each(ALLOWED)('%s is allow, and real git changes nothing', (command) => {
    expect(judgeShell(parser, host.snapshot(DEFAULT_CONFIG.policy), command, host.cwd).decision).toBe('allow');
    const before = snapshot();
    git(command.slice('git '.length));
    expect(snapshot()).toEqual(before);
  });

  it('reports the files the reading forms read, so a credential among them is judged', () => {
    expectAccepted('git blame HEAD -- README.md', { reads: ['README.md'] });
    expectAccepted('git cat-file -p HEAD:.env', { revisionPaths: ['.env'] });
    expectAccepted('git blame --contents notes.txt README.md', { reads: ['notes.txt', 'README.md'] });
    expectAccepted('git config --file cfg --list', { reads: ['cfg'] });
    const snap = host.snapshot(DEFAULT_CONFIG.policy);
    expect(judgeShell(parser, snap, 'git cat-file -p HEAD:.env', host.cwd).decision).toBe('deny');
    expect(judgeShell(parser, snap, 'git config --file ~/.ssh/id_rsa --list', host.cwd).decision).toBe('deny');
  });

  it.each([
    ['git tag v1', /creates a tag/],
    ['git tag --sort=refname v1', /creates a tag/],
    ['git tag -a v1 -m x', /creates/],
    ['git tag -d v1', /deletes/],
    ['git tag -v v1', /gpg/],
    ['git config user.name x', /changes the configuration/],
    ['git config --add core.pager sh', /changes the configuration/],
    ['git config --unset user.name', /changes the configuration/],
    ['git config -e', /editor/],
    ['git grep --no-index API', /does not track/],
    ['git grep --untracked API', /does not track/],
    ['git grep -O readme', /pager/],
    ['git cat-file --textconv HEAD:README.md', /textconv/],
    ['git cat-file --batch', /input/],
    ['git rev-parse --parseopt', /input/],
    ['git worktree add ../wt', /not a listing form/],
    ['git worktree remove wt', /not a listing form/],
    ['git remote add up https://example.invalid/u.git', /changes the list of remotes/],
    ['git remote show origin', /contacts the remote/],
    ['git reflog expire --all', /rewrites the reflog/],
    ['git reflog delete HEAD@{0}', /rewrites the reflog/],
    ['git for-each-ref --stdin', /input/],
  ])('%s is refused (%s)', (command, why) => void expectRefused(command, undefined, why));

  it('the refused forms do the harm their reasons name, in real git', () => {
    const marker = join(host.root, 'ran-textconv');
    // A tag, a config value, a remote and a worktree are written.
    expect(git('tag v9').status).toBe(0);
    expect(git('show-ref --tags').stdout).toContain('refs/tags/v9');
    git('config core.pager "touch ran-pager"');
    expect(readFileSync(join(host.cwd, '.git', 'config'), 'utf8')).toContain('ran-pager');
    git('config --unset core.pager');
    git('worktree add -q ../wt');
    expect(existsSync(join(host.root, 'work', 'wt', 'README.md'))).toBe(true);
    // --no-index and --untracked print the ignored or untracked .env.
    expect(git('grep --no-index API_KEY').stdout).toContain('CANARY-3e1f');
    writeFileSync(join(host.cwd, 'notes.env'), 'API_KEY=CANARY-3e1f\n');
    expect(git('grep --untracked API_KEY').stdout).toContain('CANARY-3e1f');
    // --textconv runs the attributes' program.
    writeFileSync(join(host.cwd, '.git', 'info', 'attributes'), 'README.md diff=x\n');
    git(`config diff.x.textconv "sh -c 'touch ${marker}; cat \\"\\$0\\"'"`);
    git('cat-file --textconv HEAD:README.md');
    expect(existsSync(marker)).toBe(true);
    git('config --remove-section diff.x');
  });
});
