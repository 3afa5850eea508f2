// Runs the built agent hook (`dist/bin/assent-hook.js`) as an agent would: one
// event on stdin, answer on stdout, a reason on stderr, an exit code.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, requireBuiltCli, type CliResult } from './daemon.js';

export const HOOK_ENTRY = join(REPO_ROOT, 'dist', 'bin', 'assent-hook.js');

/** The event a Claude Code / Codex PreToolUse or Gemini BeforeTool hook gets for a shell command, as observed. */
export function shellEvent(agent: 'claude-code' | 'codex' | 'gemini', command: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  if (agent === 'gemini') {
    return { session_id: 'gem-session', transcript_path: '/tmp/t.json', cwd: '/work/project', hook_event_name: 'BeforeTool', timestamp: '2026-01-01T00:00:00Z', tool_name: 'run_shell_command', tool_input: { command }, ...extra };
  }
  return {
    session_id: `${agent}-session`,
    transcript_path: '/tmp/t.jsonl',
    cwd: '/work/project',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: agent === 'codex' ? { command } : { command, description: 'run it' },
    tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`,
    ...extra,
  };
}

/** Runs `assent-hook.js ARGS` with `input` on stdin (a string, or an event serialized as JSON). */
export function runHook(args: string[], input: string | Record<string, unknown>, env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<CliResult & { ms: number }> {
  requireBuiltCli();
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HOOK_ENTRY, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
    // The hook stops reading an oversized event: the rest of our write then fails, which is fine.
    child.stdin.on('error', () => undefined);
    child.stdin.end(typeof input === 'string' ? input : JSON.stringify(input));
  });
}

/** The decision and reason of a before-hook answer in either agent shape. */
export function answerOf(stdout: string): { decision: string; reason: string; raw: Record<string, unknown> } {
  // Codex's allow is exit 0 with nothing on stdout (Codex shows a JSON allow as a failed hook).
  if (stdout === '') return { decision: 'allow', reason: '', raw: {} };
  const raw = JSON.parse(stdout) as Record<string, unknown>;
  const specific = raw['hookSpecificOutput'] as Record<string, unknown> | undefined;
  if (specific !== undefined) return { decision: String(specific['permissionDecision']), reason: String(specific['permissionDecisionReason']), raw };
  return { decision: String(raw['decision']), reason: String(raw['reason']), raw };
}
