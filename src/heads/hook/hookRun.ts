// `assent hook AGENT [--after] [--timeout SECONDS]` (SPEC §17): one event in, one
// answer out. Before a call the answer is the daemon's decision; every failure
// blocks the call (R-HOOK-4): the agent's deny JSON, the same one-line reason on
// stderr, exit 2. After a call the event is reported for audit (R-HOOK-6).
import { agentToolId, parseAgentName, type AgentName } from '../../core/agent/agentAction.js';
import { AssentError } from '../../core/base/errors.js';
import { AGENT_DEFAULT_TIMEOUT_SECONDS, hookDeadlineMs, MAX_AGENT_TIMEOUT_SECONDS } from '../../core/agent/hookDeadline.js';
import { checkPrivateDir, resolveStatePaths, type StatePaths } from '../../state/statePaths.js';
import { afterAnswer, beforeAnswer, deniesWithExit2, deniesWithStderr, dialogAnswer, oneLine } from './hookAnswer.js';
import { isNotRunning, requestOnce } from './hookClient.js';
import { MAX_EVENT_BYTES, parseHookEvent, type DialogEvent, type HookMode } from './hookEvent.js';

/** What the hook prints and how it exits. Only 0 and 2: Codex and Gemini CLI run the call on any other code (R-HOOK-4). */
export interface HookOutcome {
  stdout: string;
  stderr?: string;
  exitCode: 0 | 2;
}

export interface StdinRead {
  text: string;
  /** More than MAX_EVENT_BYTES arrived; `text` is then empty. */
  oversized: boolean;
}

export interface HookDeps {
  readStdin(): Promise<StdinRead>;
  env: NodeJS.ProcessEnv;
  cwd(): string;
  /** Starts a daemon when none answers (R-D-1), once, waiting at most `waitMs` for it; default: the CLI's auto-spawn, loaded on demand. */
  startDaemon?(paths: StatePaths, env: NodeJS.ProcessEnv, waitMs: number): Promise<void>;
  /** Aborted when the agent goes away (a signal, the parent gone): the waiting call is withdrawn (R-HOOK-12). */
  withdraw?: AbortSignal;
  /** Epoch ms the hook started at, which its hard deadline counts from (R-HOOK-11); default: when runHook is called. */
  startedAt?: number;
  /** How long the daemon may take to decide or to say it filed an approval (default 20 s). */
  firstAnswerMs?: number;
  /** Added to an approval's expiry before the hook gives up waiting itself (default 5 s). */
  expiryGraceMs?: number;
  /** Writes to the hook's stderr while it runs (the waiting line); default: nowhere. */
  writeStderr?(text: string): void;
}

export const USAGE =
  'usage: assent hook claude-code|codex|gemini|opencode|kilo|copilot|qwen|droid|auggie|cline [--after] [--timeout SECONDS]   (reads one hook event on stdin; see docs/agents.md)';

const DEFAULT_FIRST_ANSWER_MS = 20_000;
const DEFAULT_EXPIRY_GRACE_MS = 5_000;
/** Nothing a hook files waits longer than hooks.timeoutSeconds (≤ 1500 s); this bounds a daemon that never says. */
const HARD_CAP_MS = 1_510_000;

export interface HookArgs {
  agent: AgentName;
  mode: HookMode;
  /** The agent's own hook timeout, as `install` wrote it on the command line (R-HOOK-11); undefined for an older install. */
  timeoutSeconds?: number;
}

/** A `--timeout` value: whole seconds, 1 up to a day. */
function parseTimeoutValue(text: string | undefined): number | undefined {
  if (text === undefined || !/^[1-9][0-9]{0,5}$/.test(text)) return undefined;
  const seconds = Number(text);
  return seconds <= MAX_AGENT_TIMEOUT_SECONDS ? seconds : undefined;
}

/** `claude-code|claude|codex|gemini|opencode|kilo|copilot|qwen|droid|auggie|cline`, an optional `--after` and `--timeout SECONDS`; anything else is a problem, named. */
export function parseHookArgs(argv: readonly string[]): HookArgs | { problem: string; agent?: AgentName } {
  const positional: string[] = [];
  const flags: string[] = [];
  let timeout: { text: string | undefined } | undefined;
  let timeouts = 0;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--timeout') {
      timeouts += 1;
      timeout = { text: argv[i + 1] };
      i += 1;
    } else if (arg.startsWith('--timeout=')) {
      timeouts += 1;
      timeout = { text: arg.slice('--timeout='.length) };
    } else if (arg.startsWith('-')) flags.push(arg);
    else positional.push(arg);
  }
  const agent = positional[0] === undefined ? undefined : parseAgentName(positional[0]);
  const withAgent = (problem: string): { problem: string; agent?: AgentName } => (agent === undefined ? { problem } : { problem, agent });
  if (positional.length === 0) return { problem: `no agent named${flags.includes('-h') || flags.includes('--help') ? ' (help is not an argument a hook run takes)' : ''}; ${USAGE}` };
  if (agent === undefined) return { problem: `unknown agent ${JSON.stringify(positional[0]?.slice(0, 40))}; ${USAGE}` };
  if (positional.length > 1) return withAgent(`unexpected argument ${JSON.stringify(positional[1]?.slice(0, 40))}; ${USAGE}`);
  // Help is for a person at a terminal; a hook run answers only its agent, so asking for it blocks like any bad argument.
  const help = flags.find((flag) => flag === '-h' || flag === '--help');
  if (help !== undefined) return withAgent(`${help} is not an argument a hook run takes; ${USAGE}`);
  const unknown = flags.find((flag) => flag !== '--after');
  if (unknown !== undefined) return withAgent(`unknown option ${JSON.stringify(unknown.slice(0, 40))}; ${USAGE}`);
  if (flags.length > 1) return withAgent(`--after given more than once; ${USAGE}`);
  if (timeouts > 1) return withAgent(`--timeout given more than once; ${USAGE}`);
  const mode: HookMode = flags.length === 1 ? 'after' : 'before';
  if (timeout === undefined) return { agent, mode };
  const seconds = parseTimeoutValue(timeout.text);
  if (seconds === undefined) {
    return withAgent(`--timeout takes the agent's hook timeout in whole seconds (1 to ${MAX_AGENT_TIMEOUT_SECONDS}), not ${JSON.stringify((timeout.text ?? '').slice(0, 40))}; run \`assent install\` again; ${USAGE}`);
  }
  return { agent, mode, timeoutSeconds: seconds };
}

/** Epoch ms by which the hook answers, whatever is pending (R-HOOK-11): the agent's timeout minus the margin, from the hook's start. */
export function hookAnswerBy(args: HookArgs, startedAt: number): number {
  return startedAt + hookDeadlineMs(args.timeoutSeconds ?? AGENT_DEFAULT_TIMEOUT_SECONDS[args.agent]);
}

/**
 * The blocking answer of a failure (R-HOOK-4): deny JSON in the agent's shape
 * (Claude Code's for an unknown agent; exit 2 blocks in every agent anyway), the
 * same reason on stderr — Codex shows the model the stderr line — and exit 2.
 */
export function failClosed(agent: AgentName | undefined, reason: string, tool?: string): HookOutcome {
  const line = oneLine(reason);
  return { stdout: `${beforeAnswer(agent ?? 'claude-code', 'deny', line, undefined, tool)}\n`, stderr: `${line}\n`, exitCode: 2 };
}

/**
 * The answer to an after-event that could not be recorded (R-HOOK-6): the call
 * already ran, so nothing blocks — the agent's neutral answer, exit 0, and one
 * stderr line saying why its audit line stays `started`.
 */
export function notRecorded(why: string): HookOutcome {
  return { stdout: `${afterAnswer()}\n`, stderr: `${oneLine(`assent: the end of this call was not recorded (${why}); its audit line stays "started".`)}\n`, exitCode: 0 };
}

function blocked(subject: string, what: string, advice: string): string {
  return `assent blocked ${subject}: ${what}. The call did not run. ${advice}`;
}

const SETUP_ADVICE = 'This is a problem of the hook, not of the call: the operator can check it with `assent doctor`.';
const HOOK_DESCRIPTORS_ADVICE =
  'The hook itself had no file descriptor left (EMFILE), so it could not ask the daemon: raise the limit of open files of the agent that runs it (`ulimit -n 4096` in the shell that starts the agent); retrying the call after that is fine.';
const DAEMON_ADVICE = 'The operator can start it with `assent daemon run` and check `assent daemon status`; retrying the call after that is fine.';
/** How a connection the daemon took ends when it never answers. */
const DROPPED = new Set(['closed', 'ECONNRESET', 'EPIPE']);
const DROPPED_ADVICE =
  'No assent daemon decided it: the daemon dropped the connection before answering, because it stopped, crashed or was killed, or because it has no file descriptor left (EMFILE; daemon.log then says so, with the fix). ' +
  DAEMON_ADVICE;

/** The reason text for a failure to get a decision, saying what the operator can do. */
function failureReason(subject: string, error: unknown): string {
  const typed = error instanceof AssentError ? error : new AssentError('internal', error instanceof Error ? error.message : String(error));
  switch (typed.type) {
    case 'unavailable':
      // The daemon runs and refused the connection for want of descriptors; its message names the limit and the fix.
      if (typed.details?.['reason'] === 'descriptors') return blocked(subject, `unavailable (${typed.message})`, 'The daemon refused it before deciding; nothing was filed.');
      if (typed.details?.['reason'] === 'EMFILE') return blocked(subject, `unavailable (${typed.message})`, HOOK_DESCRIPTORS_ADVICE);
      if (DROPPED.has(String(typed.details?.['reason']))) return blocked(subject, `unavailable (${typed.message})`, DROPPED_ADVICE);
      // The daemon refused to start and said why (a damaged state file names its repair): that is what the operator must do.
      if (typed.details?.['daemonError'] !== undefined) return blocked(subject, `unavailable (${typed.message})`, 'No assent daemon decided it: none starts until the operator does what that says; retrying the call after that is fine.');
      return blocked(subject, `unavailable (${typed.message})`, `No assent daemon decided it. ${DAEMON_ADVICE}`);
    case 'timeout':
      return blocked(subject, `timeout (${typed.message})`, 'Nobody decided it in time; retrying the call is fine once the operator is ready.');
    case 'state_insecure':
      return blocked(subject, `state_insecure (${typed.message})`, 'assent refuses a state directory or socket others could have written to; the operator must fix it first.');
    case 'version_mismatch':
      return blocked(subject, `version_mismatch (${typed.message})`, 'Retrying the call is fine after that.');
    case 'invalid_params':
    case 'invalid_input':
    case 'frame_too_large':
      return blocked(subject, `${typed.type} (${typed.message})`, SETUP_ADVICE);
    default:
      return blocked(subject, `${typed.type} (${typed.message})`, `${SETUP_ADVICE} daemon.log in the state directory has details.`);
  }
}

/** The state directory must be private before anything it holds is trusted (R-STATE-1); absent is fine (auto-spawn creates it). */
function checkStateDir(paths: StatePaths): void {
  try {
    checkPrivateDir(paths.home);
  } catch (error) {
    if (error instanceof AssentError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new AssentError('state_insecure', `cannot inspect the state directory ${paths.home} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
}

async function defaultStartDaemon(paths: StatePaths, env: NodeJS.ProcessEnv, waitMs: number): Promise<void> {
  const [{ ensureDaemonRunning }, { ensureStateDir }, { DaemonClient }, { autoSpawnDisabled }] = await Promise.all([
    import('../daemon/autoSpawn.js'),
    import('../../state/statePaths.js'),
    import('../daemon/rpcClient.js'),
    import('../daemon/clientConnection.js'),
  ]);
  if (autoSpawnDisabled(env)) throw new AssentError('unavailable', `no assent daemon answers on ${paths.socket} and ASSENT_NO_AUTOSPAWN is set`);
  await ensureDaemonRunning({ paths, prepareStateDir: () => ensureStateDir(paths), env, waitMs }, () => DaemonClient.probe(paths.socket));
}

interface Deadline {
  signal: AbortSignal;
  /** Moves the deadline to `ms` from now, never past the hard deadline. */
  extend(ms: number): void;
  clear(): void;
}

/** Why the hook stopped at its hard deadline (R-HOOK-11), naming the timeout it was installed with. */
export function deadlineMessage(args: HookArgs, startedAt: number, answerBy: number): string {
  const seconds = (answerBy - startedAt) / 1000;
  const installed = args.timeoutSeconds === undefined
    ? `${args.agent}'s default hook timeout of ${AGENT_DEFAULT_TIMEOUT_SECONDS[args.agent]} s (the installed hook command has no --timeout; run \`assent install ${args.agent}\` again)`
    : `the agent's hook timeout of ${args.timeoutSeconds} s given on the hook's command line`;
  return `no decision within the hook's deadline of ${Number(seconds.toFixed(1))} s (${installed}, less a margin so the agent reads this deny before it gives up on the hook)`;
}

/**
 * A per-phase wait (first answer, approval) that never runs past the hard
 * deadline `answerBy`: whichever comes first aborts the request.
 */
function deadline(ms: number, answerBy: number, hardMessage: string): Deadline {
  const controller = new AbortController();
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (wait: number): void => {
    if (timer !== undefined) clearTimeout(timer);
    const now = Date.now();
    const hard = Math.min(answerBy, started + HARD_CAP_MS);
    const atHard = now + wait >= hard;
    const bounded = Math.max(0, Math.min(now + wait, hard) - now);
    timer = setTimeout(
      () => controller.abort(new AssentError('timeout', atHard ? hardMessage : `no decision arrived within ${Math.round((Date.now() - started) / 1000)} s`)),
      bounded,
    );
  };
  arm(ms);
  return { signal: controller.signal, extend: arm, clear: () => clearTimeout(timer) };
}

/** Settles as `work` does, or rejects with the signal's reason once it aborts (the work itself may go on, e.g. a daemon still starting). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/**
 * The one stderr line of a hook that waits for a person (docs/agents.md says
 * which agent shows it where): the approval id and where to decide it.
 */
export function waitingLine(subject: string, approvalId: string): string {
  return `${oneLine(`assent: ${subject} waits for approval ${approvalId}: decide with \`assent approve ${approvalId}\`, \`assent watch\` or the web page (\`assent web\`).`)}\n`;
}

/** Runs one hook invocation; never throws (every failure is a blocking answer). */
export async function runHook(argv: readonly string[], deps: HookDeps): Promise<HookOutcome> {
  const args = parseHookArgs(argv);
  if ('problem' in args) return failClosed(args.agent, blocked('this tool call', `bad hook arguments (${args.problem})`, SETUP_ADVICE));
  const { agent, mode } = args;
  const startedAt = deps.startedAt ?? Date.now();
  const answerBy = hookAnswerBy(args, startedAt);
  const hardMessage = deadlineMessage(args, startedAt, answerBy);
  // The tool the event names, once read: Cline's refusal of a run_commands call can then spare the task (beforeAnswer).
  let tool: string | undefined;
  try {
    const stdin = await deps.readStdin();
    if (stdin.oversized) {
      if (mode === 'after') return notRecorded(`the hook event is larger than ${MAX_EVENT_BYTES} bytes`);
      return failClosed(agent, blocked('this tool call', `the hook event is larger than ${MAX_EVENT_BYTES} bytes`, 'Nothing was decided or filed; a smaller call may work.'));
    }
    const parsed = parseHookEvent(agent, mode, stdin.text, deps.cwd());
    if (!parsed.ok) {
      // An after-event never blocks: the call already ran (R-HOOK-6).
      if (mode === 'after') return notRecorded(parsed.problem);
      const subject = parsed.tool === undefined ? 'this tool call' : agentToolId(agent, parsed.tool);
      return failClosed(agent, blocked(subject, parsed.problem, SETUP_ADVICE), parsed.tool);
    }
    if (parsed.mode === 'before') tool = parsed.action.tool;
    const paths = resolveStatePaths(deps.env);
    checkStateDir(paths);
    if (parsed.mode === 'after') return await reportEnd(paths, parsed.end, answerBy, hardMessage);
    if (parsed.mode === 'dialog') return await answerDialog(paths, parsed.dialog, answerBy, hardMessage, deps.withdraw);
    const subject = agentToolId(agent, parsed.action.tool);
    const firstAnswerMs = deps.firstAnswerMs ?? DEFAULT_FIRST_ANSWER_MS;
    const wait = deadline(firstAnswerMs, answerBy, hardMessage);
    const grace = deps.expiryGraceMs ?? DEFAULT_EXPIRY_GRACE_MS;
    // The daemon files the approval to expire by then, so an unanswered prompt ends as its consent_timeout (R-HOOK-11).
    const params = { ...parsed.action, answerBy };
    const ask = (): Promise<{ decision: 'allow' | 'deny' | 'ask'; message: string; confined?: { command?: unknown } }> =>
      requestOnce({
        socketPath: paths.socket,
        method: 'agents.authorize',
        params,
        signal: wait.signal,
        ...(deps.withdraw === undefined ? {} : { withdraw: deps.withdraw }),
        onNotification: (method, notification) => {
          const { expiresAt, approvalId } = (notification ?? {}) as { expiresAt?: unknown; approvalId?: unknown };
          if (method === 'agents.pending' && typeof expiresAt === 'number') wait.extend(expiresAt - Date.now() + grace);
          if (method === 'agents.pending' && typeof approvalId === 'string') deps.writeStderr?.(waitingLine(subject, approvalId));
        },
      });
    try {
      let answer: { decision: 'allow' | 'deny' | 'ask'; message: string; confined?: { command?: unknown } };
      try {
        answer = await ask();
      } catch (error) {
        if (!isNotRunning(error)) throw error;
        // The spawn gets what is left of the hard deadline and no more (R-HOOK-11).
        const spawnLimit = deadline(answerBy - Date.now(), answerBy, hardMessage);
        try {
          const spawning = untilAborted((deps.startDaemon ?? defaultStartDaemon)(paths, deps.env, Math.max(0, answerBy - Date.now())), spawnLimit.signal);
          await (deps.withdraw === undefined ? spawning : untilAborted(spawning, deps.withdraw));
        } finally {
          spawnLimit.clear();
        }
        wait.extend(firstAnswerMs);
        answer = await ask();
      }
      // `ask` is the daemon's only for Claude Code (R-HOOK-9); beforeAnswer turns it into a deny for any other agent.
      if (answer.decision !== 'allow' && answer.decision !== 'deny' && answer.decision !== 'ask') throw new AssentError('internal', 'the daemon answered neither allow, deny nor ask');
      // A decision (allow, or a policy or human deny) is an answer, not a failure: exit 0 (R-HOOK-4).
      // R-SH-14: a confined allow runs the decided command, wrapped in `assent confine`, in place of the original.
      const confined = answer.confined;
      if (confined !== undefined && (typeof confined.command !== 'string' || answer.decision !== 'allow')) throw new AssentError('internal', 'the daemon answered a confined allow without its command');
      const updatedInput = confined === undefined ? undefined : { ...parsed.action.input, command: confined.command as string };
      const text = beforeAnswer(agent, answer.decision, answer.message, updatedInput, tool);
      // Droid lets another hook's earlier allow win over a JSON deny, never over exit 2 (deniesWithExit2).
      if (answer.decision !== 'allow' && deniesWithExit2(agent)) return { stdout: `${text}\n`, stderr: `${oneLine(answer.message)}\n`, exitCode: 2 };
      // Auggie shows the person a blocking hook's stderr, else only "Blocked by hook".
      if (answer.decision !== 'allow' && deniesWithStderr(agent)) return { stdout: `${text}\n`, stderr: `${oneLine(answer.message)}\n`, exitCode: 0 };
      return { stdout: text === '' ? '' : `${text}\n`, exitCode: 0 };
    } catch (error) {
      const refused = failClosed(agent, failureReason(subject, error), tool);
      // No daemon decided it: the refusal is spooled for the next daemon to audit (R-AUD-1).
      if (error instanceof AssentError && error.type === 'unavailable') {
        const { spoolRefusal } = await import('./hookSpool.js');
        const why = spoolRefusal(paths.home, parsed.action, 'unavailable');
        if (why !== undefined) refused.stderr = `${refused.stderr ?? ''}${oneLine(`assent: this refusal could not be spooled for the audit (${why}).`)}\n`;
      }
      return refused;
    } finally {
      wait.clear();
    }
  } catch (error) {
    if (mode === 'after') return notRecorded(error instanceof Error ? error.message : String(error));
    return failClosed(agent, failureReason('this tool call', error), tool);
  }
}

/**
 * Claude Code's PermissionRequest (R-HOOK-9): its dialog is open for a call the
 * before-tool hook answered `ask`. Waits for that approval's decision, whoever
 * gives it, up to the hook's hard deadline, and answers it so the dialog closes.
 * Every failure is a deny in the dialog's own form with exit 0 (Claude Code
 * ignores the stdout of any other exit code and would leave the dialog open).
 * No daemon is started: a new one has no approval for this dialog.
 */
async function answerDialog(paths: StatePaths, dialog: DialogEvent, answerBy: number, hardMessage: string, withdraw: AbortSignal | undefined): Promise<HookOutcome> {
  const subject = agentToolId(dialog.agent, dialog.tool);
  const wait = deadline(answerBy - Date.now(), answerBy, hardMessage);
  const refuse = (reason: string): HookOutcome => ({ stdout: `${dialogAnswer('deny', reason)}\n`, stderr: `${oneLine(reason)}\n`, exitCode: 0 });
  try {
    const answer = await requestOnce<{ decision?: unknown; message?: unknown }>({
      socketPath: paths.socket,
      method: 'agents.dialog',
      params: dialog,
      signal: wait.signal,
      ...(withdraw === undefined ? {} : { withdraw }),
    });
    const message = typeof answer.message === 'string' ? answer.message : '';
    if (answer.decision === 'allow') return { stdout: `${dialogAnswer('allow', message)}\n`, exitCode: 0 };
    if (answer.decision === 'deny') return { stdout: `${dialogAnswer('deny', message)}\n`, exitCode: 0 };
    return refuse(failureReason(subject, new AssentError('internal', 'the daemon answered neither allow nor deny')));
  } catch (error) {
    return refuse(failureReason(subject, error));
  } finally {
    wait.clear();
  }
}

/**
 * After-event: the call already ran, so a failure to record it cannot block
 * anything; it is said on stderr and the agent gets its neutral answer. No
 * daemon is started for it: a new daemon would not know the call.
 */
async function reportEnd(paths: StatePaths, end: unknown, answerBy: number, hardMessage: string): Promise<HookOutcome> {
  const wait = deadline(DEFAULT_FIRST_ANSWER_MS, answerBy, hardMessage);
  try {
    await requestOnce({ socketPath: paths.socket, method: 'agents.finish', params: end, signal: wait.signal });
    return { stdout: `${afterAnswer()}\n`, exitCode: 0 };
  } catch (error) {
    return notRecorded(error instanceof Error ? error.message : String(error));
  } finally {
    wait.clear();
  }
}
