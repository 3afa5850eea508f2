// The child's environment (R-EXEC-2): never inherited, deterministic defaults
// first, then exactly the request's env. The preview shows this same object.
import type { ExecAction } from '../core/exec/action.js';

/**
 * Defaults every child gets unless the request sets the same name. PATH lets
 * ordinary programs find their helpers; LANG gives UTF-8 behaviour without
 * depending on the host locale. Nothing else: no HOME, USER or TERM leak in.
 */
export const DEFAULT_EXEC_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/bin:/bin',
  LANG: 'C.UTF-8',
});

/** The action the child will really get: the request's env layered over the defaults. */
export function effectiveExecAction(action: ExecAction): ExecAction {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(DEFAULT_EXEC_ENV)) env[name] = value;
  for (const [name, value] of Object.entries(action.env)) env[name] = value;
  return { executable: action.executable, cwd: action.cwd, args: [...action.args], env };
}
