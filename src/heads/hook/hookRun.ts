// `assent hook AGENT [--after] [--timeout=SECONDS]` (SPEC §17): one event in, one
// answer out. Before a call the answer is the daemon's decision; every failure
// blocks the call (R-HOOK-4): the agent's deny JSON, the same one-line reason on
// stderr, exit 2. After a call the event is reported for audit (R-HOOK-6).
import { agentToolId, parseAgentName, type AgentName } from '../../core/agentAction.js';
import { AssentError } from '../../core/errors.js';
import { checkPrivateDir, resolveStatePaths, type StatePaths } from '../../journal/statePaths.js';
import { afterAnswer, beforeAnswer, oneLine } from './hookAnswer.js';
import { isNotRunning, requestOnce } from './hookClient.js';
import { MAX_EVENT_BYTES, parseHookEvent, type HookMode } from './hookEvent.js';

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
  /** Starts a daemon when none answers (R-D-1), once; default: the CLI's auto-spawn, loaded on demand. */
  startDaemon?(paths: StatePaths, env: NodeJS.ProcessEnv): Promise<void>;
  /** How long the daemon may take to decide or to say it filed an approval (default 20 s). */
  firstAnswerMs?: number;
  /** Added to an approval's expiry before the hook gives up waiting itself (default 5 s). */
  expiryGraceMs?: number;
  /** When the hook process started, in ms since the epoch: R-HOOK-11's deadline counts from it (default: when runHook is called). */
  startedAt?: number;
}

export const USAGE =
  'usage: assent hook claude-code|codex|gemini|opencode|kilo|copilot|qwen [--after] [--timeout=SECONDS]   (reads one hook event on stdin; see docs/agents.md)';

const DEFAULT_FIRST_ANSWER_MS = 20_000;
const DEFAULT_EXPIRY_GRACE_MS = 5_000;
/** Nothing a hook files waits longer than hooks.timeoutSeconds (≤ 1500 s); this bounds a daemon that never says. */
const HARD_CAP_MS = 1_510_000;

export interface HookArgs {
  agent: AgentName;
  mode: HookMode;
  /** The agent's own hook timeout, as `install` wrote it (R-HOOK-11); the hook answers before it. */
  timeoutSeconds?: number;
}

/** The shortest and longest agent hook timeout `--timeout=` accepts: above the margin, at most the longest hooks.timeoutSeconds plus an hour. */
const MIN_TIMEOUT_SECONDS = 4;
const MAX_TIMEOUT_SECONDS = 5100;

/** R-HOOK-11: the hook answers this long before the agent's timeout (at least 3 s, or 10 %). */
export function deadlineMarginMs(timeoutSeconds: number): number {
  return Math.max(3000, timeoutSeconds * 100);
}

/** `claude-code|claude|codex|gemini|opencode|kilo|copilot|qwen`, an optional `--after` and `--timeout=SECONDS`; anything else is a problem, named. */
export function parseHookArgs(argv: readonly string[]): HookArgs | { problem: string; agent?: AgentName } {
  const positional = argv.filter((arg) => !arg.startsWith('-'));
  const flags = argv.filter((arg) => arg.startsWith('-'));
  const agent = positional[0] === undefined ? undefined : parseAgentName(positional[0]);
  const withAgent = (problem: string): { problem: string; agent?: AgentName } => (agent === undefined ? { problem } : { problem, agent });
  if (positional.length === 0) return { problem: `no agent named${flags.includes('-h') || flags.includes('--help') ? ' (help is not an argument a hook run takes)' : ''}; ${USAGE}` };
  if (agent === undefined) return { problem: `unknown agent ${JSON.stringify(positional[0]?.slice(0, 40))}; ${USAGE}` };
  if (positional.length > 1) return withAgent(`unexpected argument ${JSON.stringify(positional[1]?.slice(0, 40))}; ${USAGE}`);
  // Help is for a person at a terminal; a hook run answers only its agent, so asking for it blocks like any bad argument.
  const help = flags.find((flag) => flag === '-h' || flag === '--help');
  if (help !== undefined) return withAgent(`${help} is not an argument a hook run takes; ${USAGE}`);
  const unknown = flags.find((flag) => flag !== '--after' && !flag.startsWith('--timeout='));
  if (unknown !== undefined) return withAgent(`unknown option ${JSON.stringify(unknown.slice(0, 40))}; ${USAGE}`);
  const afters = flags.filter((flag) => flag === '--after').length;
  if (afters > 1) return withAgent(`--after given more than once; ${USAGE}`);
  const timeouts = flags.filter((flag) => flag.startsWith('--timeout='));
  if (timeouts.length > 1) return withAgent(`--timeout given more than once; ${USAGE}`);
  const args: HookArgs = { agent, mode: afters === 1 ? 'after' : 'before' };
  if (timeouts[0] !== undefined) {
    const text = timeouts[0].slice('--timeout='.length);
    const seconds = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
    if (!(seconds >= MIN_TIMEOUT_SECONDS && seconds <= MAX_TIMEOUT_SECONDS)) {
      return withAgent(`--timeout=${JSON.stringify(text.slice(0, 20))} is not a whole number of seconds from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}; run \`assent install ${agent}\` again; ${USAGE}`);
    }
    args.timeoutSeconds = seconds;
  }
  return args;
}

/**
 * The blocking answer of a failure (R-HOOK-4): deny JSON in the agent's shape
 * (Claude Code's for an unknown agent; exit 2 blocks in every agent anyway), the
 * same reason on stderr — Codex shows the model the stderr line — and exit 2.
 */
export function failClosed(agent: AgentName | undefined, reason: string): HookOutcome {
  const line = oneLine(reason);
  return { stdout: `${beforeAnswer(agent ?? 'claude-code', 'deny', line)}\n`, stderr: `${line}\n`, exitCode: 2 };
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
const DAEMON_ADVICE = 'The operator can start it with `assent daemon run` and check `assent daemon status`; retrying the call after that is fine.';

/** The reason text for a failure to get a decision, saying what the operator can do. */
function failureReason(subject: string, error: unknown): string {
  const typed = error instanceof AssentError ? error : new AssentError('internal', error instanceof Error ? error.message : String(error));
  switch (typed.type) {
    case 'unavailable':
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

async function defaultStartDaemon(paths: StatePaths, env: NodeJS.ProcessEnv): Promise<void> {
  const [{ ensureDaemonRunning }, { ensureStateDir }, { DaemonClient }, { autoSpawnDisabled }] = await Promise.all([
    import('../daemon/autoSpawn.js'),
    import('../../journal/statePaths.js'),
    import('../daemon/rpcClient.js'),
    import('../daemon/clientConnection.js'),
  ]);
  if (autoSpawnDisabled(env)) throw new AssentError('unavailable', `no assent daemon answers on ${paths.socket} and ASSENT_NO_AUTOSPAWN is set`);
  await ensureDaemonRunning({ paths, prepareStateDir: () => ensureStateDir(paths), env }, () => DaemonClient.probe(paths.socket));
}

interface Deadline {
  signal: AbortSignal;
  /** Moves the deadline to `ms` from now. */
  extend(ms: number): void;
  clear(): void;
}

function deadline(ms: number): Deadline {
  const controller = new AbortController();
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (wait: number): void => {
    if (timer !== undefined) clearTimeout(timer);
    const bounded = Math.max(0, Math.min(wait, HARD_CAP_MS - (Date.now() - started)));
    timer = setTimeout(() => controller.abort(new AssentError('timeout', `no decision arrived within ${Math.round((Date.now() - started) / 1000)} s`)), bounded);
  };
  arm(ms);
  return { signal: controller.signal, extend: arm, clear: () => clearTimeout(timer) };
}

/**
 * R-HOOK-11's one hard deadline: the agent's timeout (from `--timeout=`) minus
 * the margin, counted from the hook's start. Whatever is still pending then —
 * auto-spawn, hello, first answer, approval — the hook answers deny.
 */
interface HardDeadline {
  signal: AbortSignal;
  /** Resolves when the deadline passes. */
  passed: Promise<void>;
  clear(): void;
}

function hardDeadline(timeoutSeconds: number, startedAt: number): HardDeadline {
  const controller = new AbortController();
  const ms = timeoutSeconds * 1000 - deadlineMarginMs(timeoutSeconds);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const passed = new Promise<void>((resolve) => {
    timer = setTimeout(
      () => {
        controller.abort(new AssentError('timeout', `the hook's deadline passed (${Math.round(ms / 1000)} s of the agent's ${timeoutSeconds} s hook timeout)`));
        resolve();
      },
      Math.max(0, startedAt + ms - Date.now()),
    );
  });
  return { signal: controller.signal, passed, clear: () => clearTimeout(timer) };
}

/** Runs one hook invocation; never throws (every failure is a blocking answer). */
export async function runHook(argv: readonly string[], deps: HookDeps): Promise<HookOutcome> {
  const startedAt = deps.startedAt ?? Date.now();
  const args = parseHookArgs(argv);
  if ('problem' in args) return failClosed(args.agent, blocked('this tool call', `bad hook arguments (${args.problem})`, SETUP_ADVICE));
  const { agent, mode } = args;
  const hard = args.timeoutSeconds === undefined || mode === 'after' ? undefined : hardDeadline(args.timeoutSeconds, startedAt);
  try {
    if (hard === undefined) return await runHookUntil(args, deps, undefined);
    const late = hard.passed.then(() => failClosed(agent, failureReason('this tool call', hard.signal.reason)));
    return await Promise.race([runHookUntil(args, deps, hard.signal), late]);
  } finally {
    hard?.clear();
  }
}

async function runHookUntil(args: HookArgs, deps: HookDeps, hardSignal: AbortSignal | undefined): Promise<HookOutcome> {
  const { agent, mode } = args;
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
      return failClosed(agent, blocked(subject, parsed.problem, SETUP_ADVICE));
    }
    const paths = resolveStatePaths(deps.env);
    checkStateDir(paths);
    if (parsed.mode === 'after') return await reportEnd(paths, parsed.end);
    const subject = agentToolId(agent, parsed.action.tool);
    const wait = deadline(deps.firstAnswerMs ?? DEFAULT_FIRST_ANSWER_MS);
    const grace = deps.expiryGraceMs ?? DEFAULT_EXPIRY_GRACE_MS;
    // Closing the connection at the hard deadline withdraws a waiting approval in the daemon.
    const signal = hardSignal === undefined ? wait.signal : AbortSignal.any([wait.signal, hardSignal]);
    const ask = (): Promise<{ decision: 'allow' | 'deny'; message: string }> =>
      requestOnce({
        socketPath: paths.socket,
        method: 'agents.authorize',
        params: parsed.action,
        signal,
        onNotification: (method, params) => {
          const expiresAt = (params as { expiresAt?: unknown } | undefined)?.expiresAt;
          if (method === 'agents.pending' && typeof expiresAt === 'number') wait.extend(expiresAt - Date.now() + grace);
        },
      });
    try {
      let answer: { decision: 'allow' | 'deny'; message: string };
      try {
        answer = await ask();
      } catch (error) {
        if (!isNotRunning(error)) throw error;
        wait.clear();
        await (deps.startDaemon ?? defaultStartDaemon)(paths, deps.env);
        wait.extend(deps.firstAnswerMs ?? DEFAULT_FIRST_ANSWER_MS);
        answer = await ask();
      }
      if (answer.decision !== 'allow' && answer.decision !== 'deny') throw new AssentError('internal', 'the daemon answered neither allow nor deny');
      // A decision (allow, or a policy or human deny) is an answer, not a failure: exit 0 (R-HOOK-4).
      return { stdout: `${beforeAnswer(agent, answer.decision, answer.message)}\n`, exitCode: 0 };
    } catch (error) {
      return failClosed(agent, failureReason(subject, error));
    } finally {
      wait.clear();
    }
  } catch (error) {
    if (mode === 'after') return notRecorded(error instanceof Error ? error.message : String(error));
    return failClosed(agent, failureReason('this tool call', error));
  }
}

/**
 * After-event: the call already ran, so a failure to record it cannot block
 * anything; it is said on stderr and the agent gets its neutral answer. No
 * daemon is started for it: a new daemon would not know the call.
 */
async function reportEnd(paths: StatePaths, end: unknown): Promise<HookOutcome> {
  const wait = deadline(DEFAULT_FIRST_ANSWER_MS);
  try {
    await requestOnce({ socketPath: paths.socket, method: 'agents.finish', params: end, signal: wait.signal });
    return { stdout: `${afterAnswer()}\n`, exitCode: 0 };
  } catch (error) {
    return notRecorded(error instanceof Error ? error.message : String(error));
  } finally {
    wait.clear();
  }
}
