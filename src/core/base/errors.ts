// The one registry of error types. Every error that leaves a module carries a
// stable `type` from this table; heads map it to an exit code, a JSON-RPC error
// or an HTTP status. Adding a type here is the only way to add a failure mode.

/** Stable error types with the CLI exit code (R-CLI-5) and HTTP status they map to. */
export const ERROR_TYPES = {
  invalid_params: { exitCode: 65, httpStatus: 400, summary: 'A parameter is missing, has the wrong type or is out of range.' },
  invalid_input: { exitCode: 65, httpStatus: 400, summary: 'An input file or value is malformed.' },
  config_invalid: { exitCode: 65, httpStatus: 400, summary: 'config.json does not validate.' },
  usage: { exitCode: 64, httpStatus: 400, summary: 'The command line is wrong.' },
  not_found: { exitCode: 65, httpStatus: 404, summary: 'The named approval, rule, proof, effect or token does not exist.' },
  conflict: { exitCode: 65, httpStatus: 409, summary: 'The object is not in a state that allows this operation (e.g. already decided).' },
  policy_denied: { exitCode: 77, httpStatus: 403, summary: 'Policy or a human refused the action.' },
  terminal_required: { exitCode: 77, httpStatus: 403, summary: 'The operation needs an interactive terminal (stdin and stderr TTYs).' },
  proof_invalid: { exitCode: 77, httpStatus: 403, summary: 'A proof is unknown, expired, revoked, consumed or bound to something else.' },
  presence_required: {
    exitCode: 77,
    httpStatus: 403,
    summary: 'The approval needs a valid assertion from an enrolled passkey (policy.presence); this channel or assertion cannot approve it, and it stays pending.',
  },
  unauthorized: { exitCode: 77, httpStatus: 401, summary: 'The caller is not authenticated.' },
  forbidden: { exitCode: 77, httpStatus: 403, summary: 'The caller may not do this.' },
  timeout: { exitCode: 75, httpStatus: 504, summary: 'The operation did not finish in time.' },
  limit_reached: { exitCode: 75, httpStatus: 429, summary: 'A cap on pending work was reached (e.g. handoff approvals per session); decide or wait for what is pending, then retry.' },
  rate_limited: { exitCode: 75, httpStatus: 429, summary: 'Too many tries in a short time; wait for details.retryAfterMs, then try again.' },
  unavailable: { exitCode: 69, httpStatus: 503, summary: 'The daemon or an upstream cannot be reached.' },
  version_mismatch: { exitCode: 69, httpStatus: 503, summary: 'Client and daemon versions differ.' },
  state_insecure: { exitCode: 65, httpStatus: 500, summary: 'The state directory or a file in it has unsafe ownership or permissions.' },
  state_damaged: {
    exitCode: 65,
    httpStatus: 500,
    summary: 'A state file (journal.db, an audit day file, config.json or the confirmed configuration) is damaged; the message names the file and its repair.',
  },
  parse_error: { exitCode: 65, httpStatus: 400, summary: 'A frame is not valid JSON.' },
  invalid_request: { exitCode: 65, httpStatus: 400, summary: 'A frame is JSON but not a JSON-RPC 2.0 request this daemon accepts.' },
  frame_too_large: { exitCode: 65, httpStatus: 413, summary: 'A frame exceeds the 1 MiB limit.' },
  method_not_found: { exitCode: 64, httpStatus: 404, summary: 'The RPC method does not exist.' },
  internal: { exitCode: 1, httpStatus: 500, summary: 'An unexpected failure; the daemon log has details.' },
} as const;

export type ErrorType = keyof typeof ERROR_TYPES;

export interface AssentErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The only error class thrown in src/: a stable type, a message for people, optional details. */
export class AssentError extends Error {
  readonly type: ErrorType;
  readonly details: Record<string, unknown> | undefined;

  constructor(type: ErrorType, message: string, options: AssentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AssentError';
    this.type = type;
    this.details = options.details;
  }

  toJSON(): { type: ErrorType; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { type: this.type, message: this.message }
      : { type: this.type, message: this.message, details: this.details };
  }
}

export function isErrorType(value: unknown): value is ErrorType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_TYPES, value);
}

/** Wraps anything thrown into an AssentError, keeping typed errors as they are. */
export function toAssentError(error: unknown): AssentError {
  if (error instanceof AssentError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AssentError('internal', message, { cause: error });
}

/** The message of anything thrown, for a log field or a hint. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function exitCodeFor(type: ErrorType): number {
  return ERROR_TYPES[type].exitCode;
}
