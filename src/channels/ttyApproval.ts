// The TTY channel of the gateway (R-MCP-7): with `channels.tty: true` and a
// controlling terminal that can be opened, a waiting call is also offered on
// that terminal with the one-attempt challenge of SPEC §7. It races the other
// channels; when another one decides first, the terminal is released. No
// terminal: the channel is simply absent.
import { openSync } from 'node:fs';
import { ReadStream, WriteStream } from 'node:tty';
import type { RandomBytes } from '../core/base/ids.js';
import { newChallenge } from '../core/base/ids.js';
import { TerminalConfirmation, type SignalSource } from './ttyChallenge.js';

export interface TtyApprovalOptions {
  /** The complete escaped preview of the waiting call. */
  preview: string;
  random: RandomBytes;
  /** Aborted when another channel decided or the call ended. */
  signal: AbortSignal;
  /** Opens the controlling terminal; tests inject a failing one. */
  openTerminal?: () => { input: ReadStream; output: WriteStream } | undefined;
  deadlineMs?: number;
}

/** The gateway's own signals belong to the gateway, not to this prompt. */
const NO_SIGNALS: SignalSource = { on: () => undefined, off: () => undefined };

function openControllingTerminal(): { input: ReadStream; output: WriteStream } | undefined {
  try {
    const readFd = openSync('/dev/tty', 'r');
    const writeFd = openSync('/dev/tty', 'w');
    return { input: new ReadStream(readFd), output: new WriteStream(writeFd) };
  } catch {
    return undefined;
  }
}

/** Is there a controlling terminal this process could ask on? */
export function hasControllingTerminal(): boolean {
  const terminal = openControllingTerminal();
  if (terminal === undefined) return false;
  terminal.input.destroy();
  terminal.output.destroy();
  return true;
}

/**
 * Asks on the controlling terminal. Resolves `allow` only for the exact
 * `RUN <challenge>` answer; `undefined` when there is no terminal, the person
 * refused, or another channel decided first (then nothing is decided here).
 */
export async function askOnControllingTerminal(options: TtyApprovalOptions): Promise<'allow' | undefined> {
  if (options.signal.aborted) return undefined;
  const terminal = (options.openTerminal ?? openControllingTerminal)();
  if (terminal === undefined) return undefined;
  const { input, output } = terminal;
  const confirmation = new TerminalConfirmation({
    input,
    output,
    signals: NO_SIGNALS,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
  });
  // Closing the input ends a pending answer at once (as EOF would).
  const release = (): void => {
    input.destroy();
  };
  options.signal.addEventListener('abort', release, { once: true });
  try {
    const challenge = newChallenge(options.random);
    const outcome = await confirmation.ask(
      `${options.preview}Type "RUN ${challenge}" and Enter to approve this exact call once; anything else leaves it waiting for the other channels.\n> `,
      challenge,
    );
    if (options.signal.aborted) return undefined;
    confirmation.say(outcome.confirmed ? 'Approved here.\n' : 'Not approved here; the call still waits for `assent approve` or another channel.\n');
    return outcome.confirmed ? 'allow' : undefined;
  } finally {
    options.signal.removeEventListener('abort', release);
    confirmation.close();
    input.destroy();
    output.destroy();
  }
}
