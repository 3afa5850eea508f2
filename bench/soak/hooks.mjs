// The soak's agents: the built hook (dist/bin/assent-hook.js) run as Claude Code,
// Codex and Gemini CLI run it, one event on stdin, with their event shapes (see
// test/helpers/hook.ts). Each call is a unique shell command whose words say what
// the policy or the person will decide: `echo soak-allow-K` (allowed by a rule),
// `echo soak-deny-K` (denied by a rule), `echo soak-ask-yes-K` / `soak-ask-no-K`
// (asks a person; the soak's approver approves the first and denies the second).
// The driver acts as the agent: only when the hook answers allow does it "run" the
// command, by appending `K` to the effects file, and then sends the after-event.
import { spawn } from 'node:child_process';
import { openSync, writeSync } from 'node:fs';
import { HOOK_ENTRY, sleep } from './home.mjs';

const AGENTS = ['claude-code', 'codex', 'gemini'];

/** The before-event of one shell command, shaped as each agent sends it. */
export function shellEvent(agent, command, sequence) {
  if (agent === 'gemini') {
    return { session_id: 'soak-gemini', transcript_path: '/tmp/t.json', cwd: '/tmp', hook_event_name: 'BeforeTool', timestamp: new Date().toISOString(), tool_name: 'run_shell_command', tool_input: { command } };
  }
  return {
    session_id: `soak-${agent}`,
    transcript_path: '/tmp/t.jsonl',
    cwd: '/tmp',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: agent === 'codex' ? { command } : { command, description: 'soak' },
    tool_use_id: `toolu_soak_${sequence}`,
  };
}

function afterEvent(agent, before) {
  if (agent === 'gemini') return { ...before, hook_event_name: 'AfterTool', tool_response: { llmContent: 'ok' } };
  return { ...before, hook_event_name: 'PostToolUse', tool_response: 'ok' };
}

export function runHook(args, event, env, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [HOOK_ENTRY, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(event));
  });
}

/** The decision and the reason code of a before-hook answer in either agent shape. */
export function answerOf(stdout) {
  // Codex's allow is exit 0 with nothing on stdout.
  if (stdout.trim() === '') return { decision: 'allow', reason: '' };
  let raw;
  try {
    raw = JSON.parse(stdout);
  } catch {
    return { decision: 'unreadable', reason: stdout.slice(0, 200) };
  }
  const specific = raw.hookSpecificOutput;
  const decision = String(specific === undefined ? raw.decision : specific.permissionDecision);
  const reason = String(specific === undefined ? (raw.reason ?? '') : (specific.permissionDecisionReason ?? ''));
  return { decision, reason };
}

/** `consent_denied`, `policy`, `unavailable` … from "assent refused claude/Bash: consent_denied (approval x)…". */
export function reasonCode(reason) {
  return /^assent (?:[a-z]+ )+\S+: ([a-z_]+)/.exec(reason)?.[1] ?? (reason === '' ? '' : 'other');
}

/**
 * Runs `workers` agents until `signal` aborts, each pausing `pauseMs` between calls.
 * `mix` weighs the kinds of call. Returns the calls, each { k, agent, kind, command,
 * toolInput, toolUseId, at, ms, code, decision, reason, ran }.
 */
export function driveHooks({ env, effectsFile, workers, pauseMs, mix, signal, hookTimeoutMs = 180_000 }) {
  const effects = openSync(effectsFile, 'a');
  const calls = [];
  const kinds = Object.entries(mix).flatMap(([kind, weight]) => Array.from({ length: weight }, () => kind));
  let sequence = 0;
  const started = performance.now();
  const worker = async (index) => {
    while (!signal.aborted) {
      const k = sequence++;
      const agent = AGENTS[k % AGENTS.length];
      const kind = kinds[(k * 7 + index) % kinds.length];
      const command = `echo soak-${kind}-${k}`;
      const event = shellEvent(agent, command, k);
      const call = { k, agent, kind, command, toolInput: event.tool_input, toolUseId: event.tool_use_id, at: (performance.now() - started) / 1000 };
      calls.push(call);
      const t0 = performance.now();
      const result = await runHook([agent], event, env, hookTimeoutMs);
      call.ms = Math.round(performance.now() - t0);
      call.code = result.code;
      const answer = answerOf(result.stdout);
      call.decision = answer.decision;
      call.reason = answer.decision === 'allow' ? '' : reasonCode(answer.reason);
      if (call.reason === 'other') call.text = answer.reason.slice(0, 300);
      call.ran = false;
      call.endedAt = performance.now();
      if (answer.decision === 'allow') {
        // The agent runs the command: its one effect.
        writeSync(effects, `${k}\n`);
        call.ran = true;
        // Its end, as the agent reports it: an allowed call left without one would get a `no_outcome` line
        // hooks.timeoutSeconds (110 s) later, after the soak has settled.
        call.after = (await runHook([agent, '--after'], afterEvent(agent, event), env, 30_000)).code;
      }
      if (pauseMs > 0) await sleep(pauseMs);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  return { calls, done };
}
