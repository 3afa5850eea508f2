// grep (GNU grep 3.8). The first operand is the pattern unless -e or -f gives
// one; the others are files it reads. -r, -R and `-d recurse` read whole trees
// (R-SH-10): each operand, or `.` when there is none. Nothing grep does writes
// or runs a program, so no option is refused for its effect. egrep and fgrep
// are grep under other names.
import { flags, GNU, opt, searchTrees, type OptionsSeen, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';

function recursion(options: OptionsSeen): { recursive: boolean; follow: boolean } {
  const follow = options.has('--dereference-recursive');
  // grep takes any unambiguous abbreviation of the action (argmatch): `-d rec` is `-d recurse`.
  const recurseValue = options.values('--directories').some((v) => v.text !== '' && 'recurse'.startsWith(v.text));
  return { recursive: follow || recurseValue || options.has('--recursive'), follow };
}

function plan(options: OptionsSeen, operands: readonly ParsedOperand[]) {
  const patternGiven = options.has('--regexp', '--file');
  const kinds: WordKind[] = operands.map((_o, i) => (i === 0 && !patternGiven ? 'pattern' : 'read-path'));
  const { recursive, follow } = recursion(options);
  if (!recursive) return { kinds };
  const files = operands.filter((_o, i) => kinds[i] === 'read-path').map((o) => o.word);
  return { kinds, extra: { trees: searchTrees(files, true, follow) } };
}

export const GREP: ProgramModel = {
  name: 'grep',
  syntax: GNU,
  options: [
    // `-5` is `-C 5`.
    opt('0|1|2|3|4|5|6|7|8|9'),
    ...flags(
      'E|extended-regexp', 'F|fixed-strings|fixed-regexp', 'G|basic-regexp', 'P|perl-regexp', 'i|y|ignore-case', 'no-ignore-case',
      'w|word-regexp', 'x|line-regexp', 'z|null-data', 's|no-messages', 'v|invert-match', 'V|version', 'help', 'b|byte-offset',
      'n|line-number', 'line-buffered', 'H|with-filename', 'h|no-filename', 'o|only-matching', 'q|quiet|silent', 'a|text', 'I',
      'r|recursive', 'R|dereference-recursive', 'L|files-without-match', 'l|files-with-matches', 'c|count', 'T|initial-tab',
      'Z|null', 'no-group-separator', 'U|binary', 'u|unix-byte-offsets',
    ),
    opt('e|regexp=', { value: 'pattern' }),
    opt('f|file=', { value: 'read-path' }),
    opt('exclude-from=', { value: 'read-path' }),
    opt('m|max-count='),
    opt('label=', { value: 'inert' }),
    opt('binary-files='),
    opt('d|directories='),
    opt('D|devices='),
    opt('include=', { value: 'pattern' }),
    opt('exclude=', { value: 'pattern' }),
    opt('exclude-dir=', { value: 'pattern' }),
    opt('B|before-context='),
    opt('A|after-context='),
    opt('C|context='),
    opt('group-separator=', { value: 'inert' }),
    opt('color|colour[=]'),
    opt('X=', { refuse: 'is an undocumented matcher switch' }),
  ],
  plan,
};

// egrep and fgrep (grep 3.8) are scripts that run `grep -E "$@"` and `grep -F "$@"`: grep's options and operands.
export const EGREP: ProgramModel = { ...GREP, name: 'egrep' };
export const FGREP: ProgramModel = { ...GREP, name: 'fgrep' };
