// Builders for exec action files in a temp dir, and a runner for the built
// binary without a terminal (pipes only).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecAction } from '../../src/core/exec/action.js';
import type { ExecReport } from '../../src/exec/report.js';
import { CLI_ENTRY, ptyEnv } from '../helpers/pty.js';

export interface ActionDir {
  dir: string;
  policy: string;
  request: string;
  sentinel: string;
  out: string;
  err: string;
  /** Lines the sentinel file holds (0 when it was never written). */
  sentinelLines(): number;
  cleanup(): void;
}

export function makeActionDir(): ActionDir {
  const dir = mkdtempSync(join(tmpdir(), 'assent-action-'));
  const sentinel = join(dir, 'sentinel');
  return {
    dir,
    policy: join(dir, 'policy.json'),
    request: join(dir, 'request.json'),
    sentinel,
    out: join(dir, 'stdout.json'),
    err: join(dir, 'stderr.txt'),
    sentinelLines: () => (existsSync(sentinel) ? readFileSync(sentinel, 'utf8').split('\n').filter(Boolean).length : 0),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An action that appends one line to the sentinel, via /bin/sh (the request chooses the shell, not assent). */
export function sentinelAction(d: ActionDir, extraArgs: string[] = [], env: Record<string, string> = {}): ExecAction {
  return { executable: '/bin/sh', cwd: d.dir, args: ['-c', `echo x >> '${d.sentinel}'`, ...extraArgs], env };
}

export function writeRequest(d: ActionDir, action: ExecAction): void {
  writeFileSync(d.request, JSON.stringify({ schemaVersion: 1, action }));
}

export function writePolicy(d: ActionDir, defaultDecision: 'ask' | 'deny', rules: Array<{ action: ExecAction; decision: string }> = []): void {
  writeFileSync(d.policy, JSON.stringify({ schemaVersion: 2, defaultDecision, rules }));
}

export interface PipedResult {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** Runs the binary with piped stdin/stdout/stderr (no terminal at all). */
export function runPiped(args: string[], options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<PipedResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], { env: ptyEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`assent ${args.join(' ')} did not exit in time`));
    }, options.timeoutMs ?? 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, elapsedMs: performance.now() - started });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Parses stdout, which must be exactly one JSON line. */
export function onlyReport(stdout: string): ExecReport {
  const lines = stdout.split('\n').filter((l) => l !== '');
  if (lines.length !== 1) throw new Error(`expected exactly one stdout line, got ${lines.length}: ${stdout}`);
  return JSON.parse(lines[0] as string) as ExecReport;
}

export const REPORT_KEYS = ['control', 'decision', 'descendantControl', 'execution', 'mode', 'reason', 'schemaVersion'];
export const EXECUTION_KEYS = ['exitCode', 'outputComplete', 'state', 'stderrBytes', 'stdoutBytes', 'termination'];
