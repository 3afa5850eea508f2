// Logging for the stdio gateway: stdout is the MCP protocol, so logs go to
// stderr (which MCP clients show in their server log), warnings and errors only
// unless ASSENT_LOG_LEVEL=debug|info asks for more.
import { createLogger, type LineSink, type Logger } from '../../service/logger.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

/** Drops messages below `min` and writes the rest as JSON lines to `sink`. */
export function createLevelLogger(sink: LineSink, min: Level, base: Record<string, unknown> = {}): Logger {
  const inner = createLogger(sink, base);
  const rank = LEVELS.indexOf(min);
  const pass = (level: Level): boolean => LEVELS.indexOf(level) >= rank;
  return {
    debug: (m, f) => (pass('debug') ? inner.debug(m, f) : undefined),
    info: (m, f) => (pass('info') ? inner.info(m, f) : undefined),
    warn: (m, f) => (pass('warn') ? inner.warn(m, f) : undefined),
    error: (m, f) => (pass('error') ? inner.error(m, f) : undefined),
    child: (fields) => createLevelLogger(sink, min, { ...base, ...fields }),
  };
}

/** The level named by ASSENT_LOG_LEVEL, `warn` when unset or unknown. */
export function logLevelFrom(env: NodeJS.ProcessEnv): Level {
  const value = env['ASSENT_LOG_LEVEL'];
  return (LEVELS as readonly string[]).includes(value ?? '') ? (value as Level) : 'warn';
}
