// Which hooks a modelled git subcommand may run (R-SH-13, githooks(5) of git
// 2.39), checked against real git by test/unit/shell/gitHooks.test.ts. The edge
// looks for each in the hooks directory git would use; one that exists and is
// executable makes the command prompt, naming it. Every command that may write
// the index runs post-index-change (`git status` does when it refreshes the
// index; so does `git diff`, found by the oracle), and every one that may move a ref runs reference-transaction.
import type { ShellWord } from '../shellCommand.js';

const INDEX = 'post-index-change';
const REFS = 'reference-transaction';
/** pre-auto-gc runs when `git gc --auto` finds enough loose objects: not known from the words, so it always counts. */
const COMMIT = ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-auto-gc', REFS, INDEX];

/** Whether the word before may be an option that takes the next word as its value (`-m -n`, `-F -n`). */
function takesValue(word: ShellWord | undefined): boolean {
  return word !== undefined && word.static && /^-[A-Za-z]$|^--[a-z-]+$/.test(word.text) && !['-a', '-q', '-v', '-s', '-n', '--no-verify', '--amend', '--all', '--quiet', '--verbose', '--allow-empty', '--no-edit'].includes(word.text);
}

/** The hooks `git SUB args…` may run; `--no-verify` (`-n` for commit) skips pre-commit and commit-msg. */
export function gitHooksRun(sub: string, args: readonly ShellWord[]): string[] {
  // Only the exact words count: `-an` or an abbreviation may mean it too, and then a hook merely counts when it would not run.
  // Words after `--` are paths, and a `-n` may be an option's value (`-m -n`): both also only make a hook count.
  const end = args.findIndex((w) => w.static && w.text === '--');
  const options = end < 0 ? args : args.slice(0, end);
  const has = (...names: string[]): boolean => options.some((w, i) => w.static && names.includes(w.text) && !takesValue(options[i - 1]));
  const skipVerify = (hooks: string[], flags: string[]): string[] => (has(...flags) ? hooks.filter((h) => h !== 'pre-commit' && h !== 'commit-msg' && h !== 'pre-merge-commit') : hooks);
  const stashSub = args[0]?.static === true ? args[0].text : 'push';
  switch (sub) {
    case 'commit':
      // post-rewrite runs after --amend (and rebase) only.
      return skipVerify(has('--amend') || args.some((w) => !w.static) ? [...COMMIT, 'post-rewrite'] : COMMIT, ['--no-verify', '-n']);
    case 'checkout':
    case 'switch':
      return ['post-checkout', REFS, INDEX];
    case 'merge':
      return skipVerify(['pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-merge', 'pre-auto-gc', REFS, INDEX], ['--no-verify']);
    case 'rebase':
      return ['pre-rebase', 'post-rewrite', 'post-checkout', 'pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-auto-gc', REFS, INDEX];
    case 'am':
      return ['applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-auto-gc', REFS, INDEX];
    case 'push':
      return ['pre-push', REFS];
    case 'branch':
    case 'tag':
      // Listing moves no ref; a name (or any word not statically known) may create one.
      return options.some((w) => !w.static || !w.text.startsWith('-')) ? [REFS] : [];
    case 'stash':
      if (stashSub === 'list' || stashSub === 'show') return [];
      // apply and pop write the work tree through a merge: counted as a checkout too.
      return stashSub === 'apply' || stashSub === 'pop' ? [REFS, INDEX, 'post-checkout'] : [REFS, INDEX];
    case 'status':
    case 'diff':
    case 'describe':
    case 'add':
    case 'restore':
    case 'reset':
    case 'rm':
    case 'mv':
      return [INDEX];
    default:
      return [];
  }
}
