// fd (fd-find 8.x; Debian installs it as fdfind). It walks its search paths,
// or `.`, and prints the names it finds: each is judged as a tree read
// (R-SH-10) like rg's, which skips hidden entries unless -H or -u is given.
// That is conservative — fd prints names, never contents — and it is kept
// conservative: an ignore file given with --ignore-file may whitelist hidden
// names, and a glob search or a pattern starting with `.` (but `.` itself,
// which matches every name) counts as reaching hidden names too. Refused: -x/--exec and -X/--exec-batch (they run a
// program on the results), -l/--list-details (it runs `ls -l` on them), and
// --base-directory (fd moves to another directory first, so relative paths
// are not where they seem). clap matches long names exactly.
import type { ShellWord } from '../shellCommand.js';
import { judgeModel, refusedOption, refusedVerdict } from './judgeModel.js';
import { parseOptions } from './optionParser.js';
import { flags, opt, searchTrees, type OptionsSeen, type OptionSyntax, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

const SYNTAX: OptionSyntax = { long: 'exact', permute: true, shortEquals: true };

function hidden(options: OptionsSeen, pattern: ShellWord | undefined): boolean {
  // `.` alone is the regular expression that matches every name.
  const dotted = [...(pattern === undefined ? [] : [pattern]), ...options.values('--and')].some((w) => !w.static || (w.text.startsWith('.') && w.text !== '.'));
  return dotted || options.has('--hidden', '--unrestricted', '--glob', '--ignore-file');
}

function plan(options: OptionsSeen, operands: readonly ParsedOperand[]) {
  const kinds: WordKind[] = operands.map((_o, i) => (i === 0 ? 'pattern' : 'read-path'));
  const paths = [...operands.slice(1).map((o) => o.word), ...options.values('--search-path')];
  return { kinds, extra: { trees: searchTrees(paths, hidden(options, operands[0]?.word), options.has('--follow')) } };
}

const RUNS = 'runs a program on the results';

export const FD: ProgramModel = {
  name: 'fd',
  syntax: SYNTAX,
  options: [
    ...flags(
      'H|hidden', 'no-hidden', 'I|no-ignore', 'ignore', 'no-ignore-vcs', 'ignore-vcs', 'no-ignore-parent', 'no-global-ignore-file',
      'u|unrestricted', 's|case-sensitive', 'i|ignore-case', 'g|glob', 'regex', 'F|fixed-strings', 'a|absolute-path', 'relative-path',
      'L|follow', 'no-follow', 'p|full-path', '0|print0', 'prune', '1', 'q|quiet|has-results', 'show-errors', 'strip-cwd-prefix',
      'one-file-system', 'h|help', 'V|version',
    ),
    opt('and=', { value: 'pattern' }),
    opt('d|max-depth='),
    opt('min-depth='),
    opt('exact-depth='),
    opt('E|exclude=', { value: 'pattern' }),
    opt('t|type='),
    opt('e|extension='),
    opt('S|size='),
    opt('changed-within|changed-after|change-newer-than|newer=', { value: 'inert' }),
    opt('changed-before|change-older-than|older=', { value: 'inert' }),
    opt('o|owner='),
    opt('batch-size='),
    opt('ignore-file=', { value: 'read-path' }),
    opt('c|color='),
    opt('j|threads='),
    opt('max-results='),
    opt('max-buffer-time='),
    opt('path-separator=', { value: 'inert' }),
    // Each value is a directory fd walks: the plan adds it as a tree.
    opt('search-path=', { value: 'read-path' }),
    opt('x|exec=', { refuse: `${RUNS}, one at a time` }),
    opt('X|exec-batch=', { refuse: RUNS }),
    opt('l|list-details', { refuse: 'runs ls -l on the results (it is --exec-batch ls -l)' }),
    opt('base-directory=', { refuse: 'moves fd to another directory first, so relative paths are not where they seem' }),
  ],
  plan,
};

export const FDFIND: ProgramModel = { ...FD, name: 'fdfind' };

/**
 * fd under one of its names. A refused option is reported even when the words
 * after it do not parse: `fd -x rm -rf {}` gives -x the word `rm` and the rest to
 * the command it runs, which is no option of fd's.
 */
export function judgeFd(model: ProgramModel) {
  return (args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict => {
    const early = refusedOption(parseOptions(args, model.syntax, model.options).options);
    if (early !== undefined) return refusedVerdict(model.name, early);
    return judgeModel(model, args, assigned);
  };
}
