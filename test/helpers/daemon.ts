// Test fixture for anything that needs a real daemon: a private temp ASSENT_HOME
// with a short socket path, the built CLI binary, and a cleanup that stops every
// daemon started for that home (including auto-spawned, detached ones).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveStatePaths } from '../../src/state/statePaths.js';
import type { StatePaths } from '../../src/state/statePaths.js';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const CLI_ENTRY = join(REPO_ROOT, 'dist', 'bin', 'assent.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  /** The child's working directory (default: the test's). */
  cwd?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Throws a clear message when the binary was not built. */
export function requireBuiltCli(): string {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing; run \`npm run build\` before integration tests`);
  return CLI_ENTRY;
}

/** The environment of a test process: ours minus any ASSENT_* variable, plus the overrides. */
export function cleanEnv(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('ASSENT_')) env[key] = value;
  return { ...env, NO_COLOR: '1', ...overrides };
}

/** Pids of live processes whose environment names this ASSENT_HOME (Linux /proc). */
export function processesForHome(home: string): number[] {
  return processesWithEnv(`ASSENT_HOME=${home}`);
}

/** Pids of live processes (not zombies, not this one) whose environment holds `variable` (`NAME=value`), read from Linux /proc. */
export function processesWithEnv(variable: string): number[] {
  const needle = `${variable}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (!environ.includes(needle)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      if (/\) Z /.test(stat)) continue; // a zombie is already dead
      pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/** Pids of `assent daemon run` processes serving this home. */
export function daemonsForHome(home: string): number[] {
  return processesForHome(home).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').includes('daemon run');
    } catch {
      return false;
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the built CLI once and collects its output. `env` is the whole environment
 * of the child (use cleanEnv() to build one); `input` is written to stdin, which
 * is then closed. The child is killed after `timeoutMs` (default 20 s).
 */
export function runCli(args: string[], options: RunCliOptions = {}, track?: Set<ChildProcess>): Promise<CliResult> {
  requireBuiltCli();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { env: options.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'], ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
    track?.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      track?.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

export interface TempHome {
  /** The ASSENT_HOME directory (not yet created: the CLI creates it 0700). */
  home: string;
  paths: StatePaths;
  env: NodeJS.ProcessEnv;
  runCli(args: string[], options?: RunCliOptions): Promise<CliResult>;
  /** Starts `assent daemon run` in the foreground as a child and waits until it answers. */
  startDaemon(extraEnv?: NodeJS.ProcessEnv): Promise<ChildProcess>;
  /** SIGTERM, then SIGKILL, every process of this home; removes the directory. */
  cleanup(): Promise<void>;
}

/** A fresh temp state dir under /tmp, short enough for a Unix socket path. */
export function makeTempHome(): TempHome {
  requireBuiltCli();
  const root = mkdtempSync(join(tmpdir().length < 20 ? tmpdir() : '/tmp', 'as-'));
  const home = join(root, 'h');
  const env = cleanEnv({ ASSENT_HOME: home });
  const paths = resolveStatePaths(env);
  const children = new Set<ChildProcess>();

  const runCliHere = (args: string[], options: RunCliOptions = {}): Promise<CliResult> =>
    runCli(args, { ...options, env: { ...env, ...options.env } }, children);

  const startDaemon = async (extraEnv: NodeJS.ProcessEnv = {}): Promise<ChildProcess> => {
    const child = spawn(process.execPath, [CLI_ENTRY, 'daemon', 'run'], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('exit', () => children.delete(child));
    const deadline = Date.now() + 10_000;
    while (!stderr.includes('listening on')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start: ${stderr}`);
      await sleep(20);
    }
    return child;
  };

  const cleanup = async (): Promise<void> => {
    const targets = new Set<number>(processesForHome(home));
    for (const child of children) if (child.pid !== undefined && child.exitCode === null) targets.add(child.pid);
    for (const pid of targets) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    const deadline = Date.now() + 5000;
    while ([...targets].some(alive) && Date.now() < deadline) await sleep(20);
    for (const pid of targets) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rmSync(root, { recursive: true, force: true });
  };

  return { home, paths, env, runCli: runCliHere, startDaemon, cleanup };
}

/** Every audit line of a temp home, oldest day file first; none when nothing was written yet. */
export function auditLines(home: TempHome): Record<string, unknown>[] {
  if (!existsSync(home.paths.auditDir)) return [];
  return readdirSync(home.paths.auditDir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .flatMap((name) => readFileSync(join(home.paths.auditDir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The first audit line matching `predicate`, waited for up to 5 s (audit writes are batched). */
export async function waitForAudit(home: TempHome, predicate: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i += 1) {
    const found = auditLines(home).find(predicate);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no matching audit line in ${JSON.stringify(auditLines(home))}`);
}
