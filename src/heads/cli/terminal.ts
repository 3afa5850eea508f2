// Small terminal helpers for the operator-facing commands (approve, watch,
// config reload): the interactive-terminal gate and a bounded one-line read.
import { AssentError } from '../../core/base/errors.js';

/** R-CLI-2: a decision that widens what an agent may do needs stdin and stderr to be TTYs. */
export function requireInteractiveTerminal(what: string): void {
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new AssentError(
      'terminal_required',
      `${what} needs an interactive terminal (stdin and stderr must be a TTY), so an agent cannot approve its own request; run it in your own terminal, or use \`assent deny\`, which works anywhere`,
      { details: { reason: 'terminal-required' } },
    );
  }
}

export interface ReadLineOptions {
  deadlineMs: number;
  maxBytes?: number;
  signal?: AbortSignal;
  /**
   * Written to stderr once the terminal is in raw mode, so a key pressed as soon
   * as the prompt shows (Ctrl+C above all) reaches the reader, not the line
   * discipline that would echo it and kill the process before it could answer.
   */
  prompt?: string;
}

/** How a terminal read ended: a line, or why there is none (each one a refusal). */
export type TerminalEnd = 'line' | 'cancelled' | 'timeout' | 'aborted' | 'invalid';

/** The text a refusal of a typed-code prompt gives (`consequence` says what did not happen), by how the read ended. */
export function typedCodeRefusal(end: TerminalEnd, consequence: string): string {
  switch (end) {
    case 'cancelled':
      return `cancelled; ${consequence}`;
    case 'timeout':
      return `no answer in time; ${consequence}`;
    default:
      return `the code did not match; ${consequence}`;
  }
}

/**
 * Reads a typed code and throws `policy_denied` unless it is `code`: Ctrl+C,
 * Ctrl+D or Esc say "cancelled", the deadline "no answer in time", anything
 * else "the code did not match" — each followed by `consequence`.
 */
export async function requireTypedCode(code: string, options: ReadLineOptions & { consequence: string }): Promise<void> {
  const read = await readTerminalAnswer(options);
  if (read.line?.trim() === code) return;
  throw new AssentError('policy_denied', typedCodeRefusal(read.end, options.consequence), { details: { reason: 'confirmation-denied' } });
}

/**
 * Reads one line typed at the terminal (raw mode, echoed by us), ending at
 * Enter. Resolves undefined on Ctrl+C, Ctrl+D, Esc, too much input, the deadline
 * or the abort signal: every one of those is a refusal.
 */
export async function readTerminalLine(options: ReadLineOptions): Promise<string | undefined> {
  return (await readTerminalAnswer(options)).line;
}

/** readTerminalLine, saying how the read ended. */
export function readTerminalAnswer(options: ReadLineOptions): Promise<{ line?: string; end: TerminalEnd }> {
  const stdin = process.stdin;
  const maxBytes = options.maxBytes ?? 128;
  return new Promise((resolve) => {
    let buffer = '';
    let done = false;
    const finish = (value: string | undefined, end: TerminalEnd = value === undefined ? 'invalid' : 'line'): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.off('data', onData);
      options.signal?.removeEventListener('abort', onAbort);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      resolve(value === undefined ? { end } : { line: value, end });
    };
    const onData = (chunk: Buffer): void => {
      for (const byte of chunk) {
        if (byte === 0x03 || byte === 0x04 || byte === 0x1b) return finish(undefined, 'cancelled');
        if (byte === 0x0d || byte === 0x0a) return finish(buffer);
        if (byte === 0x7f || byte === 0x08) {
          if (buffer.length > 0) {
            buffer = buffer.slice(0, -1);
            process.stderr.write('\b \b');
          }
          continue;
        }
        if (byte < 0x20 || byte > 0x7e) return finish(undefined);
        buffer += String.fromCharCode(byte);
        if (buffer.length > maxBytes) return finish(undefined);
        process.stderr.write(String.fromCharCode(byte));
      }
    };
    const onAbort = (): void => finish(undefined, 'aborted');
    const timer = setTimeout(() => finish(undefined, 'timeout'), Math.max(0, options.deadlineMs));
    if (options.signal?.aborted) return finish(undefined, 'aborted');
    options.signal?.addEventListener('abort', onAbort);
    if (stdin.isTTY) stdin.setRawMode(true);
    if (options.prompt !== undefined) process.stderr.write(options.prompt);
    stdin.on('data', onData);
    stdin.resume();
  });
}

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.round(seconds / 60);
  return minutes < 120 ? `${minutes}m` : `${Math.round(minutes / 60)}h`;
}
