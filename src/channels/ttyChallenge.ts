// The one-attempt terminal confirmation (R-TTY-1, R-TTY-4, R-TTY-5, R-TTY-9).
// Owns the terminal while it is open: raw byte reading, the challenge answer,
// and the cancel signal (Ctrl+C, EOF, terminal error, SIGINT/SIGTERM/SIGHUP)
// that stays connected through the execution that may follow.
import { keepAliveTimers, type Timers } from '../core/base/timers.js';

/** Shipped answer deadline (R-TTY-5). */
export const CONFIRM_DEADLINE_MS = 60_000;
/** Most bytes an answer may take, line ending included (R-TTY-5). */
export const MAX_ANSWER_BYTES = 128;
/** Time allowed for the preview to reach the terminal (R-TTY-4). */
export const PREVIEW_DRAIN_MS = 1_000;
/** After the line ending, input is watched this long so a pasted second line is seen and refused. */
export const ANSWER_SETTLE_MS = 150;

/** The variable tests use to shorten the deadline; it can never lengthen it. */
export const DEADLINE_ENV = 'ASSENT_TEST_CONFIRM_DEADLINE_MS';

/** Reads the test override: a whole number of milliseconds in 1..60000, otherwise the shipped 60 s. */
export function confirmDeadlineFromEnv(env: Record<string, string | undefined>): number {
  const raw = env[DEADLINE_ENV];
  if (raw === undefined || !/^[0-9]{1,6}$/.test(raw)) return CONFIRM_DEADLINE_MS;
  const ms = Number(raw);
  return ms >= 1 && ms <= CONFIRM_DEADLINE_MS ? ms : CONFIRM_DEADLINE_MS;
}

export interface TerminalInput {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches EventEmitter's listener type
  on(event: string, listener: (...args: any[]) => void): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches EventEmitter's listener type
  off(event: string, listener: (...args: any[]) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface TerminalOutput {
  isTTY?: boolean;
  write(text: string, callback?: (error?: Error | null) => void): boolean;
}

export interface SignalSource {
  on(signal: NodeJS.Signals, listener: () => void): unknown;
  off(signal: NodeJS.Signals, listener: () => void): unknown;
}

export type ChallengeTimers = Timers;

export type ConfirmationRefusalReason = 'confirmation-denied' | 'confirmation-unavailable' | 'action-cancelled';

/** Why an answer was refused, finer than the report's reason; shown on the terminal only. */
export type RefusalCause =
  | 'wrong-answer'
  | 'extra-line'
  | 'too-long'
  | 'escape'
  | 'control-byte'
  | 'ctrl-c'
  | 'eof'
  | 'signal'
  | 'terminal-error'
  | 'deadline'
  | 'drain-timeout';

export type ChallengeOutcome =
  | { confirmed: true }
  | { confirmed: false; reason: ConfirmationRefusalReason; cause: RefusalCause };

const CAUSE_REASON: Record<RefusalCause, ConfirmationRefusalReason> = {
  'wrong-answer': 'confirmation-denied',
  'extra-line': 'confirmation-denied',
  'too-long': 'confirmation-denied',
  escape: 'confirmation-denied',
  'control-byte': 'confirmation-denied',
  'ctrl-c': 'action-cancelled',
  signal: 'action-cancelled',
  eof: 'confirmation-unavailable',
  'terminal-error': 'confirmation-unavailable',
  deadline: 'confirmation-unavailable',
  'drain-timeout': 'confirmation-unavailable',
};

const CAUSE_TEXT: Record<RefusalCause, string> = {
  'wrong-answer': 'the answer did not match the challenge',
  'extra-line': 'more input followed the answer line',
  'too-long': `the answer was longer than ${MAX_ANSWER_BYTES} bytes`,
  escape: 'Esc was pressed',
  'control-byte': 'a control key was pressed',
  'ctrl-c': 'Ctrl+C was pressed',
  signal: 'a termination signal arrived',
  eof: 'the terminal input ended (Ctrl+D)',
  'terminal-error': 'the terminal failed',
  deadline: 'the deadline passed',
  'drain-timeout': 'the preview could not be written to the terminal in time',
};

/** One line for the terminal explaining a refusal and what to do next. */
export function describeRefusal(cause: RefusalCause): string {
  return `assent: not run — ${CAUSE_TEXT[cause]}. Nothing was started. Run the command again to get a fresh challenge.\n`;
}

export interface TerminalConfirmationOptions {
  input: TerminalInput;
  output: TerminalOutput;
  signals: SignalSource;
  timers?: ChallengeTimers;
  deadlineMs?: number;
  settleMs?: number;
  drainMs?: number;
}

const CR = 0x0d;
const LF = 0x0a;
const CTRL_C = 0x03;
const CTRL_D = 0x04;
const ESC = 0x1b;
const HANDLED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * An open terminal session. `cancelled` aborts on Ctrl+C, EOF, a terminal error
 * or a signal at any time while open — before launch it blocks a later allow,
 * after launch the caller uses it to stop the child (R-TTY-9).
 */
export class TerminalConfirmation {
  private readonly controller = new AbortController();
  private readonly timers: ChallengeTimers;
  private cancelCause: RefusalCause | undefined;
  private byteListener: ((byte: number) => void) | undefined;
  private closed = false;
  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (const byte of bytes) {
      if (this.byteListener) this.byteListener(byte);
      else if (byte === CTRL_C) this.cancel('ctrl-c');
      else if (byte === CTRL_D) this.cancel('eof');
    }
  };
  private readonly onEnd = (): void => this.cancel('eof');
  private readonly onError = (): void => this.cancel('terminal-error');
  private readonly onSignal = (): void => this.cancel('signal');

  constructor(private readonly options: TerminalConfirmationOptions) {
    this.timers = options.timers ?? keepAliveTimers;
    for (const signal of HANDLED_SIGNALS) options.signals.on(signal, this.onSignal);
    options.input.on('data', this.onData);
    options.input.on('end', this.onEnd);
    options.input.on('close', this.onEnd);
    options.input.on('error', this.onError);
  }

  get cancelled(): AbortSignal {
    return this.controller.signal;
  }

  /** The first cancel cause seen, if any. */
  get cancelledBy(): RefusalCause | undefined {
    return this.cancelCause;
  }

  private cancel(cause: RefusalCause): void {
    if (this.cancelCause !== undefined) return;
    this.cancelCause = cause;
    this.controller.abort();
  }

  /** Writes text for the person at the terminal; failures are ignored (the cancel signal covers them). */
  say(text: string): void {
    try {
      this.options.output.write(text);
    } catch {
      this.cancel('terminal-error');
    }
  }

  /**
   * Shows the preview and reads one answer. Only `RUN <challenge>` plus one
   * line ending, with nothing after it, within the deadline, confirms. Raw mode
   * and the byte counter start before the preview is written, so the kernel
   * never echoes or edits the answer and every byte typed counts.
   */
  async ask(preview: string, challenge: string): Promise<ChallengeOutcome> {
    const refuse = (cause: RefusalCause): ChallengeOutcome => ({ confirmed: false, reason: CAUSE_REASON[cause], cause });
    if (this.cancelCause !== undefined) return refuse(this.cancelCause);
    const expected = Buffer.from(`RUN ${challenge}`, 'ascii');
    return new Promise<ChallengeOutcome>((resolve) => {
      const line: number[] = [];
      let total = 0;
      let phase: 'answering' | 'settling' = 'answering';
      let endedWithCr = false;
      let lfSeen = false;
      let finished = false;
      let settleTimer: unknown;
      let deadlineTimer: unknown;
      const finish = (outcome: ChallengeOutcome): void => {
        if (finished) return;
        finished = true;
        this.byteListener = undefined;
        if (deadlineTimer !== undefined) this.timers.clearTimeout(deadlineTimer);
        if (settleTimer !== undefined) this.timers.clearTimeout(settleTimer);
        this.controller.signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = (): void => finish(refuse(this.cancelCause ?? 'signal'));
      this.controller.signal.addEventListener('abort', onAbort);

      this.byteListener = (byte: number): void => {
        total += 1;
        if (byte === CTRL_C) return this.cancel('ctrl-c');
        if (byte === CTRL_D) return this.cancel('eof');
        if (total > MAX_ANSWER_BYTES) return finish(refuse('too-long'));
        if (phase === 'settling') {
          if (byte === LF && endedWithCr && !lfSeen) {
            lfSeen = true;
            return;
          }
          return finish(refuse('extra-line'));
        }
        if (byte === ESC) return finish(refuse('escape'));
        if (byte === CR || byte === LF) {
          this.say('\n');
          const matches = line.length === expected.length && line.every((b, i) => b === expected[i]);
          if (!matches) return finish(refuse('wrong-answer'));
          phase = 'settling';
          endedWithCr = byte === CR;
          if (deadlineTimer !== undefined) this.timers.clearTimeout(deadlineTimer);
          deadlineTimer = undefined;
          settleTimer = this.timers.setTimeout(() => finish({ confirmed: true }), this.options.settleMs ?? ANSWER_SETTLE_MS);
          return;
        }
        if (byte < 0x20 || byte > 0x7e) return finish(refuse('control-byte'));
        line.push(byte);
        this.say(String.fromCharCode(byte));
      };
      try {
        this.options.input.setRawMode?.(true);
        this.options.input.resume();
      } catch {
        this.cancel('terminal-error');
        return;
      }
      void this.writeWithin(preview, this.options.drainMs ?? PREVIEW_DRAIN_MS).then((drained) => {
        if (finished) return;
        if (!drained) return finish(refuse('drain-timeout'));
        if (phase === 'answering') {
          deadlineTimer = this.timers.setTimeout(() => finish(refuse('deadline')), this.options.deadlineMs ?? CONFIRM_DEADLINE_MS);
        }
      });
    });
  }

  private writeWithin(text: string, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let done = false;
      const timer = this.timers.setTimeout(() => {
        if (!done) {
          done = true;
          resolve(false);
        }
      }, ms);
      const complete = (ok: boolean): void => {
        if (done) return;
        done = true;
        this.timers.clearTimeout(timer);
        resolve(ok);
      };
      try {
        this.options.output.write(text, (error) => complete(!error));
      } catch {
        complete(false);
      }
    });
  }

  /** Restores the terminal and detaches every listener; idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.byteListener = undefined;
    for (const signal of HANDLED_SIGNALS) this.options.signals.off(signal, this.onSignal);
    const { input } = this.options;
    input.off('data', this.onData);
    input.off('end', this.onEnd);
    input.off('close', this.onEnd);
    input.off('error', this.onError);
    try {
      input.setRawMode?.(false);
      input.pause();
    } catch {
      // The terminal is already gone; nothing to restore.
    }
  }
}

/** R-TTY-1: both stdin and stderr must be live terminals before anything else is read. */
export function isInteractiveTerminal(input: { isTTY?: boolean }, output: { isTTY?: boolean }): boolean {
  return input.isTTY === true && output.isTTY === true;
}
