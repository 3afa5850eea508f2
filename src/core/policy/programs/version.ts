// `NAME --version` for any program, and `NAME -V` for programs where -V means
// the version (R-POL-8). Only that exact form: two words, a bare command name.
import type { ShellWord } from '../shellCommand.js';
import type { ProgramVerdict } from './programVerdict.js';

/** Programs whose -V prints the version (`python3 -V`, `ssh -V`). */
export const DASH_V_VERSION: readonly RegExp[] = [/^python[0-9.]*$/, /^pip[0-9.]*$/, /^sudo$/, /^ssh$/, /^perl$/, /^curl$/, /^wget$/, /^rsync$/, /^tmux$/];

/** The verdict for `NAME --version` / `NAME -V`, or undefined when the words are not that form. */
export function judgeVersion(words: readonly ShellWord[]): ProgramVerdict | undefined {
  const [name, flag, ...more] = words;
  if (name === undefined || flag === undefined || more.length > 0) return undefined;
  if (!name.static || name.tilde === true || name.text.includes('/') || name.text === '' || !flag.static) return undefined;
  const ok = flag.text === '--version' || (flag.text === '-V' && DASH_V_VERSION.some((re) => re.test(name.text)));
  return ok ? { model: 'version', reads: [], writes: [], trees: [] } : undefined;
}
