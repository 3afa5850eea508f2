// A real pseudo-terminal harness for the built binary. stdin and stderr are the
// PTY (what a person sees and types), stdout goes to a file so the one JSON
// report can be read apart from the screen.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import type { IPty } from 'node-pty';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const CLI_ENTRY = join(REPO_ROOT, 'dist', 'bin', 'assent.js');

export interface PtyExit {
  exitCode: number;
  signal: number | undefined;
}

export interface PtyRunOptions {
  /** File that receives the command's stdout. */
  outFile: string;
  /** When set, stderr goes to this file instead of the terminal. */
  errFile?: string;
  env?: Record<string, string>;
  cwd?: string;
}

/** The environment of a test child: ours minus ASSENT_* variables, plus overrides. */
export function ptyEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ASSENT_')) env[key] = value;
  }
  return { ...env, NO_COLOR: '1', TERM: 'xterm', ...overrides };
}

export class PtySession {
  private screenText = '';
  private readonly pty: IPty;
  readonly exited: Promise<PtyExit>;
  private done = false;

  constructor(args: string[], options: PtyRunOptions) {
    if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing; run \`npm run build\` first`);
    const redirect = options.errFile === undefined ? 'exec "$@" > "$out"' : 'exec "$@" > "$out" 2> "$err"';
    const script = `out=$1; err=$2; shift 2; ${redirect}`;
    this.pty = spawnPty('/bin/sh', ['-c', script, 'sh', options.outFile, options.errFile ?? '', process.execPath, CLI_ENTRY, ...args], {
      name: 'xterm',
      cols: 200,
      rows: 50,
      cwd: options.cwd ?? REPO_ROOT,
      env: ptyEnv(options.env),
    });
    this.pty.onData((data) => {
      this.screenText += data;
    });
    this.exited = new Promise<PtyExit>((resolve) => {
      this.pty.onExit(({ exitCode, signal }) => {
        this.done = true;
        resolve({ exitCode, signal });
      });
    });
  }

  /** Everything written to the terminal so far, raw (escape sequences included). */
  get screen(): string {
    return this.screenText;
  }

  get pid(): number {
    return this.pty.pid;
  }

  type(text: string): void {
    this.pty.write(text);
  }

  /** Waits until the screen matches `pattern`; fails with the screen so far. */
  async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
    const started = performance.now();
    for (;;) {
      const match = this.screenText.match(pattern);
      if (match) return match;
      if (this.done) throw new Error(`process exited before ${pattern} appeared; screen:\n${this.screenText}`);
      if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${pattern}; screen:\n${this.screenText}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits for the preview and returns its challenge. */
  async challenge(): Promise<string> {
    const match = await this.waitFor(/"RUN ([0-9a-f]{8})"/);
    return match[1] as string;
  }

  /** Waits for the exit (killing the process on timeout) and returns code and stdout report. */
  async finish(outFile: string, timeoutMs = 20_000): Promise<{ exitCode: number; stdout: string }> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill();
        reject(new Error(`process did not exit within ${timeoutMs} ms; screen:\n${this.screenText}`));
      }, timeoutMs);
    });
    try {
      const { exitCode } = await Promise.race([this.exited, timeout]);
      return { exitCode, stdout: existsSync(outFile) ? readFileSync(outFile, 'utf8') : '' };
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (this.done) return;
    try {
      this.pty.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

export interface TerminalRun {
  exitCode: number;
  /** What the command wrote to stdout (a file, apart from the screen). */
  stdout: string;
  /** What the terminal showed (stderr and echoed input). */
  screen: string;
}

/**
 * Runs the built CLI in a real terminal, as an operator would. With `typeCode`
 * it waits for `Type <code> …` on the screen and types the code back.
 */
export async function runInTerminal(args: string[], options: { env: Record<string, string>; typeCode?: boolean; timeoutMs?: number }): Promise<TerminalRun> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'assent-tty-'));
  const outFile = join(dir, 'stdout');
  const session = new PtySession(args, { outFile, env: options.env });
  try {
    if (options.typeCode === true) {
      const match = await session.waitFor(/Type ([a-z]{4}) /, options.timeoutMs ?? 10_000);
      session.type(`${match[1]}\r`);
    }
    const { exitCode, stdout } = await session.finish(outFile, options.timeoutMs ?? 20_000);
    return { exitCode, stdout, screen: session.screen };
  } finally {
    session.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `runInTerminal` shaped like the piped `runCli` result, for commands that need a terminal but no typed code. */
export async function runCliInTerminal(home: { home: string }, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = await runInTerminal(args, { env: { ASSENT_HOME: home.home } });
  return { code: run.exitCode, stdout: run.stdout, stderr: run.screen };
}
