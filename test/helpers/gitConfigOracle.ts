// R-SH-12 with real git as the oracle, shared by the unit test (500 layouts) and
// `npm run bench` (5,000). A generator builds repository layouts — submodules
// (nested ones under .git/modules), a linked worktree, include and includeIf
// chains, config.worktree under extensions.worktreeConfig — and an environment
// prefix (HOME=, XDG_CONFIG_HOME=, GIT_CONFIG_GLOBAL=, GIT_CONFIG_NOSYSTEM=,
// GIT_DIR=, GIT_CONFIG_COUNT=), then places an executing key (core.fsmonitor,
// whose program touches a marker) in one config file chosen at random, or in
// the environment itself. `git status` runs under `strace -f -e trace=openat`.
//
// Two properties are checked on every layout:
//  - every configuration file git opened is one assent inspected (its own
//    judgement) or one of the person's own files (trusted by design);
//  - assent never says allow where git ran the key's program.
//
// Building a layout with `git submodule add` takes about a second, so each of
// the few base layouts (submodule count × nesting × worktree) is built once and
// every case rewrites only the config files it varies, restoring them after.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import fc from 'fast-check';
import { DEFAULT_CONFIG } from '../../src/core/config/config.js';
import { compileAgentPolicy } from '../../src/core/policy/agentPolicyConfig.js';
import { gitExecutionKeys, type GitEnvironment } from '../../src/shell/gitRepository.js';
import { judgeShell } from '../../src/shell/judgeAction.js';
import { hostPathVars } from '../../src/shell/resolvePaths.js';
import type { ShellParser } from '../../src/shell/shellParser.js';
import { makeGitTemplate, runGit } from './gitFixture.js';

type EnvKind = 'none' | 'HOME' | 'XDG_CONFIG_HOME' | 'GIT_CONFIG_GLOBAL' | 'GIT_CONFIG_NOSYSTEM' | 'GIT_DIR' | 'GIT_CONFIG_COUNT';

export interface GitLayout {
  submodules: number;
  nested: boolean;
  worktree: boolean;
  runInWorktree: boolean;
  includes: number;
  includeIf: boolean;
  worktreeConfig: boolean;
  env: EnvKind;
  /** The prefix's path is relative to the directory git runs in (else absolute). */
  relative: boolean;
  /** With GIT_CONFIG_COUNT: the pair is the executing key itself (else a harmless key, and a file holds it). */
  keyInEnv: boolean;
  /** Which config file gets the executing key: an index into the files the layout has. */
  keyIn: number;
}

export const gitLayout: fc.Arbitrary<GitLayout> = fc.record({
  submodules: fc.integer({ min: 0, max: 2 }),
  nested: fc.boolean(),
  worktree: fc.boolean(),
  runInWorktree: fc.boolean(),
  includes: fc.integer({ min: 0, max: 3 }),
  includeIf: fc.boolean(),
  worktreeConfig: fc.boolean(),
  env: fc.constantFrom<EnvKind>('none', 'none', 'HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_DIR', 'GIT_CONFIG_COUNT'),
  relative: fc.boolean(),
  keyInEnv: fc.boolean(),
  keyIn: fc.nat(),
});

export interface GitOracleResult {
  checked: number;
  /** Layouts where git ran the key's program: the oracle is vacuous if these are few. */
  ran: number;
  /** `layout: file` for each config file git opened that assent did not inspect. */
  uninspected: string[];
  /** Layouts where git ran the program and assent said allow. */
  unsound: string[];
  /** Layouts where assent trusted a file that is not the person's own. */
  mistrusted: string[];
}

interface Base {
  repo: string;
  /** Where git runs: the repository, or its linked worktree. */
  cwds: { repo: string; worktree?: string };
  worktreeName?: string;
  /** Config files of the base with their text, restored before each case. */
  original: Map<string, string>;
}

/** Runs `runs` generated layouts from `seed` under real git in a fresh directory beneath `root`. */
export function checkGitConfigLayouts(parser: ShellParser, root: string, seed: number, runs: number): GitOracleResult {
  const home = join(root, 'home');
  const ENV: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' };
  const template = makeGitTemplate(root, home, ENV, '[protocol "file"]\n\tallow = always\n');
  const snapshot = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: home }, join(home, '.assent')));
  const own = new Set(['/etc/gitconfig', join(home, '.gitconfig'), join(home, '.config', 'git', 'config')]);
  const bases = new Map<string, Base>();
  const result: GitOracleResult = { checked: 0, ran: 0, uninspected: [], unsound: [], mistrusted: [] };

  const baseFor = (l: GitLayout): Base => {
    const name = `b${l.submodules}${l.submodules > 0 && l.nested ? 'n' : ''}${l.worktree ? 'w' : ''}`;
    const found = bases.get(name);
    if (found !== undefined) return found;
    const repo = join(root, name);
    runGit(root, ENV, 'clone', '-q', template, repo);
    for (let i = 0; i < l.submodules; i += 1) {
      runGit(repo, ENV, 'submodule', '--quiet', 'add', template, `sub${i}`);
      if (l.nested && i === 0) runGit(join(repo, `sub${i}`), ENV, 'submodule', '--quiet', 'add', template, 'inner');
    }
    if (l.submodules > 0) runGit(repo, ENV, 'commit', '-qm', 'subs');
    const base: Base = { repo, cwds: { repo }, original: new Map() };
    if (l.worktree) {
      const worktree = join(root, `${name}-wt`);
      runGit(repo, ENV, 'worktree', 'add', '-q', worktree);
      base.cwds.worktree = worktree;
      base.worktreeName = `${name}-wt`;
      writeFileSync(join(worktree, 'README.md'), '# changed\n');
    }
    // A changed file, so status asks the monitor.
    writeFileSync(join(repo, 'README.md'), '# changed\n');
    const configs = [join(repo, '.git', 'config')];
    if (l.submodules > 0) configs.push(join(repo, '.git', 'modules', 'sub0', 'config'));
    if (l.submodules > 1) configs.push(join(repo, '.git', 'modules', 'sub1', 'config'));
    if (l.submodules > 0 && l.nested) configs.push(join(repo, '.git', 'modules', 'sub0', 'modules', 'inner', 'config'));
    for (const file of configs) base.original.set(file, readFileSync(file, 'utf8'));
    bases.set(name, base);
    return base;
  };

  let made = 0;
  for (const l of fc.sample(gitLayout, { seed, numRuns: runs })) {
    made += 1;
    const base = baseFor(l);
    const created: string[] = [];
    const create = (path: string, text = ''): string => {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      created.push(path);
      return path;
    };
    try {
      const cwd = l.runInWorktree && base.cwds.worktree !== undefined ? base.cwds.worktree : base.repo;
      const files = [...base.original.keys()];
      // An include (or includeIf) chain from the repository's config.
      let from = join(base.repo, '.git', 'config');
      for (let i = 0; i < l.includes; i += 1) {
        const target = create(join(base.repo, '.git', `level${i}.inc`));
        const key = l.includeIf && i === 0 ? `[includeIf "gitdir:${base.repo}/.git"]` : '[include]';
        appendFileSync(from, `${key}\n\tpath = ${target}\n`);
        files.push(target);
        from = target;
      }
      if (base.worktreeName !== undefined && l.worktreeConfig) {
        appendFileSync(join(base.repo, '.git', 'config'), '[extensions]\n\tworktreeConfig = true\n');
        const wtConfig = create(join(base.repo, '.git', 'worktrees', base.worktreeName, 'config.worktree'));
        if (cwd !== base.repo) files.push(wtConfig);
      }
      // The environment prefix, and the files it makes git read.
      const marker = join(root, `ran-${made}`);
      const monitor = `touch ${marker}; false`;
      const env: Record<string, string> = {};
      const place = (dir: string): string => (l.relative ? relative(cwd, dir) || '.' : dir);
      if (l.env === 'HOME') {
        const dir = join(cwd, 'h');
        files.push(create(join(dir, '.gitconfig')), create(join(dir, '.config', 'git', 'config')));
        env.HOME = place(dir);
      } else if (l.env === 'XDG_CONFIG_HOME') {
        const dir = join(cwd, 'x');
        files.push(create(join(dir, 'git', 'config')));
        env.XDG_CONFIG_HOME = place(dir);
      } else if (l.env === 'GIT_CONFIG_GLOBAL') {
        const file = create(join(cwd, 'g.cfg'));
        files.push(file);
        env.GIT_CONFIG_GLOBAL = place(file);
      } else if (l.env === 'GIT_CONFIG_NOSYSTEM') {
        env.GIT_CONFIG_NOSYSTEM = '0';
      } else if (l.env === 'GIT_DIR') {
        const gitDir = cwd === base.repo ? join(base.repo, '.git') : join(base.repo, '.git', 'worktrees', base.worktreeName as string);
        env.GIT_DIR = place(gitDir);
      } else if (l.env === 'GIT_CONFIG_COUNT') {
        Object.assign(env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: l.keyInEnv ? 'core.fsmonitor' : 'color.ui', GIT_CONFIG_VALUE_0: l.keyInEnv ? monitor : 'auto' });
      }
      if (!(l.env === 'GIT_CONFIG_COUNT' && l.keyInEnv)) {
        const keyFile = files[l.keyIn % files.length] as string;
        appendFileSync(keyFile, `[core]\n\tfsmonitor = "${monitor}"\n`);
      }
      const prefix = Object.entries(env).map(([name, value]) => `${name}='${value}'`);
      const verdict = judgeShell(parser, snapshot, [...prefix, 'git status --porcelain'].join(' '), cwd);
      const keys = gitExecutionKeys(cwd, home, { recurses: true, env: env as GitEnvironment });
      const physical = (f: string): string => (existsSync(f) ? realpathSync(f) : f);
      const inspected = new Set(keys.configs.map(physical));
      for (const file of keys.personConfigs ?? []) if (!own.has(physical(file))) result.mistrusted.push(`${JSON.stringify(l)}: ${file}`);
      for (const file of opened(root, made, cwd, ENV, env)) {
        const real = physical(file);
        if (!inspected.has(real) && !own.has(real)) result.uninspected.push(`${JSON.stringify(l)}: ${real}`);
      }
      if (existsSync(marker)) {
        result.ran += 1;
        if (verdict.decision === 'allow') result.unsound.push(JSON.stringify(l));
        rmSync(marker);
      }
      result.checked += 1;
    } finally {
      for (const path of created.reverse()) rmSync(path, { force: true });
      for (const dir of ['h', 'x']) for (const top of Object.values(base.cwds)) if (top !== undefined) rmSync(join(top, dir), { recursive: true, force: true });
      for (const [file, text] of base.original) writeFileSync(file, text);
    }
  }
  return result;
}

/** The configuration files real git opened (successfully) while it ran `git status` with `env` added. */
function opened(root: string, made: number, cwd: string, ENV: NodeJS.ProcessEnv, env: Record<string, string>): string[] {
  const trace = join(root, `trace-${made}`);
  const assigns = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  spawnSync('strace', ['-f', '--seccomp-bpf', '-qq', '-e', 'trace=openat', '-o', trace, 'env', ...assigns, 'git', 'status', '--porcelain'], { cwd, env: ENV, stdio: 'ignore' });
  const text = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
  rmSync(trace, { force: true });
  const files = new Set<string>();
  for (const line of text.split('\n')) {
    const match = /openat\([^,]+, "([^"]+)", [^)]*\) = (\d+)/.exec(line);
    if (match === null) continue;
    const path = match[1] as string;
    if (/(\/config|\/config\.worktree|\.inc|\/\.gitconfig|\/git\/config|\.cfg|^config)$/.test(path)) files.add(path.startsWith('/') ? path : join(cwd, path));
  }
  return [...files];
}
