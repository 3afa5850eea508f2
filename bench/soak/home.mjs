// The soak's state directory and its daemon: a private temp ASSENT_HOME (short
// enough for the socket path) with the soak's config.json, `assent daemon run`
// started in the foreground as a child of the soak, stopped gracefully with
// `assent daemon stop` or killed -9, and CLI commands run as an operator runs
// them: piped, or in a real pseudo-terminal where one is required (a typed code).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CLI_ENTRY = join(ROOT, 'dist', 'bin', 'assent.js');
export const HOOK_ENTRY = join(ROOT, 'dist', 'bin', 'assent-hook.js');
export const UPSTREAM = join(import.meta.dirname, 'upstream.mjs');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Our environment without any ASSENT_* variable, plus the overrides. */
export function cleanEnv(overrides = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('ASSENT_') && value !== undefined) env[key] = value;
  return { ...env, NO_COLOR: '1', ...overrides };
}

/** Runs the built CLI piped; resolves with its code and output (killed after `timeoutMs`). */
export function runCli(args, env, timeoutMs = 30_000) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs the built CLI in a real terminal (node-pty): stdin and stderr are the
 * terminal, stdout goes to a file. With `typeCode`, waits for `Type <code> ` on the
 * screen and types the code back, as a person approving would.
 */
export async function runInTerminal(args, { env, dir, typeCode = false, timeoutMs = 30_000 }) {
  const { spawn: spawnPty } = await import('node-pty');
  const outFile = join(dir, `tty-${process.pid}-${Math.random().toString(36).slice(2)}.out`);
  const pty = spawnPty('/bin/sh', ['-c', 'out=$1; shift; exec "$@" > "$out"', 'sh', outFile, process.execPath, CLI_ENTRY, ...args], {
    name: 'xterm',
    cols: 200,
    rows: 50,
    cwd: ROOT,
    env: { ...env, TERM: 'xterm' },
  });
  let screen = '';
  let typed = false;
  return await new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        pty.kill('SIGKILL');
      } catch {
        // gone already
      }
    }, timeoutMs);
    pty.onData((data) => {
      screen += data;
      if (typeCode && !typed) {
        const match = /Type ([a-z]{4}) /.exec(screen);
        if (match !== null) {
          typed = true;
          pty.write(`${match[1]}\r`);
        }
      }
    });
    pty.onExit(({ exitCode }) => {
      clearTimeout(timer);
      let stdout = '';
      try {
        stdout = readFileSync(outFile, 'utf8');
        rmSync(outFile, { force: true });
      } catch {
        // no output file
      }
      resolve({ code: exitCode, stdout, screen });
    });
  });
}

/** Every audit line of the home, oldest day file first. */
export function auditLines(auditDir) {
  if (!existsSync(auditDir)) return [];
  return readdirSync(auditDir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .flatMap((name) => readFileSync(join(auditDir, name), 'utf8').split('\n').filter(Boolean))
    .map((line) => JSON.parse(line));
}

/** The soak's policy: echo allowed, erase denied, deploy and unknown shell commands ask a person. */
export function soakConfig({ upstreamLog, receiver, secretFile, caFile }) {
  return {
    notifications: false,
    web: { listen: '127.0.0.1:0' },
    servers: { soak: { command: process.execPath, args: [UPSTREAM, upstreamLog] } },
    policy: {
      default: 'allow',
      destructive: 'prompt',
      tools: { 'soak/erase': 'deny' },
      commands: {
        default: 'prompt',
        rules: [
          { match: 'echo soak-allow-*', decision: 'allow' },
          { match: 'echo soak-deny-*', decision: 'deny' },
        ],
      },
    },
    audit: { export: [{ kind: 'webhook', name: 'soak', url: receiver.url, secretFile, ca: caFile, batchSize: 100 }] },
  };
}

export class SoakHome {
  constructor() {
    this.root = mkdtempSync('/tmp/as-soak-');
    this.home = join(this.root, 'h');
    mkdirSync(this.home, { mode: 0o700 });
    this.env = cleanEnv({ ASSENT_HOME: this.home, ASSENT_NO_AUTOSPAWN: '1' });
    this.socket = join(this.home, 'daemon.sock');
    this.auditDir = join(this.home, 'audit');
    this.configFile = join(this.home, 'config.json');
    /** The running daemon: { child, pid, startedAt, stderr } */
    this.daemon = undefined;
    this.lifetimes = 0;
  }

  writeConfig(config) {
    writeFileSync(this.configFile, JSON.stringify(config, null, 2), { mode: 0o600 });
  }

  /** Starts `assent daemon run` and waits until it listens (at most 20 s). */
  async startDaemon() {
    const child = spawn(process.execPath, [CLI_ENTRY, 'daemon', 'run'], { env: this.env, stdio: ['ignore', 'ignore', 'pipe'] });
    const daemon = { child, pid: child.pid, startedAt: performance.now(), stderr: '', exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))) };
    // Kept short: the pipe is drained for the whole run, the last 16 KB kept for a report.
    child.stderr.setEncoding('utf8').on('data', (text) => (daemon.stderr = (daemon.stderr + text).slice(-16_384)));
    const deadline = performance.now() + 20_000;
    while (!daemon.stderr.includes('listening on')) {
      if (child.exitCode !== null || child.signalCode !== null || performance.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`the soak's daemon did not start: ${daemon.stderr}`);
      }
      await sleep(20);
    }
    this.daemon = daemon;
    this.lifetimes += 1;
    return daemon;
  }

  /** `assent daemon stop`, then waits for the child to exit. */
  async stopDaemonGracefully() {
    const daemon = this.daemon;
    if (daemon === undefined) return undefined;
    const stopped = await runCli(['daemon', 'stop'], this.env);
    const exit = await Promise.race([daemon.exited, sleep(20_000).then(() => undefined)]);
    if (exit === undefined) {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
      throw new Error(`assent daemon stop did not stop the daemon within 20 s: ${stopped.stdout}${stopped.stderr}`);
    }
    this.daemon = undefined;
    return { stop: stopped.code, ...exit };
  }

  /** kill -9, then waits for the child to be reaped. */
  async killDaemon() {
    const daemon = this.daemon;
    if (daemon === undefined) return undefined;
    daemon.child.kill('SIGKILL');
    const exit = await daemon.exited;
    this.daemon = undefined;
    return exit;
  }

  async cleanup({ keep = false } = {}) {
    if (this.daemon !== undefined) await this.killDaemon();
    if (!keep) rmSync(this.root, { recursive: true, force: true });
  }
}
