// Variables an assignment may set without changing what a program reads or
// runs (R-SH-3, R-SH-7): a positive list. A `NAME=value` prefix or an export of
// any other name makes the command not statically known, unless the program's
// model declares that name and judges it itself. Each entry was checked against
// every program model (test/unit/core/inertVariables.test.ts): none of them
// opens a file, runs a program or parses options differently because of it.

export interface InertVariable {
  /** The name, or a pattern of names (`LC_*`). */
  name: string | RegExp;
  /** Why no modelled program reads or runs anything else because of it. */
  why: string;
  /** Values that would make it name a file: then it is not inert (TZ=/path reads that file). */
  valueNamesFile?: (value: string) => boolean;
}

const pathLike = (value: string): boolean => value.includes('/') || value.startsWith(':') || value.includes('..');
/** A zone name is a path beneath the system zoneinfo (`Europe/Berlin`); an absolute one, `:file` or `..` leaves it. */
const zoneFile = (value: string): boolean => value.startsWith('/') || value.startsWith(':') || value.includes('..');

export const INERT_VARIABLES: readonly InertVariable[] = [
  { name: 'LANG', why: 'picks messages and character classes from the system locale', valueNamesFile: pathLike },
  { name: 'LANGUAGE', why: 'picks the language of gettext messages from the system catalogs', valueNamesFile: pathLike },
  { name: /^LC_[A-Z]+$/, why: 'picks a category of the system locale (collation, character classes, messages)', valueNamesFile: pathLike },
  { name: 'TZ', why: 'picks a zone of the system zoneinfo for printed times', valueNamesFile: zoneFile },
  { name: 'TERM', why: "picks the terminal's entry of the system terminfo (colours, width)", valueNamesFile: pathLike },
  { name: 'COLORTERM', why: 'says whether the terminal shows true colour' },
  { name: 'NO_COLOR', why: 'turns colour off' },
  { name: 'FORCE_COLOR', why: 'turns colour on or off' },
  { name: 'CLICOLOR', why: 'turns colour on or off (BSD convention)' },
  { name: 'CLICOLOR_FORCE', why: 'turns colour on even when not on a terminal' },
  { name: 'COLUMNS', why: 'the width output is formatted to' },
  { name: 'LINES', why: 'the height output is formatted to' },
  { name: 'CI', why: 'says the command runs in continuous integration; modelled programs only quieten progress output' },
  { name: 'NODE_ENV', why: 'a mode name read by node programs; no modelled program reads it' },
  { name: 'PYTHONUNBUFFERED', why: 'turns off output buffering of python; no modelled program reads it' },
  { name: 'PYTHONDONTWRITEBYTECODE', why: 'stops python writing .pyc files; no modelled program reads it' },
  { name: 'RUST_BACKTRACE', why: 'prints a backtrace on a panic; no modelled program reads it' },
  // Set by bash itself as it runs builtins; programs take the directory from getcwd, not from these.
  { name: 'PWD', why: 'set by cd to the directory it moved to; programs take their directory from getcwd' },
  { name: 'OLDPWD', why: 'set by cd to the directory it left' },
  { name: 'DIRSTACK', why: "bash's pushd stack; never exported" },
  { name: 'REPLY', why: "read's default variable; no program reads it" },
  { name: 'MAPFILE', why: "mapfile's default array; arrays are never exported" },
  { name: 'OPTARG', why: "getopts' value; no program reads it" },
  { name: 'OPTIND', why: "getopts' index; no program reads it" },
  { name: 'COPROC', why: "coproc's file descriptor array; arrays are never exported" },
  { name: 'COPROC_PID', why: "coproc's process id" },
];

function entryOf(name: string): InertVariable | undefined {
  return INERT_VARIABLES.find((v) => (typeof v.name === 'string' ? v.name === name : v.name.test(name)));
}

/**
 * Whether setting `name` leaves every modelled program reading and running
 * what it would without it. `value` is the assigned text when statically
 * known, undefined when it is not (or not given: `export NAME`, `read NAME`).
 */
export function isInertVariable(name: string, value?: string): boolean {
  const entry = entryOf(name);
  if (entry === undefined) return false;
  if (entry.valueNamesFile === undefined) return true;
  return value !== undefined && !entry.valueNamesFile(value);
}

/**
 * A name that, unexported, stays in the shell: by convention the environment
 * of an agent's shell holds upper-case names (and the lower-case proxy
 * variables of curl and wget), so a lower-case assignment reaches no program
 * unless it is exported — and an export of it is judged by the positive list.
 */
export function isShellLocalName(name: string): boolean {
  return /[a-z]/.test(name) && !/_proxy$/i.test(name);
}

/**
 * Whether a persistent assignment (a statement, `read`, `for`, `declare`…)
 * changes what later commands in the line may run or read: `exported` when
 * `export` or `declare -x` puts it in the environment. `*` is a name not
 * statically known.
 */
export function changesLaterCommands(name: string, exported: boolean, value?: string): boolean {
  if (name === '*') return true;
  if (isInertVariable(name, value)) return false;
  return exported || !isShellLocalName(name);
}
