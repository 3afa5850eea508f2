// A shell command as plain data (SPEC §18, R-SH-1): every simple command it
// would run, its words after quote removal, assignments and redirections. The
// parser at the edge (src/shell) produces it; policy in core only reads it.

/** One word of a simple command. */
export interface ShellWord {
  /** The word after quote removal when `static`; as written otherwise. */
  text: string;
  /** True when the shell would produce exactly `text`: no expansion, substitution or glob is left in it. */
  static: boolean;
  /** Why the word is not static ("a variable ($HOME)", "a glob"…); only when `static` is false. */
  why?: string;
  /** An unquoted leading `~` or `~/`: the shell puts the home directory there (the word is still static). */
  tilde?: boolean;
  /**
   * Set on a word that is not static only because of plain parameter expansions
   * (`$NAME`, `${NAME}`; R-SH-5): the names, and whether every one of them is
   * inside double quotes (`quoted`: the word stays exactly one word) or some are
   * not (it may split into several words, or none, and glob). A program model
   * may accept such a word where it says "inert text"; nothing else does.
   */
  plainVars?: { names: string[]; quoted: boolean };
}

/** `NAME=value` before a command (or given to `env`/`sudo`). */
export interface ShellAssignment {
  name: string;
  value: ShellWord;
}

/** A redirection: `op` as written (`>`, `>>`, `<`, `&>`, `&>>`, `>|`, `>&`, `<&`, `<<<`…), the fd it names, its target. */
export interface ShellRedirect {
  op: string;
  fd?: number;
  target: ShellWord;
}

/** One simple command the shell would run. */
export interface SimpleCommand {
  /** The command as written (or, for a command a wrapper runs, its words joined), for previews. */
  text: string;
  /**
   * Command name first. Empty for a command that only assigns or redirects: an
   * assignment statement, a redirection of a whole group (`{ a; b; } > f`), a
   * bare redirection (`> f`), `$(<f)` (a read of f) or `$(>f)` (a write), and
   * the loop and case headers (see `assigns`); `unknown` still applies to it.
   */
  words: ShellWord[];
  assignments: ShellAssignment[];
  redirects: ShellRedirect[];
  /** How many `-c`/`eval` strings were parsed again to reach this command (0 at the top). */
  depth: number;
  /** What runs it besides the shell itself: a wrapper (`sudo`, `find -exec`), `bash -c`, `eval`, a command substitution. */
  via?: string;
  /** Why this command is not statically known, as found by the parser (R-SH-3). */
  unknown: string[];
  /** A wrapper runs it in another directory (`env -C DIR`, `sudo -D DIR`). */
  chdir?: ShellWord;
  /**
   * The pipeline it is a stage of: commands of one pipeline share `id`; `stage`
   * counts from 0, left to right. Every command a stage runs has it — those of a
   * group (`{ a; b; } | c`), a wrapper (`… | sudo sh`) or a `-c` string in the
   * stage — but not those of a substitution in it (see `inside`).
   */
  pipeline?: PipelineStage;
  /**
   * Index in `ParsedShell.commands` of the command whose word, redirection or
   * assignment holds the substitution (`$(…)`, backticks, `<(…)`) or here-document
   * body this command runs in; for one in the word list of a loop or a case
   * pattern, the header command pushed for it.
   */
  inside?: number;
  /**
   * Variables this command assigns (R-SH-7): its own `NAME=` prefixes or
   * statement, builtins (`read x`, `printf -v x`, `export x=…`, `unset x`,
   * `getopts o x`, `mapfile`, `declare -n r=t` (both), `let`, `cd` (PWD)…),
   * expansions (`${x:=v}`, `$((x = 1))`, `(( i++ ))`) and keywords. `'*'` stands
   * for a name that is not statically known (`read "$v"`, `let "$e"`, a command
   * name that is not static, `source`). Loops and `coproc` get a word-less
   * header command of their own, pushed before their body:
   * `for NAME in a b` / `select NAME in a b` has `assignments` NAME=a, NAME=b
   * (one per word; `"$@"` without `in`) and assigns [NAME] (select: NAME, REPLY);
   * `for ((…))` assigns what its arithmetic assigns and is not statically known;
   * `coproc [NAME] { … }` assigns NAME (default COPROC) and NAME_PID.
   */
  assigns?: string[];
}

/** One stage of a pipeline; `outer` is the stage of an enclosing pipeline this whole pipeline runs in (`{ a | b; } | c`). */
export interface PipelineStage {
  id: number;
  stage: number;
  outer?: PipelineStage;
}

/** The whole command line decomposed. `errors` are parse errors, as data (R-SH-3: at least prompt). */
export interface ParsedShell {
  source: string;
  commands: SimpleCommand[];
  /** Parse errors and constructs the decomposition does not model (R-SH-8): each makes the whole command at least prompt. */
  errors: string[];
}

/** The deepest `-c`/`eval` string parsed again (R-SH-1). */
export const MAX_SHELL_DEPTH = 3;

/** The last path component of a static command word, so `/usr/bin/sudo` is known as `sudo`. */
export function commandBaseName(word: ShellWord | undefined): string | undefined {
  if (word === undefined || !word.static || word.tilde === true) return undefined;
  const slash = word.text.lastIndexOf('/');
  return slash < 0 ? word.text : word.text.slice(slash + 1);
}

const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Renders words as a command line a person can read back (single quotes where needed). */
export function joinWords(words: readonly ShellWord[]): string {
  return words
    .map((word) => {
      if (!word.static || word.tilde === true) return word.text;
      if (word.text !== '' && PLAIN_WORD.test(word.text)) return word.text;
      return `'${word.text.replace(/'/g, `'\\''`)}'`;
    })
    .join(' ');
}

/** A static word, for tests and for words the parser builds itself. */
export function literalWord(text: string): ShellWord {
  return { text, static: true };
}
