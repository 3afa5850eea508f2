// What a program model says of one simple command (R-SH-6): whether every word
// fits the model, and what the command touches — the paths it reads and writes,
// the trees it reads recursively (R-SH-10), the repository whose configuration
// it obeys (R-SH-9). Plain data; the shell policy plans paths and edge checks from it.
import type { ShellWord } from '../shellCommand.js';

/** A recursive read: every entry beneath `dir` is read (R-SH-10). */
export interface TreeRead {
  /** The starting directory as written (a synthetic `.` word when the program defaults to its cwd). */
  dir: ShellWord;
  /** False when the program skips hidden entries (`rg` without `--hidden`/`-u`): they are not judged. */
  hidden: boolean;
}

export interface ProgramVerdict {
  /** The model that judged, as `policy explain` names it: `grep`, `git status`, `version`. */
  model: string;
  /**
   * Undefined when every word fits the model; otherwise why not, naming the
   * option or word as the program reads it: `the option --output (written
   * "--outp") writes a file`, `"$x" in an option position is not statically known`.
   */
  refused?: string;
  /** The option that decided the refusal, as the program spells it in full (`--output`). */
  option?: string;
  /** Paths the command reads (operands and option values of kind read-path). */
  reads: ShellWord[];
  /** Paths the command writes or creates (operands and option values of kind write-path). */
  writes: ShellWord[];
  /** Trees read recursively, judged by every credential location beneath (R-SH-10). */
  trees: TreeRead[];
  /**
   * Set for a program that obeys a repository's configuration (git): the
   * directories it runs in relative to the command's cwd, `-C` arguments in
   * order (empty: the cwd itself). The edge finds the repository git would use
   * and refuses the part if its configuration sets a key that executes.
   */
  repository?: { chdir: ShellWord[] };
  /** `REV:PATH` reads of git: `PATH` relative to the repository's top (or to the cwd when it starts with `./` or `../`). */
  revisionPaths?: ShellWord[];
}
