// Issue 38, roots 5 and 6: git's work tree as git resolves it. A repository
// copied into the project can set core.worktree to any folder, and a command
// run in a subfolder of a repository acts on the whole work tree above it.
// Real git shows each harm (a file outside the cwd written or deleted), and
// assent does not allow the command.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

let parser: ShellParser;
const hosts: ShellHost[] = [];

beforeAll(async () => {
  parser = await loadShellParser();
});
afterEach(() => {
  for (const host of hosts.splice(0)) host[Symbol.dispose]();
});

function run(cwd: string, home: string, command: string): void {
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', command], { cwd, env: { PATH: '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
  if (command.startsWith('git init') && result.status !== 0) throw new Error(result.stderr);
}

function host(): ShellHost {
  const made = makeShellHost();
  hosts.push(made);
  writeFileSync(join(made.home, '.gitconfig'), '[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n');
  return made;
}

const decision = (h: ShellHost, command: string, cwd: string): string => judgeShell(parser, h.snapshot(DEFAULT_CONFIG.policy), command, cwd).decision;

describe('core.worktree moves the work tree out of the project', () => {
  it.each([
    'git -C fake restore README.md',
    'git -C fake checkout -- README.md',
    'git -C fake restore --source=HEAD README.md',
    'git -C fake stash',
    'git -C fake stash -u',
    'cd fake && git restore README.md',
  ])('%s writes outside the project in real git, and is not allow', (command) => {
    const h = host();
    const outside = join(h.root, 'outside');
    mkdirSync(outside);
    const fake = join(h.cwd, 'fake');
    mkdirSync(fake);
    writeFileSync(join(fake, 'README.md'), 'committed\n');
    run(fake, h.home, 'git init -q && git add README.md && git commit -qm one');
    run(fake, h.home, `git config core.worktree ${outside} && cp README.md ${outside}/README.md && echo changed > ${outside}/README.md`);
    expect(decision(h, command, h.cwd)).not.toBe('allow');
    run(h.cwd, h.home, command);
    expect(readFileSync(join(outside, 'README.md'), 'utf8')).not.toBe('changed\n');
  });
});

describe('git acts on the whole work tree, not only beneath the cwd', () => {
  it.each(['git stash', 'git stash push', 'git stash -u', 'git stash --include-untracked', 'git stash push -m wip', 'git stash -u -q'])(
    '%s in a subfolder of the repository changes files above it in real git, and is not allow',
    (command) => {
      const h = host();
      const top = join(h.root, 'work');
      run(top, h.home, 'git init -q && echo one > notes.txt && git add notes.txt && git commit -qm one');
      writeFileSync(join(top, 'notes.txt'), 'edited above the cwd\n');
      writeFileSync(join(top, 'outside.txt'), 'untracked above the cwd\n');
      expect(decision(h, command, h.cwd)).not.toBe('allow');
      run(h.cwd, h.home, command);
      expect(readFileSync(join(top, 'notes.txt'), 'utf8') !== 'edited above the cwd\n' || !existsSync(join(top, 'outside.txt'))).toBe(true);
    },
  );

  it('keeps git stash allowed at the top of the work tree, and with paths beneath the cwd', () => {
    const h = host();
    run(h.cwd, h.home, 'git init -q && git add README.md && git commit -qm one');
    expect(decision(h, 'git stash', h.cwd)).toBe('allow');
    const top = join(h.root, 'work');
    run(top, h.home, 'git init -q');
    expect(decision(h, 'git stash push -- README.md', h.cwd)).toBe('allow');
  });
});
