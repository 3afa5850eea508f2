// The hook as a process: stdin read with a cap and a deadline, one answer
// written once, exit 0 or 2 — also on a signal or a crash, which block the call
// (R-HOOK-4). Kept apart from hookRun so the flow is testable without a process.
import { parseAgentName, type AgentName } from '../../core/agent/agentAction.js';
import { AssentError } from '../../core/base/errors.js';
import { deadlineMessage, failClosed, hookAnswerBy, notRecorded, parseHookArgs, runHook, type HookOutcome, type StdinRead } from './hookRun.js';
import { MAX_EVENT_BYTES } from './hookEvent.js';
import { readPipe, type HookInput } from './nodePipe.js';

/** An agent writes its event at once; a stdin that stays open this long is not an event. */
const STDIN_DEADLINE_MS = 10_000;
/** How often the hook looks whether its agent (the parent process) is still there. */
const PARENT_POLL_MS = 200;
/** The longest a withdrawal may take before the hook answers anyway. */
const WITHDRAW_ANSWER_MS = 1_000;

/** Reads stdin up to MAX_EVENT_BYTES; one byte more means oversized, and reading stops there. */
export function readEvent(stdin: HookInput, deadlineMs = STDIN_DEADLINE_MS): Promise<StdinRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const end = (result: StdinRead | AssentError): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      if (result instanceof AssentError) reject(result);
      else resolve(result);
    };
    const timer = setTimeout(() => end(new AssentError('invalid_input', `no complete hook event arrived on stdin within ${deadlineMs / 1000} s`)), deadlineMs);
    stdin.on('data', (chunk: Buffer | string) => {
      const piece = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += piece.length;
      if (bytes > MAX_EVENT_BYTES) {
        end({ text: '', oversized: true });
        stdin.destroy();
        return;
      }
      chunks.push(piece);
    });
    stdin.on('end', () => {
      const data = Buffer.concat(chunks);
      try {
        end({ text: new TextDecoder('utf-8', { fatal: true }).decode(data), oversized: false });
      } catch {
        end(new AssentError('invalid_input', 'the hook event on stdin is not valid UTF-8'));
      }
    });
    stdin.on('error', (error: Error) => end(new AssentError('invalid_input', `stdin could not be read (${error.message})`)));
  });
}

const { read, writeSync } = process.getBuiltinModule('node:fs');

/**
 * Reads the event straight from a file descriptor (stdin is fd 0), without
 * setting up process.stdin's stream (a few ms of every hook run, SPEC §14).
 * Same cap, deadline and refusals as readEvent; a non-blocking descriptor
 * (EAGAIN) falls back to the stream.
 */
export function readEventFromFd(fd: number, fallback: () => Promise<StdinRead>, deadlineMs = STDIN_DEADLINE_MS): Promise<StdinRead> {
  return new Promise((resolve, reject) => {
    const buffer = Buffer.allocUnsafe(MAX_EVENT_BYTES + 1);
    let bytes = 0;
    let done = false;
    const timer = setTimeout(() => finish(new AssentError('invalid_input', `no complete hook event arrived on stdin within ${deadlineMs / 1000} s`)), deadlineMs);
    const finish = (result: StdinRead | AssentError | Promise<StdinRead>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (result instanceof AssentError) reject(result);
      else resolve(result);
    };
    const next = (): void => {
      read(fd, buffer, bytes, buffer.length - bytes, null, (error, count) => {
        if (done) return;
        if (error !== null) {
          if (error.code === 'EAGAIN' && bytes === 0) finish(fallback());
          else finish(new AssentError('invalid_input', `stdin could not be read (${error.code ?? error.message})`));
          return;
        }
        if (count === 0) {
          try {
            finish({ text: new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, bytes)), oversized: false });
          } catch {
            finish(new AssentError('invalid_input', 'the hook event on stdin is not valid UTF-8'));
          }
          return;
        }
        bytes += count;
        if (bytes > MAX_EVENT_BYTES) finish({ text: '', oversized: true });
        else next();
      });
    };
    next();
  });
}

/**
 * The event from stdin: on Node's pipe handle when stdin is a pipe or socket
 * (nodePipe.ts), else from its descriptor; neither sets up process.stdin's
 * stream or the thread pool's threads on the way.
 */
function readStdin(): Promise<StdinRead> {
  const pipe = readPipe(0);
  return pipe === undefined ? readEventFromFd(0, () => readEvent(process.stdin)) : readEvent(pipe);
}

/**
 * Writes `text` to stdout (1) or stderr (2), then calls `done`. Written
 * synchronously, without process.stdout's stream (it loads `net`'s); a
 * descriptor that would block hands the rest to the stream. A reader that
 * went away (EPIPE) gets nothing more: the answer cannot reach it anyway.
 */
function writeOut(fd: 1 | 2, text: string, done: () => void = () => undefined): void {
  let rest = Buffer.from(text);
  try {
    while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
      const stream = fd === 1 ? process.stdout : process.stderr;
      stream.on('error', () => undefined);
      stream.write(rest, () => done());
      return;
    }
  }
  done();
}

/** The agent named on the command line, for an answer written before (or without) the full run. */
function agentOf(argv: readonly string[]): AgentName | undefined {
  const first = argv.find((arg) => !arg.startsWith('-'));
  return first === undefined ? undefined : parseAgentName(first);
}

/**
 * Runs the hook in this process and exits. Every path ends in exactly one
 * answer: the run's, or the blocking one of a signal or an unexpected error.
 */
export async function runHookProcess(argv: readonly string[]): Promise<void> {
  // No help here: `-h` is a bad argument like any other and blocks (R-HOOK-4); runHook says the usage.
  const agent = agentOf(argv);
  const parsedArgs = parseHookArgs(argv);
  // An after-event hook never blocks, even when stopped or crashing: the call already ran (R-HOOK-6).
  const after = !('problem' in parsedArgs) && parsedArgs.mode === 'after';
  let answered = false;
  const answer = (outcome: HookOutcome): void => {
    if (answered) return;
    answered = true;
    if (outcome.stderr !== undefined) writeOut(2, outcome.stderr);
    writeOut(1, outcome.stdout, () => process.exit(outcome.exitCode));
    // A stdout that would block was handed to the stream; the answer stands after a second whatever it does.
    setTimeout(() => process.exit(outcome.exitCode), 1000).unref();
  };
  // The agent went away (R-HOOK-12): a waiting call is withdrawn, the daemon told, then the blocking answer.
  const withdrawal = new AbortController();
  const goneAway = (why: string): void => {
    if (after) {
      answer(notRecorded(`the hook was stopped (${why})`));
      return;
    }
    const text = `assent blocked this tool call: withdrawn by the agent (${why}) before a decision arrived. The call did not run; retrying it is fine.`;
    if (!withdrawal.signal.aborted) withdrawal.abort(new AssentError('timeout', `withdrawn by the agent (${why}) before a decision arrived`));
    // The withdrawal needs at most a moment; the answer comes by then whatever the daemon does.
    setTimeout(() => answer(failClosed(agent, text)), WITHDRAW_ANSWER_MS).unref();
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => goneAway(signal));
  // A parent that exits without a signal (Gemini CLI on Ctrl+C) leaves us to init or a subreaper.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) goneAway(`its parent process ${parent} is gone`);
  }, PARENT_POLL_MS).unref();
  const crashed = (error: unknown): void => {
    const what = error instanceof Error ? error.message : String(error);
    answer(
      after
        ? notRecorded(`internal error in the hook: ${what}`)
        : failClosed(agent, `assent blocked this tool call: internal error in the hook (${what}). The call did not run; the operator can check the hook with \`assent doctor\`.`),
    );
  };
  process.on('uncaughtException', crashed);
  process.on('unhandledRejection', crashed);
  // The deadline counts from the process's start: the agent's timer started when it spawned us.
  // (performance.timeOrigin is the same instant, but loads perf_hooks, about ten modules.)
  const startedAt = Math.round(Date.now() - process.uptime() * 1000);
  if (!('problem' in parsedArgs)) {
    // One hard deadline over everything the hook does, stdin included (R-HOOK-11); runHook's own waits end sooner.
    const answerBy = hookAnswerBy(parsedArgs, startedAt);
    const reason = deadlineMessage(parsedArgs, startedAt, answerBy);
    setTimeout(
      () => answer(after ? notRecorded(reason) : failClosed(agent, `assent blocked this tool call: timeout (${reason}). The call did not run; retrying it is fine once the operator is ready.`)),
      Math.max(0, answerBy - Date.now()),
    ).unref();
  }
  const outcome = await runHook(argv, {
    readStdin,
    env: process.env,
    cwd: () => process.cwd(),
    startedAt,
    withdraw: withdrawal.signal,
    writeStderr: (text) => writeOut(2, text),
  });
  answer(outcome);
}
