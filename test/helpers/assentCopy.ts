// A second installation of the built assent in a temp dir (dist/ copied,
// node_modules linked), so a test can give it a hook entry of its own: a
// stand-in for dist/bin/assent-hook.js that answers every event in the agent's
// format as the daemon answers the doctor canary, or none at all.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, REPO_ROOT, requireBuiltCli, type CliResult } from './daemon.js';

/** Denies every event with the canary's reason: Claude Code / Codex deny JSON, Gemini CLI's, exit 0. */
export const STAND_IN_HOOK = `
let input = '';
process.stdin.setEncoding('utf8').on('data', (c) => (input += c)).on('end', () => {
  const reason = 'assent doctor canary (stand-in hook): denied';
  const answer = process.argv[2] === 'gemini'
    ? { decision: 'deny', reason }
    : { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
  process.stdout.write(JSON.stringify(answer));
});
`;

export interface AssentCopy {
  root: string;
  cliEntry: string;
  hookEntry: string;
  /** Runs this copy's CLI with exactly `env` (build it with cleanEnv). */
  run(args: string[], env: NodeJS.ProcessEnv, options?: { cwd?: string; input?: string }): Promise<CliResult>;
  remove(): void;
}

/** Copies dist/ into a temp dir; `hook` is the hook entry's source, or null for a copy without one. */
export function makeAssentCopy(hook: string | null = STAND_IN_HOOK): AssentCopy {
  requireBuiltCli();
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-copy-')));
  cpSync(join(REPO_ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  const cliEntry = join(root, 'dist', 'bin', 'assent.js');
  const hookEntry = join(root, 'dist', 'bin', 'assent-hook.js');
  rmSync(hookEntry, { force: true });
  if (hook !== null) writeFileSync(hookEntry, hook);
  return {
    root,
    cliEntry,
    hookEntry,
    run: (args, env, options = {}) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [cliEntry, ...args], { env, cwd: options.cwd ?? root, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
        child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('error', reject);
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr });
        });
        child.stdin.on('error', () => undefined);
        child.stdin.end(options.input ?? '');
      }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The environment of an agent-settings test: no inherited agent or assent locations, the given HOME and ASSENT_HOME. */
export function agentEnv(home: string, assentHome: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = cleanEnv({ HOME: home, ASSENT_HOME: assentHome, ...extra });
  for (const name of ['CODEX_HOME', 'CLAUDE_CONFIG_DIR', 'GEMINI_CLI_HOME']) if (!(name in extra)) delete env[name];
  return env;
}
