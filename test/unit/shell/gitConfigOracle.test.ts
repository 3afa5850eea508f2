// R-SH-12, with real git as the oracle: generated repository layouts (submodules
// nested under .git/modules, a linked worktree, include and includeIf chains,
// config.worktree) with an executing key (core.fsmonitor) placed in one file
// chosen at random. `git status` runs under `strace -f -e trace=openat`:
// every configuration file git opened is one assent inspected, and assent never
// says allow when git ran the key's program (a marker file proves it).
// GIT_ORACLE_RUNS / GIT_ORACLE_SEED override the count and the seed 33. A layout takes
// about a second to build (git submodule add), so npm test runs 40 and
// GIT_ORACLE_RUNS=500 (or 5000) runs the full counts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { compileAgentPolicy } from '../../../src/core/policy/agentPolicyConfig.js';
import { gitExecutionKeys } from '../../../src/shell/gitRepository.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { hostPathVars } from '../../../src/shell/resolvePaths.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeGitTemplate, runGit } from '../../helpers/gitFixture.js';

const RUNS = Number(process.env.GIT_ORACLE_RUNS ?? 40);
const SEED = Number(process.env.GIT_ORACLE_SEED ?? 33);
const HAS_STRACE = spawnSync('strace', ['-V']).status === 0;

interface Layout {
  submodules: number;
  nested: boolean;
  worktree: boolean;
  includes: number;
  includeIf: boolean;
  worktreeConfig: boolean;
  /** Which config file gets the executing key, as an index into the files the layout has. */
  keyIn: number;
  runInWorktree: boolean;
}

const layout: fc.Arbitrary<Layout> = fc.record({
  submodules: fc.integer({ min: 0, max: 2 }),
  nested: fc.boolean(),
  worktree: fc.boolean(),
  includes: fc.integer({ min: 0, max: 3 }),
  includeIf: fc.boolean(),
  worktreeConfig: fc.boolean(),
  keyIn: fc.nat(),
  runInWorktree: fc.boolean(),
});

let parser: ShellParser;
let root: string;
let template: string;
const home = (): string => join(root, 'home');
const ENV = (): NodeJS.ProcessEnv => ({ PATH: '/usr/bin:/bin', HOME: home(), GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' });

function git(cwd: string, ...args: string[]): void {
  runGit(cwd, ENV(), ...args);
}

beforeAll(async () => {
  parser = await loadShellParser();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-gitcfg-')));
  template = makeGitTemplate(root, home(), ENV(), '[protocol "file"]\n\tallow = always\n');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

let made = 0;

/** Builds the layout; returns the directory git runs in, the config files it has, and where the marker lands. */
function build(l: Layout): { cwd: string; files: string[]; marker: string } {
  made += 1;
  const repo = join(root, `r${made}`);
  git(root, 'clone', '-q', template, repo);
  const files = [join(repo, '.git', 'config')];
  for (let i = 0; i < l.submodules; i += 1) {
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', template, `sub${i}`);
    files.push(join(repo, '.git', 'modules', `sub${i}`, 'config'));
    if (l.nested && i === 0) {
      const sub = join(repo, `sub${i}`);
      git(sub, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', template, 'inner');
      files.push(join(repo, '.git', 'modules', `sub${i}`, 'modules', 'inner', 'config'));
    }
  }
  if (l.submodules > 0) git(repo, 'commit', '-qm', 'subs');
  let from = join(repo, '.git', 'config');
  for (let i = 0; i < l.includes; i += 1) {
    const target = join(repo, '.git', `level${i}.inc`);
    writeFileSync(target, '');
    spawnSync('git', ['config', '--file', from, l.includeIf && i === 0 ? `includeIf.gitdir:${repo}/.path` : 'include.path', target], { env: ENV() });
    files.push(target);
    from = target;
  }
  let cwd = repo;
  if (l.worktree) {
    const wt = join(root, `w${made}`);
    git(repo, 'worktree', 'add', '-q', wt);
    if (l.worktreeConfig) {
      git(repo, 'config', 'extensions.worktreeConfig', 'true');
      const wtConfig = join(repo, '.git', 'worktrees', `w${made}`, 'config.worktree');
      writeFileSync(wtConfig, '');
      if (l.runInWorktree) files.push(wtConfig);
    }
    if (l.runInWorktree) cwd = wt;
  }
  const marker = join(root, `ran-${made}`);
  const keyFile = files[l.keyIn % files.length] as string;
  spawnSync('git', ['config', '--file', keyFile, 'core.fsmonitor', `touch ${marker}; false`], { env: ENV() });
  // A changed file, so status asks the monitor.
  writeFileSync(join(cwd, 'README.md'), '# changed\n');
  return { cwd, files, marker };
}

/** The configuration files real git opened (successfully) while it ran `git status`. */
function opened(cwd: string): string[] {
  const trace = join(root, `trace-${made}`);
  spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat', '-o', trace, 'git', 'status', '--porcelain'], { cwd, env: ENV(), stdio: 'ignore' });
  const text = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
  const files = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /openat\([^,]+, "([^"]+)", [^)]*\) = (\d+)/.exec(line);
    if (match === null) continue;
    const path = match[1] as string;
    if (/(\/config|\/config\.worktree|\.inc|\/\.gitconfig|\/git\/config)$/.test(path)) files.add(path.startsWith('/') ? path : join(cwd, path));
  }
  return [...files];
}

describe.skipIf(!HAS_STRACE)('R-SH-12 git configuration, with real git under strace as the oracle', () => {
  it(`${RUNS} generated layouts: git opens no config assent did not inspect, and nothing that ran is allowed`, { timeout: 600_000 }, () => {
    const snapshot = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: home() }, join(home(), '.assent')));
    const trusted = new Set([join(home(), '.gitconfig'), join(home(), '.config', 'git', 'config'), '/etc/gitconfig']);
    const uninspected: string[] = [];
    const unsound: string[] = [];
    let ran = 0;
    for (const l of fc.sample(layout, { seed: SEED, numRuns: RUNS })) {
      const { cwd, marker } = build(l);
      const inspected = new Set(gitExecutionKeys(cwd, home(), { recurses: true }).configs.map((f) => realpathSync.native(dirname(f)) + f.slice(dirname(f).length)));
      const verdict = judgeShell(parser, snapshot, 'git status --porcelain', cwd);
      for (const file of opened(cwd)) {
        const real = existsSync(file) ? realpathSync(file) : file;
        if (!inspected.has(real) && !trusted.has(real)) uninspected.push(`${JSON.stringify(l)}: ${real}`);
      }
      if (existsSync(marker)) {
        ran += 1;
        if (verdict.decision === 'allow') unsound.push(JSON.stringify(l));
      }
      rmSync(join(root, `r${made}`), { recursive: true, force: true });
      rmSync(join(root, `w${made}`), { recursive: true, force: true });
    }
    expect(uninspected).toEqual([]);
    expect(unsound).toEqual([]);
    // The oracle is not vacuous: git ran the monitor in many layouts.
    expect(ran).toBeGreaterThan(RUNS / 4);
  });
});
