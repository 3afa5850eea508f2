// The injected logger. JSON lines to a stream (daemon.log or stderr, never
// stdout, which carries protocol and reports). The last line of defence of
// R-J-7: anything shaped like a proof token is redacted before it is written.

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LineSink {
  write(line: string): unknown;
}

/** Proofs (`asp1_…`) and HTTP bearer tokens (`ast1_…`). */
const SECRET_SHAPE = /(asp1|ast1)_[A-Za-z0-9_-]*/g;

/** Literal secrets of this process (a team database password, R-TEAM-7), masked wherever they would be written. */
const literalSecrets = new Set<string>();

/** Registers a secret the logger must never write (the last line of defence; nothing should log it in the first place). */
export function registerSecret(secret: string): void {
  if (secret.length >= 4) literalSecrets.add(secret);
}

/** Replaces every `asp1_…` proof and `ast1_…` token shape, and every registered secret, by a fixed marker. */
export function redactSecrets(text: string): string {
  let out = text.replace(SECRET_SHAPE, '$1_[redacted]');
  for (const secret of literalSecrets) out = out.split(secret).join('[redacted]');
  return out;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (v instanceof Error ? { name: v.name, message: v.message } : v));
  } catch {
    return '"[unserializable]"';
  }
}

export function createLogger(sink: LineSink, base: Record<string, unknown> = {}, now: () => number = Date.now): Logger {
  const emit = (level: string, message: string, fields?: Record<string, unknown>): void => {
    const line = safeStringify({ ts: new Date(now()).toISOString(), level, msg: message, ...base, ...fields });
    try {
      sink.write(`${redactSecrets(line)}\n`);
    } catch {
      // A logger never throws into the call path.
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(sink, { ...base, ...fields }, now),
  };
}

/** A logger that drops everything; for tests and heads that must stay silent. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
