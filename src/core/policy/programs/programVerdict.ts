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
  /** True when the program follows symbolic links while it walks (`grep -R`, `rg -L`, `cp -rL`). */
  follow?: boolean;
}

/** A recursive copy or a move: every entry beneath `from` lands beneath `to` (or beneath `to/<basename of from>` when `to` is a directory). */
export interface TreeWrite {
  from: ShellWord;
  to: ShellWord;
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
  /**
   * Paths the command reads (operands and option values of kind read-path).
   * Relative paths are relative to the command's cwd moved by `repository.chdir`, when that is set.
   */
  reads: ShellWord[];
  /** Paths the command writes or creates (operands and option values of kind write-path). */
  writes: ShellWord[];
  /** Trees read recursively, judged by every credential location beneath (R-SH-10). */
  trees: TreeRead[];
  /**
   * Trees written whose entries are known only from the file system (`cp -r`, `mv`):
   * a gate file (R-SH-9) may be among them. `writes` holds the top-level paths as well.
   */
  treeWrites?: TreeWrite[];
  /**
   * Set for a program that obeys a repository's configuration (git): the
   * directories it runs in relative to the command's cwd, `-C` arguments in
   * order (empty: the cwd itself). The edge finds the repository git would use
   * and refuses the part if its configuration sets a key that executes.
   */
  repository?: {
    chdir: ShellWord[];
    /**
     * A revision whose files git writes into the worktree (`git switch BRANCH`,
     * `git stash pop`, `git restore --source=REV`): the files that differ from
     * the worktree are writes, known only from the repository; only beneath
     * `paths` when given.
     */
    checkout?: { revision: ShellWord; paths: ShellWord[] };
    /** The hooks the subcommand may run (R-SH-13): the edge looks for them in the hooks directory git would use. */
    hooks?: readonly string[];
    /** The subcommand writes files anywhere in the work tree, not only beneath the cwd (`git stash` with no paths, `stash pop`; issue 38). */
    wholeTree?: boolean;
    /** The subcommand reads each submodule's own configuration too (`status`, `diff`, `--recurse-submodules`; R-SH-12). */
    recurses?: boolean;
  };
  /**
   * A launcher (a version manager's shim) reads these files, relative to the
   * directory it runs in and each one above it, to pick the program it runs:
   * the edge refuses the part where one of them exists (R-SH-11).
   */
  launcher?: { files: readonly string[]; why: string };
  /** `REV:PATH` reads of git: `PATH` relative to the repository's top (or to the cwd when it starts with `./` or `../`). */
  revisionPaths?: ShellWord[];
}
