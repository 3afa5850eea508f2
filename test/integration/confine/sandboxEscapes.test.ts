// R-SH-14: the sandbox of a confined command, attacked from inside. Real
// bwrap, real npm, a real daemon: a project's `npm test` runs a hostile script
// (hostile.mjs) through the built `assent confine`, and every attempt is
// checked from outside afterwards — while the project's own files stay
// writable and nothing is left behind in the person's repository.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssentError } from '../../../src/core/base/errors.js';
import { buildSandboxProfile, type SandboxProfileOptions } from '../../../src/exec/confine/sandboxProfile.js';
import { sandboxStatus } from '../../../src/exec/confine/sandboxRun.js';
import { resolveStatePaths } from '../../../src/state/statePaths.js';
import { repositoryLocation } from '../../../src/shell/gitRepository.js';
import { CLI_ENTRY, REPO_ROOT, cleanEnv, processesForHome, processesWithEnv, requireBuiltCli } from '../../helpers/daemon.js';
import { PtySession } from '../../helpers/pty.js';

const CANARY = 'CANARY-7f3a9c';
const STDOUT_MARK = 'HOSTILE-STDOUT-REACHED-THE-CALLER';
const MARK = `confine-${process.pid}-${Date.now()}`;

interface Results {
  [attempt: string]: { ok: boolean; detail: string };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What `assent confine` and the daemon hand the profile: git's own discovery. */
const locateRepository: SandboxProfileOptions['locateRepository'] = repositoryLocation;

/** The fixture: a home, assent's state with a running daemon, two listening servers, and the projects. */
let base: string;
let home: string;
let assentHome: string;
let daemon: ChildProcess;
let tcp: net.Server;
let other: net.Server;
let tcpConnections = 0;
let otherConnections = 0;
const children = new Set<ChildProcess>();

function git(cwd: string, ...args: string[]): string {
  const run = spawnSync('git', ['-c', 'user.name=Person', '-c', 'user.email=person@example.com', ...args], { cwd, encoding: 'utf8', env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

function put(file: string, text: string): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
}

function runEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return cleanEnv({ HOME: home, ASSENT_HOME: assentHome, ...extra });
}

/** The built CLI from `cwd`, collecting its output. */
function runCli(cwd: string, args: string[], env: NodeJS.ProcessEnv = runEnv(), timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

interface ProjectLayout {
  /** Files the project holds before the run (relative path → content), committed. */
  files: Record<string, string>;
  /** Gate files the hostile script writes. */
  gateWrites: string[];
  renames: [string, string][];
  removes: string[];
  /** Files holding the canary that the hostile script tries to read (.env, .env.local and these). */
  secretReads?: string[];
  /** Nested repositories (relative paths), each with one commit. */
  nestedRepos?: string[];
  gitConfig?: [string, string][];
}

/** A git project whose `npm test` is the hostile script, everything committed. */
function makeProject(name: string, layout: ProjectLayout): string {
  const dir = join(base, name);
  mkdirSync(dir);
  git(dir, 'init', '-q');
  for (const [key, value] of layout.gitConfig ?? []) git(dir, 'config', key, value);
  put(join(dir, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', private: true, scripts: { test: 'node hostile.mjs' } })}\n`);
  copyFileSync(join(import.meta.dirname, 'hostile.mjs'), join(dir, 'hostile.mjs'));
  put(join(dir, 'src', 'index.js'), 'module.exports = 1;\n');
  put(join(dir, '.env'), `API_TOKEN=${CANARY}\n`);
  put(join(dir, '.env.local'), `SECRET=${CANARY}\n`);
  put(join(dir, '.env.example'), 'API_TOKEN=\n');
  for (const [file, text] of Object.entries(layout.files)) put(join(dir, file), text);
  for (const nested of layout.nestedRepos ?? []) {
    const repo = join(dir, nested);
    mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q');
    put(join(repo, 'lib.js'), 'module.exports = 2;\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'lib');
  }
  const targets = {
    home,
    assentHome,
    assentSocket: join(assentHome, 'daemon.sock'),
    otherSocket: join(base, 'other', 's.sock'),
    outside: join(base, 'outside.txt'),
    canary: CANARY,
    stdoutMark: STDOUT_MARK,
    mark: MARK,
    daemonPid: daemon.pid,
    agentPid: process.pid,
    tcpPort: (tcp.address() as net.AddressInfo).port,
    gateWrites: layout.gateWrites,
    renames: layout.renames,
    removes: layout.removes,
    secretReads: ['.env', '.env.local', ...(layout.secretReads ?? [])],
  };
  put(join(dir, 'targets.json'), `${JSON.stringify(targets, null, 2)}\n`);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'the project');
  return dir;
}

/** What each watched path holds (undefined: absent). */
function snapshot(paths: string[]): Map<string, string | undefined> {
  return new Map(paths.map((path) => [path, existsSync(path) ? (spawnSync('cat', [path]).stdout?.toString() ?? '<dir>') : undefined]));
}

function watched(dir: string, layout: ProjectLayout): string[] {
  return [
    join(home, '.bashrc'),
    join(home, '.gitconfig'),
    join(base, 'outside.txt'),
    join(dir, '.git', 'config'),
    join(dir, '.git', 'hooks', 'pre-commit'),
    ...layout.gateWrites.map((file) => join(dir, file)),
    ...layout.renames.flatMap(([from, to]) => [join(dir, from), join(dir, to)]),
    ...layout.removes.map((file) => join(dir, file)),
  ];
}

function porcelain(dir: string): string[] {
  return git(dir, 'status', '--porcelain', '--ignored', '--untracked-files=all').split('\n').filter(Boolean).sort();
}

/** Every escape failed, seen from inside (the script's own record) and from outside (the file system, the servers, the daemon). */
function expectContained(dir: string, layout: ProjectLayout, before: Map<string, string | undefined>, run: { code: number | null; stdout: string }, tty: boolean): void {
  const resultsFile = join(dir, 'src', 'results.json');
  expect(existsSync(resultsFile), `no results; the run printed:\n${run.stdout}`).toBe(true);
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as Results;
  // Starting the sleep works (it is checked from outside below); git status must work.
  const escaped = Object.entries(results).filter(([name, result]) => name !== 'git status' && name !== 'leave a process running' && result.ok);
  expect(escaped, JSON.stringify(results, null, 2)).toEqual([]);
  // Each attempt failed for the sandbox's reason, not by accident.
  const reason = (name: string): string => results[name]?.detail ?? 'not attempted';
  expect(reason('write ~/.bashrc')).toBe('EROFS');
  expect(reason('write outside the repository')).toBe('EROFS');
  expect(reason('write .git/config')).toBe('EROFS');
  expect(reason('read ~/.ssh/id_rsa')).toBe('ENOENT');
  expect(reason('read .env')).toMatch(/no canary/);
  expect(reason('read .env.local')).toMatch(/no canary/);
  for (const file of layout.secretReads ?? []) expect(reason(`read ${file}`)).toMatch(/no canary/);
  expect(reason('read journal.db')).toBe('ENOENT');
  expect(reason('kill the daemon')).toBe('ESRCH');
  expect(reason('open the agent /proc/PID/mem')).toBe('ENOENT');
  expect(reason('strace -p the agent')).toMatch(/No such process/);
  expect(reason("connect assent's socket")).toBe('ENOENT');
  expect(reason('connect a socket in another directory')).toBe('ECONNREFUSED');
  expect(reason('connect 127.0.0.1')).toBe('ECONNREFUSED');
  expect(reason('resolve a name')).toMatch(/EAI_AGAIN|ENOTFOUND|ECONNREFUSED/);
  for (const [from] of layout.renames) expect(reason(`rename ${from}`)).toBe('EBUSY');
  if (tty) expect(reason('TIOCSTI into the terminal')).toMatch(/not permitted/i);
  // What a test run needs still works.
  expect(results['git status']).toEqual({ ok: true, detail: 'ran' });
  expect(readFileSync(join(dir, 'src', 'out.txt'), 'utf8')).toBe('written by npm test\n');
  expect(run.stdout).toContain(STDOUT_MARK);
  expect(run.code).toBe(0);
  // From outside: nothing changed that the sandbox holds.
  const after = snapshot([...before.keys()]);
  for (const [path, content] of before) expect(after.get(path), path).toBe(content);
  expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe('# the person\'s bashrc\n');
  expect(tcpConnections).toBe(0);
  expect(otherConnections).toBe(0);
  expect(() => process.kill(daemon.pid as number, 0)).not.toThrow();
  // The detached sleep started (its pid file) and did not outlive the command.
  expect(readFileSync(join(dir, 'src', 'sleep.pid'), 'utf8')).toMatch(/^\d+\n$/);
  expect(processesWithEnv(`CONFINE_MARK=${MARK}`)).toEqual([]);
  // The repository holds only what the script was allowed to write: every placeholder is gone.
  expect(porcelain(dir)).toEqual(['?? src/out.txt', '?? src/results.json', '?? src/sleep.pid']);
}

function connectable(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const LAYOUT_A: ProjectLayout = {
  files: {
    '.vscode/tasks.json': '{"version":"2.0.0","tasks":[]}\n',
    '.mcp.json': '{"mcpServers":{}}\n',
    'packages/app/.vscode/tasks.json': '{"tasks":[]}\n',
    'packages/app/index.js': 'module.exports = 3;\n',
    '.devcontainer/devcontainer.json': '{"image":"debian"}\n',
    '.devcontainer/.env': `DB_PASSWORD=${CANARY}\n`,
    '.gitconfig.project': '[color]\n\tui = auto\n',
  },
  gitConfig: [['include.path', '../.gitconfig.project']],
  secretReads: ['.devcontainer/.env'],
  nestedRepos: ['vendor/lib'],
  gateWrites: [
    '.git/config', '.git/hooks/pre-commit', '.vscode/tasks.json', '.vscode/launch.json', '.husky/pre-commit', '.mcp.json', '.claude/settings.json',
    'packages/app/.vscode/tasks.json', 'vendor/lib/.git/config', '.gitconfig.project', '.devcontainer/devcontainer.json',
  ],
  renames: [['.vscode', '.vscode-moved'], ['.git', '.git-moved'], ['packages/app', 'packages/app-moved'], ['vendor/lib', 'vendor/lib-moved']],
  removes: ['.mcp.json'],
};

const LAYOUT_B: ProjectLayout = {
  files: {
    '.husky/pre-commit': 'npm test\n',
    '.claude/settings.json': '{"permissions":{}}\n',
  },
  gitConfig: [['core.hooksPath', '.githooks'], ['include.path', '../.gitconfig.missing']],
  gateWrites: ['.git/config', '.git/hooks/pre-commit', '.vscode/tasks.json', '.husky/pre-commit', '.mcp.json', '.claude/settings.json', '.githooks/pre-commit', '.gitconfig.missing'],
  renames: [['.husky', '.husky-moved'], ['.claude', '.claude-moved']],
  removes: ['.claude/settings.json', '.husky/pre-commit'],
};

let projectA: string;
let projectB: string;
let projectC: string;

beforeAll(async () => {
  requireBuiltCli();
  // Outside /tmp on purpose: the sandbox's private /tmp would hide a fixture there without any other rule having to hold.
  const parent = [join(REPO_ROOT, 'test-output'), join(homedir(), '.cache', 'assent-test')].find((dir) => !/^\/(var\/)?tmp(\/|$)/.test(dir));
  if (parent === undefined) throw new Error('these tests need a fixture directory outside /tmp and /var/tmp: check out the repository or set HOME elsewhere');
  mkdirSync(parent, { recursive: true });
  base = mkdtempSync(join(parent, 'confine-'));
  if (Buffer.byteLength(join(base, 'ah', 'daemon.sock')) > 100) throw new Error(`${base} is too long a path for the daemon's Unix socket`);
  home = join(base, 'home');
  assentHome = join(base, 'ah');
  put(join(home, '.bashrc'), "# the person's bashrc\n");
  put(join(home, '.gitconfig'), '[user]\n\tname = Person\n');
  put(join(home, '.ssh', 'id_rsa'), `-----BEGIN KEY----- ${CANARY}\n`);
  put(join(home, '.npmrc'), `//registry.npmjs.org/:_authToken=${CANARY}\n`);
  daemon = spawn(process.execPath, [CLI_ENTRY, 'daemon', 'run'], { env: cleanEnv({ ASSENT_HOME: assentHome, HOME: home }), stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  daemon.stderr?.setEncoding('utf8').on('data', (text: string) => (said += text));
  for (let waited = 0; !said.includes('listening on'); waited += 20) {
    if (daemon.exitCode !== null || waited > 15_000) throw new Error(`the daemon did not start: ${said}`);
    await sleep(20);
  }
  tcp = net.createServer((socket) => {
    tcpConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  mkdirSync(join(base, 'other'));
  other = net.createServer((socket) => {
    otherConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => other.listen(join(base, 'other', 's.sock'), resolve));
  projectA = makeProject('a', LAYOUT_A);
  projectB = makeProject('b', LAYOUT_B);
  projectC = makeProject('c', { files: {}, gateWrites: [], renames: [], removes: [] });
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const pid of processesWithEnv(`CONFINE_MARK=${MARK}`)) process.kill(pid, 'SIGKILL');
  daemon?.kill('SIGTERM');
  for (let waited = 0; daemon?.exitCode === null && waited < 5000; waited += 20) await sleep(20);
  for (const pid of processesForHome(assentHome)) process.kill(pid, 'SIGKILL');
  await new Promise((resolve) => tcp?.close(resolve));
  await new Promise((resolve) => other?.close(resolve));
  rmSync(base, { recursive: true, force: true });
}, 30_000);

describe('R-SH-14 a confined npm test cannot get out', () => {
  it('the premise: a read-only bind does not stop connect(), so sockets must be hidden, not only mounted read-only', async () => {
    const status = sandboxStatus();
    if (!status.available) throw new Error(status.reason);
    const run = spawnSync(status.bwrap, ['--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', process.execPath, '-e', `require('net').connect(${JSON.stringify(join(base, 'other', 's.sock'))}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(1); })`], { encoding: 'utf8' });
    expect(run.stdout.trim()).toBe('connected');
    for (let waited = 0; otherConnections === 0 && waited < 2000; waited += 20) await sleep(20);
    expect(otherConnections).toBe(1);
    otherConnections = 0;
  });

  it('R-SH-14 under a real terminal: existing gate files, a nested repository and its parents, credentials, the daemon, the agent, the network, TIOCSTI and a left-behind process all fail; src/out.txt is written', async () => {
    if (readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim() !== '0') {
      // The control: outside the sandbox, TIOCSTI works on this kernel, so its failure inside is the sandbox's doing.
      const control = spawnPty('perl', ['-e', 'my $c = "X"; ioctl(STDIN, 0x5412, $c) or die "$!\\n"; print "injected\\n"'], { name: 'xterm', cols: 80, rows: 10, cwd: base, env: { PATH: process.env['PATH'] ?? '' } });
      let screen = '';
      control.onData((data) => (screen += data));
      await new Promise<void>((resolve) => control.onExit(() => resolve()));
      expect(screen).toContain('injected');
    }
    const before = snapshot(watched(projectA, LAYOUT_A));
    const outFile = join(base, 'a.stdout');
    const session = new PtySession(['confine', '--command', 'npm test'], { outFile, cwd: projectA, env: { HOME: home, ASSENT_HOME: assentHome } });
    const { exitCode, stdout } = await session.finish(outFile, 60_000);
    expectContained(projectA, LAYOUT_A, before, { code: exitCode, stdout }, true);
    expect(await connectable(join(assentHome, 'daemon.sock'))).toBe(true);
  }, 90_000);

  it('R-SH-14 not-yet-existing gate files (.vscode, .mcp.json, the core.hooksPath folder, a file an include names) cannot be created, and existing ones cannot be moved aside', async () => {
    const before = snapshot(watched(projectB, LAYOUT_B));
    const run = await runCli(projectB, ['confine', '--command', 'npm test']);
    expectContained(projectB, LAYOUT_B, before, run, false);
    expect(existsSync(join(projectB, '.githooks'))).toBe(false);
    expect(existsSync(join(projectB, '.gitconfig.missing'))).toBe(false);
  }, 90_000);
});

describe('R-SH-14 assent confine refuses what it cannot hold', () => {
  it('a --profile digest other than the layout gives exits 126 naming both digests, without running; the right one runs', async () => {
    const env = runEnv();
    const paths = resolveStatePaths(env, home);
    // The decision's digest is the layout's alone: the daemon that decides does not see the agent's environment.
    const profile = buildSandboxProfile({ cwd: projectC, home, assentHome: paths.home, assentSocket: paths.socket, env: {}, locateRepository });
    const wrong = '0'.repeat(64);
    const refused = await runCli(projectC, ['confine', '--profile', wrong, '--command', 'touch src/ran'], env);
    expect(refused.code).toBe(126);
    expect(refused.stderr).toContain(wrong);
    expect(refused.stderr).toContain(profile.digest);
    expect(refused.stderr).toMatch(/layout changed since the decision/);
    expect(existsSync(join(projectC, 'src', 'ran'))).toBe(false);
    const ran = await runCli(projectC, ['confine', '--profile', profile.digest, '--command', 'touch src/ran && echo ran'], env);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('ran\n');
    expect(ran.code).toBe(0);
    rmSync(join(projectC, 'src', 'ran'));
  }, 60_000);

  it('without bwrap on PATH, assent confine exits 126 with the reason and sandboxStatus() says the same', async () => {
    const bin = join(base, 'bin-without-bwrap');
    mkdirSync(bin);
    for (const tool of ['node', 'bash', 'npm', 'sh']) {
      const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      symlinkSync(found, join(bin, tool));
    }
    const status = sandboxStatus({ env: { PATH: bin } });
    expect(status).toEqual({ available: false, reason: expect.stringMatching(/bwrap \(bubblewrap\) is not on PATH .*apt install bubblewrap/) });
    const run = await runCli(projectC, ['confine', '--command', 'touch src/ran'], runEnv({ PATH: bin }));
    expect(run.code).toBe(126);
    expect(run.stderr).toContain('the sandbox is not available: bwrap (bubblewrap) is not on PATH');
    expect(existsSync(join(projectC, 'src', 'ran'))).toBe(false);
    expect(sandboxStatus()).toMatchObject({ available: true, version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
  }, 30_000);

  it('the environment reaches the command without R-SH-3 variables and secrets; ASSENT_CONFINED=1', async () => {
    const run = await runCli(projectC, ['confine', '--command', 'env'], runEnv({
      GITHUB_TOKEN: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_PROFILE: 'x', MY_API_KEY: 'x', DB_PASSWORD: 'x', ANTHROPIC_API_KEY: 'x', OPENAI_ORG: 'x',
      STRIPE_SECRET: 'x', DEPLOY_KEY: 'x', SERVICE_URL: 'postgres://u:pw@db/x', GIT_DIR: '/nowhere', GIT_CONFIG_COUNT: '1', PYTHONPATH: '/x',
      BASH_ENV: '/x', ENV: '/x', PROMPT_COMMAND: 'x', LD_LIBRARY_PATH: '/nowhere', 'BASH_FUNC_ls%%': '() { echo evil; }', npm_config_script_shell: '/x',
      KEEP_ME: 'kept',
    }));
    expect(run.code).toBe(0);
    const names = run.stdout.split('\n').map((line) => line.split('=')[0]);
    for (const gone of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'AWS_PROFILE', 'MY_API_KEY', 'DB_PASSWORD', 'ANTHROPIC_API_KEY', 'OPENAI_ORG', 'STRIPE_SECRET', 'DEPLOY_KEY', 'SERVICE_URL', 'GIT_DIR', 'GIT_CONFIG_COUNT', 'PYTHONPATH', 'BASH_ENV', 'ENV', 'PROMPT_COMMAND', 'LD_LIBRARY_PATH', 'BASH_FUNC_ls%%', 'npm_config_script_shell', 'ASSENT_HOME']) {
      expect(names, gone).not.toContain(gone);
    }
    expect(run.stdout).toContain('KEEP_ME=kept\n');
    expect(run.stdout).toContain('ASSENT_CONFINED=1\n');
    expect(run.stdout).toMatch(/^PATH=/m);
    expect(run.stdout).toContain(`HOME=${home}\n`);
  }, 30_000);

  it('a gate file created where no mount can hold it (a new directory) is named after the run', async () => {
    const run = await runCli(projectC, ['confine', '--command', 'mkdir -p newdir/.vscode && echo {} > newdir/.vscode/tasks.json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`created files that make programs run, where no sandbox mount could hold them: ${join(projectC, 'newdir', '.vscode')}`);
    rmSync(join(projectC, 'newdir'), { recursive: true });
  }, 30_000);

  it('a runner killed with SIGKILL takes the sandbox with it, and its guardian removes the placeholders from the repository', async () => {
    const mark = `${MARK}-killed`;
    const runner = spawn(process.execPath, [CLI_ENTRY, 'confine', '--command', 'sleep 300'], { cwd: projectC, env: runEnv({ CONFINE_MARK: mark }), stdio: 'ignore' });
    children.add(runner);
    const placeholder = join(projectC, '.mcp.json');
    const sleeping = (): boolean =>
      processesWithEnv(`CONFINE_MARK=${mark}`).some((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('sleep');
        } catch {
          return false;
        }
      });
    for (let waited = 0; !(existsSync(placeholder) && sleeping()); waited += 20) {
      if (waited > 15_000) throw new Error('the confined sleep did not start');
      await sleep(20);
    }
    expect(porcelain(projectC)).toContain('?? .mcp.json');
    runner.kill('SIGKILL');
    for (let waited = 0; processesWithEnv(`CONFINE_MARK=${mark}`).length > 0 || existsSync(placeholder); waited += 20) {
      if (waited > 10_000) break;
      await sleep(20);
    }
    expect(processesWithEnv(`CONFINE_MARK=${mark}`)).toEqual([]);
    expect(porcelain(projectC)).toEqual([]);
  }, 40_000);
});

describe('R-SH-14 the profile', () => {
  const options = (cwd: string, extra: Partial<SandboxProfileOptions> = {}): SandboxProfileOptions => ({
    cwd, home, assentHome, env: { PATH: '/usr/bin:/bin', HOME: home }, locateRepository, ...extra,
  });
  const refusal = (build: () => unknown): AssentError => {
    try {
      build();
    } catch (error) {
      if (error instanceof AssentError) return error;
      throw error;
    }
    throw new Error('the profile was built');
  };

  it('the writable root is the work tree; nested gate items are read-only and their parents pinned; missing ones are placeholders; .env files are blanked, .env.example is not', () => {
    const profile = buildSandboxProfile(options(join(projectA, 'packages', 'app')));
    expect(profile.root).toBe(projectA);
    expect(profile.args).toEqual(expect.arrayContaining(['--bind', projectA, projectA]));
    expect(profile.readOnly).toEqual(expect.arrayContaining([
      join(projectA, '.git'), join(projectA, '.vscode'), join(projectA, '.mcp.json'), join(projectA, 'packages', 'app', '.vscode'), join(projectA, 'vendor', 'lib', '.git'),
      join(projectA, '.gitconfig.project'), join(projectA, '.devcontainer'),
    ]));
    for (const pin of [join(projectA, 'packages'), join(projectA, 'packages', 'app'), join(projectA, 'vendor'), join(projectA, 'vendor', 'lib')]) {
      expect(profile.args.join('\n')).toContain(`--bind\n${pin}\n${pin}\n`);
    }
    expect(profile.placeholders).toEqual(expect.arrayContaining([join(projectA, '.husky'), join(projectA, '.claude'), join(projectA, 'packages', 'app', '.mcp.json')]));
    expect(profile.hidden).toEqual(expect.arrayContaining([join(projectA, '.env'), join(projectA, '.env.local'), join(projectA, '.devcontainer', '.env'), join(home, '.ssh'), join(home, '.npmrc'), join(base, 'other', 's.sock'), '/run', '/tmp']));
    expect(profile.hidden).not.toContain(join(projectA, '.env.example'));
    expect(profile.args.slice(0, 7)).toEqual(['--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--new-session', '--die-with-parent']);
    expect(profile.args.slice(7, 13)).toEqual(['--ro-bind', '/', '/', '--dev', '/dev', '--proc']);
  });

  it('the digest covers the arguments and the names of the environment, not its values', () => {
    const one = buildSandboxProfile(options(projectC, { env: { PATH: '/usr/bin:/bin', HOME: home, COLOR: 'red' } }));
    expect(one.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(buildSandboxProfile(options(projectC, { env: { PATH: '/usr/bin:/bin', HOME: home, COLOR: 'blue' } })).digest).toBe(one.digest);
    expect(buildSandboxProfile(options(projectC, { env: { PATH: '/usr/bin:/bin', HOME: home, SHADE: 'red' } })).digest).not.toBe(one.digest);
    writeFileSync(join(projectC, '.envrc'), 'use nix\n');
    try {
      expect(buildSandboxProfile(options(projectC, { env: { PATH: '/usr/bin:/bin', HOME: home, COLOR: 'red' } })).digest).not.toBe(one.digest);
    } finally {
      rmSync(join(projectC, '.envrc'));
    }
  });

  it('outside any repository the root is the cwd and .git itself is held; the root is never /, the home or a directory above it', () => {
    const loose = mkdtempSync(join(tmpdir(), 'assent-confine-loose-'));
    try {
      const profile = buildSandboxProfile(options(loose));
      expect(profile.root).toBe(loose);
      expect(profile.blocked).toContain(join(loose, '.git'));
      expect(refusal(() => buildSandboxProfile(options(loose, { home: loose }))).details).toMatchObject({ reason: 'root_too_wide' });
    } finally {
      rmSync(loose, { recursive: true, force: true });
    }
    expect(refusal(() => buildSandboxProfile(options('/'))).type).toBe('forbidden');
    // The home lies inside the checkout of assent itself here: its work tree holds the home.
    expect(refusal(() => buildSandboxProfile(options(home))).details).toMatchObject({ reason: 'root_too_wide' });
  });

  it('past the walk bound, or with a symlinked gate file, it refuses rather than guess', () => {
    expect(refusal(() => buildSandboxProfile(options(projectA, { maxEntries: 5 })))).toMatchObject({ type: 'limit_reached' });
    const linked = join(base, 'linked');
    mkdirSync(join(linked, 'real'), { recursive: true });
    git(linked, 'init', '-q');
    symlinkSync('real', join(linked, '.vscode'));
    expect(refusal(() => buildSandboxProfile(options(linked))).details).toMatchObject({ reason: 'symlinked_gate', path: join(linked, '.vscode') });
  });
});
