// R-SH-3: assignment prefixes are judged by a positive list of inert variables.
// Each name on the list is checked against every program model with the real
// program as the oracle: run under strace with and without the variable, the
// program opens no other file and runs no other program. And the names the
// review found outside any list (RIPGREP_CONFIG_PATH, POSIXLY_CORRECT,
// JAVA_HOME…) make the command not allow, with real bash showing the harm.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import type { AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import { INERT_VARIABLES, isInertVariable } from '../../../src/core/policy/inertVariables.js';
import { MODELLED_PROGRAMS } from '../../../src/core/policy/programs/index.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

const HAS_STRACE = spawnSync('sh', ['-c', 'command -v strace']).status === 0;

/** A representative run of each modelled program in the fixture project; builtins run nothing of their own. */
const RUNS: Record<string, string> = {
  ls: 'ls -la', cat: 'cat README.md', head: 'head -n 1 README.md', tail: 'tail -n 1 README.md', wc: 'wc -l README.md', file: 'file README.md',
  stat: 'stat README.md', grep: 'grep -r readme .', rg: 'rg readme', sort: 'sort README.md', uniq: 'uniq README.md', diff: 'diff README.md b.txt',
  cmp: 'cmp README.md README.md', du: 'du -s .', tree: 'tree', basename: 'basename a/b', dirname: 'dirname a/b', realpath: 'realpath README.md',
  date: 'date', whoami: 'whoami', uname: 'uname -a', which: 'which ls', pwd: 'pwd', sed: 'sed -n 1p README.md', mkdir: 'mkdir -p made',
  touch: 'touch made/t', cp: 'cp README.md made/c', mv: 'mv made/c made/d', time: 'time true', timeout: 'timeout 5 true', nice: 'nice true',
  nohup: 'nohup true >/dev/null', stdbuf: 'stdbuf -oL true', find: 'find . -name "*.md"',
  git: 'git status; git log -1 --stat; git diff HEAD; git show --stat HEAD; git branch; git stash list',
  cut: 'cut -c1-3 README.md', tr: 'tr a-z A-Z < README.md', nl: 'nl README.md', paste: 'paste README.md b.txt', rev: 'rev README.md',
  tac: 'tac README.md', numfmt: 'numfmt --to=si 1000', base64: 'base64 README.md', fold: 'fold -w 3 README.md', expand: 'expand README.md',
  unexpand: 'unexpand README.md', comm: 'comm README.md b.txt', join: 'join README.md b.txt', od: 'od -c README.md', md5sum: 'md5sum README.md',
  sha1sum: 'sha1sum README.md', sha224sum: 'sha224sum README.md', sha256sum: 'sha256sum README.md', sha384sum: 'sha384sum README.md',
  sha512sum: 'sha512sum README.md', b2sum: 'b2sum README.md', cksum: 'cksum README.md', seq: 'seq 1 3', expr: 'expr 1 + 2',
  id: 'id -u', hostname: 'hostname', df: 'df -h .', pgrep: 'pgrep -x init', nproc: 'nproc', uptime: 'uptime', printenv: 'printenv HOME',
  egrep: 'egrep readme README.md', fgrep: 'fgrep readme README.md', fd: 'fd md', fdfind: 'fdfind md', jq: 'jq -n 1',
  gh: 'gh pr list', docker: 'docker ps',
};
/** Builtins and assent itself: bash runs them without reading the environment for them. */
const NO_PROGRAM = new Set(['echo', 'printf', 'true', 'false', 'cd', 'pushd', 'assent', 'test', '[', 'command', 'type']);

/** A value for each inert variable that is a legitimate setting (the path-like ones are not inert). */
function valueFor(name: string): string {
  return ({ LANG: 'C.UTF-8', LANGUAGE: 'de', TZ: 'Asia/Tokyo', TERM: 'xterm-256color', COLUMNS: '40', LINES: '10' } as Record<string, string>)[name] ?? (name.startsWith('LC_') ? 'C.UTF-8' : 'zz9canary');
}

/** Files opened and programs run, as paths, under `strace -f`, minus what is read per locale, zone and terminal. */
function traced(dir: string, script: string, env: Record<string, string>): Set<string> {
  const log = join(dir, '..', `trace-${Math.random().toString(36).slice(2)}.log`);
  spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat,execve', '-o', log, '/bin/bash', '-c', script], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  const seen = new Set<string>();
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    const match = /(?:openat\(AT_FDCWD, |execve\()"([^"]*)"/.exec(line);
    if (match === null) continue;
    const path = match[1] as string;
    if (/^\/(proc|sys|dev)\/|\/locale|zoneinfo|localtime|terminfo|gconv|\.mo$|charset\.alias/.test(path)) continue;
    seen.add(path);
  }
  rmSync(log, { force: true });
  return seen;
}

describe('R-SH-3 the inert list, checked against each model with the real program as the oracle', () => {
  let root: string;
  let project: string;
  let env: Record<string, string>;
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-inert-')));
    project = join(root, 'proj');
    mkdirSync(join(root, 'home'), { recursive: true });
    mkdirSync(project);
    env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: join(root, 'home'), GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' };
    writeFileSync(join(project, 'README.md'), 'readme\n');
    writeFileSync(join(project, 'b.txt'), 'b\n');
    spawnSync('sh', ['-c', 'git init -q && git add . && git commit -qm init'], { cwd: project, env });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('every modelled program has a run here, so no model is left unchecked', () => {
    const unchecked = MODELLED_PROGRAMS.filter((name) => RUNS[name] === undefined && !NO_PROGRAM.has(name));
    expect(unchecked).toEqual([]);
  });

  it.skipIf(!HAS_STRACE)('with each inert variable set, every model opens and runs exactly what it does without it', () => {
    const available = Object.entries(RUNS).filter(([name]) => name === 'git' || spawnSync('sh', ['-c', `command -v ${name}`], { env }).status === 0);
    const script = available.map(([, run]) => `(${run}) >/dev/null 2>&1; rm -rf made`).join('; ');
    const baseline = traced(project, script, env);
    // All of them at once: a file or program that any one of them adds shows up in the union.
    const names = [...INERT_VARIABLES.map((v) => (typeof v.name === 'string' ? v.name : 'LC_ALL')), 'LC_COLLATE', 'LC_MESSAGES'];
    const set: Record<string, string> = {};
    for (const name of names) {
      set[name] = valueFor(name);
      expect(isInertVariable(name, set[name]), name).toBe(true);
    }
    const seen = traced(project, script, { ...env, ...set });
    expect([...seen].filter((path) => !baseline.has(path))).toEqual([]);
    // Two traced runs of some seventy programs: seconds alone, more beside the rest of the suite.
  }, 120_000);

  it.skipIf(!HAS_STRACE)('the oracle can fail: a variable that moves a config file shows up as a file opened', () => {
    const script = 'git status >/dev/null 2>&1';
    const baseline = traced(project, script, env);
    writeFileSync(join(root, 'moved.gitconfig'), '[core]\n');
    const seen = traced(project, script, { ...env, GIT_CONFIG_GLOBAL: join(root, 'moved.gitconfig') });
    expect([...seen].filter((path) => !baseline.has(path))).toContain(join(root, 'moved.gitconfig'));
  });

  it('a value that names a file is not inert: TZ=/path, LANG=../x, TERM=./t, LC_ALL=:x', () => {
    for (const [name, value] of [['TZ', '/home/u/.ssh/id_rsa'], ['TZ', ':../x'], ['LANG', '../x'], ['TERM', './t'], ['LC_ALL', '/tmp/l']] as const) {
      expect(isInertVariable(name, value), `${name}=${value}`).toBe(false);
    }
    expect(isInertVariable('TZ')).toBe(false);
  });
});

describe('R-SH-3 names off the list make the command not allow (the review\'s root 4)', () => {
  let host: ShellHost;
  let parser: ShellParser;
  let snapshot: AgentPolicySnapshot;
  beforeAll(async () => {
    host = makeShellHost();
    parser = await loadShellParser();
    snapshot = host.snapshot(DEFAULT_CONFIG.policy);
  });
  afterAll(() => host[Symbol.dispose]());
  const decide = (command: string): string => judgeShell(parser, snapshot, command, host.cwd).decision;

  it.each([
    'RIPGREP_CONFIG_PATH=rgrc rg hi',
    'RIPGREP_CONFIG_PATH=./rgrc rg -n hi src',
    'export RIPGREP_CONFIG_PATH=rgrc; rg hi',
    'JAVA_HOME=./fakejdk ls',
    'JAVA_HOME=./fakejdk mvn --version',
    'GREP_OPTIONS=--include=.env grep -r KEY .',
    'LESSOPEN="|sh x" cat README.md',
    'TMPDIR=.. sort README.md',
    'TZ=/home/u/.ssh/id_rsa date',
    'LC_ALL=../x sort README.md',
    'FOO=1 ls',
    'declare -x FOO=1; ls',
    'export x=1; ls',
    'RIPGREP_CONFIG_PATH=rgrc; rg hi',
    'read -r RIPGREP_CONFIG_PATH < f; rg hi',
    'for RIPGREP_CONFIG_PATH in rgrc; do rg hi; done',
  ])('%s is not allow', (command) => {
    expect(decide(command)).not.toBe('allow');
  });

  it.each([
    'LC_ALL=C sort README.md',
    'LANG=C.UTF-8 grep -n readme README.md',
    'TZ=UTC date',
    'NO_COLOR=1 ls',
    'COLUMNS=80 ls -C',
    'TERM=dumb ls',
    'GIT_PAGER=cat git log',
    'PAGER=cat git log -1',
    'x=1; ls',
    'for f in a b; do wc -l README.md; done',
    'cd build && ls',
    'i=0; LC_ALL=C sort README.md',
  ])('%s stays allow', (command) => {
    expect(decide(command)).toBe('allow');
  });

  it('POSIXLY_CORRECT=1 cp README.md -t . ../out writes ../out in real bash, and the non-permuting parse sees it', () => {
    const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'assent-posix-')));
    try {
      const proj = join(scratch, 'proj');
      mkdirSync(proj);
      writeFileSync(join(proj, 'README.md'), 'x\n');
      mkdirSync(join(scratch, 'out'));
      spawnSync('/bin/bash', ['-c', 'POSIXLY_CORRECT=1 cp README.md -t . ../out'], { cwd: proj });
      expect(existsSync(join(scratch, 'out', 'README.md'))).toBe(true);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    const verdict = judgeShell(parser, snapshot, 'POSIXLY_CORRECT=1 cp README.md -t . ../out', host.cwd);
    expect(verdict.decision).not.toBe('allow');
    expect(verdict.parts.map((p) => p.text)).toContain('write ../out');
    // Without it, getopt permutes: -t . is the target, and ../out a source read.
    expect(judgeShell(parser, snapshot, 'cp README.md -t . build', host.cwd).decision).toBe('allow');
    expect(decide('POSIXLY_CORRECT=1 cp README.md build/x')).toBe('allow');
  });
});
