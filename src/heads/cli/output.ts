// How every command speaks: one JSON document under --json (R-CLI-4), human text
// otherwise, exit codes from the error registry (R-CLI-5).
import { AssentError, exitCodeFor, toAssentError } from '../../core/base/errors.js';
import { resourceFaultHint } from '../../core/base/resourceFaults.js';

export interface OutputOptions {
  json?: boolean;
}

/** Thrown by a command to end with a specific exit code after it has printed its own output. */
export class ExitWith {
  constructor(readonly code: number) {}
}

export function printJsonOk(data: unknown, meta: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ ok: true, data, meta })}\n`);
}

export function printJsonError(error: AssentError): void {
  process.stdout.write(
    `${JSON.stringify({ ok: false, error: { type: error.type, message: error.message, details: error.details ?? {} } })}\n`,
  );
}

/** Prints a failure the way the command's mode asks for and returns its exit code. */
export function reportFailure(error: unknown, options: OutputOptions): number {
  // A system error that says a resource ran out (EMFILE at start, say) gets its cause and fix.
  const hint = error instanceof AssentError ? undefined : resourceFaultHint(error);
  const plain = toAssentError(error);
  const typed = hint === undefined ? plain : new AssentError(plain.type, `${plain.message}; ${hint}`, { cause: error });
  if (options.json) printJsonError(typed);
  else process.stderr.write(`assent: ${typed.message}\n`);
  return exitCodeFor(typed.type);
}

export function useColor(): boolean {
  return Boolean(process.stdout.isTTY) && !process.env['NO_COLOR'];
}

/** Quotes a value for a POSIX shell so a printed command can be pasted as is. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
