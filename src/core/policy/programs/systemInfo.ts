// Programs that print facts about the system or the shell: date, whoami,
// uname, which and pwd (the bash builtin). date -s and a date operand set the
// clock; both are refused.
import { flags, GNU, GNU_STANDARD, opt, type OptionSyntax, type ProgramModel } from './programModel.js';

export const DATE: ProgramModel = {
  name: 'date',
  syntax: GNU,
  options: [
    ...flags('u|utc|universal|uct', 'debug', 'R|rfc-email|rfc-822|rfc-2822', 'resolution'),
    opt('d|date=', { value: 'inert' }),
    opt('f|file=', { value: 'read-path' }),
    opt('I|iso-8601[=]'),
    opt('rfc-3339='),
    opt('r|reference=', { value: 'read-path' }),
    opt('s|set=', { refuse: 'sets the system clock' }),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => {
    const [first, ...more] = operands;
    if (first === undefined) return { kinds: [] };
    if (more.length > 0) return { kinds: ['inert'] };
    // `date MMDDhhmm` sets the clock; only `+FORMAT` prints.
    if (first.word.static && !first.word.text.startsWith('+')) return { kinds: [], refused: { reason: `the operand ${JSON.stringify(first.word.text)} sets the system clock (a format starts with "+")` } };
    return { kinds: ['literal'] };
  },
};

export const WHOAMI: ProgramModel = { name: 'whoami', syntax: GNU, options: GNU_STANDARD, plan: () => ({ kinds: [] }) };

export const UNAME: ProgramModel = {
  name: 'uname',
  syntax: GNU,
  options: [
    ...flags(
      'a|all', 's|kernel-name|sysname', 'n|nodename', 'r|kernel-release|release', 'v|kernel-version', 'm|machine', 'p|processor',
      'i|hardware-platform', 'o|operating-system',
    ),
    ...GNU_STANDARD,
  ],
  plan: () => ({ kinds: [] }),
};

// Debian's which is a shell script with getopts: -a, and options end at the first name.
const POSIX_GETOPTS: OptionSyntax = { long: 'exact', permute: false };

export const WHICH: ProgramModel = {
  name: 'which',
  syntax: POSIX_GETOPTS,
  options: [opt('a')],
  plan: (_options, operands) => ({ kinds: operands.map(() => 'inert') }),
};

export const PWD: ProgramModel = { name: 'pwd', syntax: POSIX_GETOPTS, options: flags('L', 'P'), plan: () => ({ kinds: [] }) };
