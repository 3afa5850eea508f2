// diff and cmp (GNU diffutils 3.8). diff prints the contents that differ, so
// two directories are read entry by entry (one level, or all with -r): each
// operand is a tree read (R-SH-10); for a plain file that tree is the file.
// -l pipes the output through `pr`, so it is refused.
import { every, flags, GNU, opt, treesOf, type ProgramModel, type WordKind } from './programModel.js';

export const DIFF: ProgramModel = {
  name: 'diff',
  syntax: GNU,
  options: [
    // `-5` is the obsolete `-C 5`/`-U 5` context length.
    opt('0|1|2|3|4|5|6|7|8|9'),
    ...flags(
      'normal', 'q|brief', 's|report-identical-files', 'c', 'u', 'e|ed', 'n|rcs', 'y|side-by-side', 'left-column', 'suppress-common-lines',
      'p|show-c-function', 't|expand-tabs', 'T|initial-tab', 'suppress-blank-empty', 'r|recursive', 'no-dereference', 'N|new-file',
      'P|unidirectional-new-file', 'ignore-file-name-case', 'no-ignore-file-name-case', 'i|ignore-case', 'E|ignore-tab-expansion',
      'Z|ignore-trailing-space', 'b|ignore-space-change', 'w|ignore-all-space', 'B|ignore-blank-lines', 'a|text', 'strip-trailing-cr',
      'd|minimal', 'H|speed-large-files', 'f|forward-ed', 'h', 'binary', 'inhibit-hunk-merge', 'sdiff-merge-assist', 'v|version', 'help',
    ),
    opt('C='),
    opt('context[=]'),
    opt('U='),
    opt('unified[=]'),
    opt('W|width='),
    opt('F|show-function-line=', { value: 'pattern' }),
    opt('L|label=', { value: 'inert' }),
    opt('tabsize='),
    opt('x|exclude=', { value: 'pattern' }),
    opt('X|exclude-from=', { value: 'read-path' }),
    opt('S|starting-file=', { value: 'inert' }),
    opt('from-file=', { value: 'read-path' }),
    opt('to-file=', { value: 'read-path' }),
    opt('I|ignore-matching-lines=', { value: 'pattern' }),
    opt('D|ifdef=', { value: 'inert' }),
    ...['line-format', 'old-line-format', 'new-line-format', 'unchanged-line-format'].map((n) => opt(`${n}=`, { value: 'inert' })),
    ...['old-group-format', 'new-group-format', 'changed-group-format', 'unchanged-group-format'].map((n) => opt(`${n}=`, { value: 'inert' })),
    opt('horizon-lines='),
    opt('color[=]'),
    opt('palette=', { value: 'inert' }),
    opt('l|paginate', { refuse: 'runs `pr` on the output' }),
  ],
  plan: (options, operands) => {
    const files = [...operands.map((o) => o.word), ...options.values('--from-file', '--to-file')].filter((w) => w.text !== '-');
    return { kinds: every('read-path', operands), extra: { trees: treesOf(files, true, false) } };
  },
};

export const CMP: ProgramModel = {
  name: 'cmp',
  syntax: GNU,
  options: [
    ...flags('b|print-bytes', 'c|print-chars', 'l|verbose', 's|quiet|silent', 'v|version', 'help'),
    opt('i|ignore-initial='),
    opt('n|bytes='),
  ],
  // FILE1 [FILE2 [SKIP1 [SKIP2]]]
  plan: (_options, operands) => ({ kinds: operands.slice(0, 4).map((_o, i): WordKind => (i < 2 ? 'read-path' : 'literal')) }),
};

