// R-SH-13, with real git as the oracle: for each hook-running form the git model
// allows, each hook name, with and without --no-verify, in .git/hooks, in a
// core.hooksPath folder (husky's `.husky/_`) and in a linked worktree, a real
// git run that ran the hook is never `allow`; and one that ran none is `allow`
// unless the hook is one git runs only on conditions the words do not show.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { compileAgentPolicy } from '../../../src/core/policy/agentPolicyConfig.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { hostPathVars } from '../../../src/shell/resolvePaths.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeGitTemplate, runGit } from '../../helpers/gitFixture.js';

const HOOKS = [
  'pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'post-rewrite', 'post-checkout', 'post-merge', 'pre-merge-commit',
  'reference-transaction', 'post-index-change', 'pre-auto-gc', 'pre-push', 'pre-rebase',
];
/** Hooks git runs only on conditions the command's words do not show: assent counts them, git may not run them. */
const CONDITIONAL = new Set(['pre-auto-gc', 'post-index-change']);

/** Each form with what it needs first: a changed file, a branch to switch to. */
const FORMS: readonly { command: string; prepare?: 'change' | 'touch' }[] = [
  { command: 'git commit -m x --allow-empty' },
  { command: 'git commit --no-verify -m x --allow-empty' },
  { command: 'git commit -n -m x --allow-empty' },
  { command: 'git commit -am x', prepare: 'change' },
  { command: 'git commit --amend -m y' },
  { command: 'git checkout -b feat' },
  { command: 'git switch -c feat2' },
  { command: 'git branch newb' },
  { command: 'git branch' },
  { command: 'git add README.md', prepare: 'change' },
  { command: 'git status', prepare: 'touch' },
  { command: 'git stash', prepare: 'change' },
  { command: 'git log' },
  { command: 'git diff', prepare: 'touch' },
  { command: 'git show' },
  { command: 'git blame README.md', prepare: 'touch' },
  { command: 'git describe --always --dirty', prepare: 'touch' },
  { command: 'git ls-files -m', prepare: 'touch' },
  { command: 'git grep r', prepare: 'touch' },
  { command: 'git stash list', prepare: 'touch' },
  { command: 'git rev-parse HEAD', prepare: 'touch' },
];

/** npm test checks every pair in .git/hooks and every other pair elsewhere; HOOK_ORACLE_FULL=1 (and the bench's run) checks all. */
const FULL = process.env.HOOK_ORACLE_FULL === '1';

type Where = 'hooks' | 'hooksPath' | 'worktree';

let parser: ShellParser;
let root: string;
let template: string;
let cases = 0;
const home = (): string => join(root, 'home');

const ENV = (): NodeJS.ProcessEnv => ({ PATH: '/usr/bin:/bin', HOME: home(), GIT_CONFIG_NOSYSTEM: '1' });

function git(cwd: string, ...args: string[]): void {
  runGit(cwd, ENV(), ...args);
}

beforeAll(async () => {
  parser = await loadShellParser();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-hooks-')));
  template = makeGitTemplate(root, home(), ENV(), '[gc]\n\tauto = 0\n');
  git(template, 'branch', 'other');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh repository with one executable hook that leaves a marker; returns the directory to run in and the marker. */
function layout(hook: string, where: Where): { cwd: string; marker: string } {
  cases += 1;
  const repo = join(root, `r${cases}`);
  cpSync(template, repo, { recursive: true });
  const marker = join(root, `ran-${cases}`);
  const script = `#!/bin/sh\ntouch ${marker}\nexit 0\n`;
  let cwd = repo;
  let hooksDir = join(repo, '.git', 'hooks');
  if (where === 'hooksPath') {
    hooksDir = join(repo, '.husky', '_');
    git(repo, 'config', 'core.hooksPath', '.husky/_');
  } else if (where === 'worktree') {
    cwd = join(root, `w${cases}`);
    git(repo, 'worktree', 'add', '-q', cwd, 'other');
  }
  mkdirSync(hooksDir, { recursive: true });
  writeFileSync(join(hooksDir, hook), script, { mode: 0o755 });
  return { cwd, marker };
}

function prepare(cwd: string, how: 'change' | 'touch' | undefined): void {
  const file = join(cwd, 'README.md');
  if (how === 'change') writeFileSync(file, '# changed\n');
  if (how === 'touch') utimesSync(file, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
}

describe('R-SH-13 hooks git runs, with real git as the oracle', () => {
  const wheres: Where[] = ['hooks', 'hooksPath', 'worktree'];
  it.each(wheres)('every hook-running form and hook name, hooks in %s', { timeout: 240_000 }, (where) => {
    const snapshot = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: home() }, join(home(), '.assent')));
    const unsound: string[] = [];
    const noisy: string[] = [];
    let ran = 0;
    for (const [f, form] of FORMS.entries()) {
      for (const [h, hook] of HOOKS.entries()) {
        if (!FULL && where !== 'hooks' && (f + h) % 2 === 1) continue;
        const { cwd, marker } = layout(hook, where);
        prepare(cwd, form.prepare);
        const verdict = judgeShell(parser, snapshot, form.command, cwd);
        spawnSync('bash', ['-c', form.command], { cwd, env: { PATH: '/usr/bin:/bin', HOME: home(), GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
        const gitRan = existsSync(marker);
        if (gitRan) ran += 1;
        if (gitRan && verdict.decision === 'allow') unsound.push(`${form.command} ran ${hook}`);
        if (!gitRan && verdict.decision !== 'allow' && !CONDITIONAL.has(hook)) noisy.push(`${form.command} with ${hook}: ${verdict.decision} (${verdict.parts.map((p) => p.reason ?? '').join('; ')})`);
      }
    }
    expect(unsound).toEqual([]);
    expect(noisy).toEqual([]);
    expect(ran).toBeGreaterThan(10);
  });

  it('a husky-shaped repository keeps status, log, diff and show allowed: core.hooksPath alone runs nothing', () => {
    const repo = join(root, 'husky');
    cpSync(template, repo, { recursive: true });
    git(repo, 'config', 'core.hooksPath', '.husky/_');
    mkdirSync(join(repo, '.husky', '_'), { recursive: true });
    writeFileSync(join(repo, '.husky', '_', 'pre-commit'), '#!/bin/sh\n. "$(dirname "$0")/h"\n', { mode: 0o755 });
    writeFileSync(join(repo, '.husky', 'pre-commit'), 'npx lint-staged\n');
    // git-lfs's filters in the person's own global config name programs, and keep git status allowed.
    const lfsHome = join(root, 'lfs-home');
    mkdirSync(lfsHome);
    writeFileSync(join(lfsHome, '.gitconfig'), '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\tprocess = git-lfs filter-process\n\trequired = true\n');
    const lfs = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: lfsHome }, join(lfsHome, '.assent')));
    expect(judgeShell(parser, lfs, 'git status', repo).decision).toBe('allow');
    const snapshot = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: home() }, join(home(), '.assent')));
    for (const command of ['git status', 'git log', 'git diff', 'git show', 'git log --oneline -5', 'git diff --stat']) {
      expect(judgeShell(parser, snapshot, command, repo).decision, command).toBe('allow');
    }
    const commit = judgeShell(parser, snapshot, 'git commit -m x', repo);
    expect(commit.decision).toBe('prompt');
    expect(JSON.stringify(commit.parts)).toContain('.husky/_/pre-commit');
    expect(commit.risks?.map((r) => r.flag)).toContain('runs project code');
  });
});
