// Text filters of GNU coreutils 9.1 (and rev of util-linux 2.38): cut, tr,
// nl, paste, rev, tac, numfmt, base64, fold, expand, unexpand, comm, join, od.
// Each prints what it makes of its input; every file operand is a read, so a
// credential path is judged by the path rules. tr reads stdin only (its
// operands are sets) and numfmt's operands are numbers. None of them has an
// option that writes a file or runs a program; an option not listed here is
// refused as unknown.
import { every, flags, GNU, GNU_STANDARD, GNU_STOP, opt, type ProgramModel, type WordKind } from './programModel.js';

const readAll: ProgramModel['plan'] = (_options, operands) => ({ kinds: every('read-path', operands) });

/** At most `count` file operands (comm and join take two, base64 one). */
function readAtMost(count: number): ProgramModel['plan'] {
  return (_options, operands) => ({ kinds: operands.slice(0, count).map((): WordKind => 'read-path') });
}

export const CUT: ProgramModel = {
  name: 'cut',
  syntax: GNU,
  options: [
    opt('b|bytes='),
    opt('c|characters='),
    opt('d|delimiter=', { value: 'inert' }),
    opt('f|fields='),
    ...flags('n', 'complement', 's|only-delimited', 'z|zero-terminated'),
    opt('output-delimiter=', { value: 'inert' }),
    ...GNU_STANDARD,
  ],
  plan: readAll,
};

// tr's getopt string starts with `+`: the first operand ends the options (`tr x -d` maps x to "-").
export const TR: ProgramModel = {
  name: 'tr',
  syntax: GNU_STOP,
  options: [...flags('c|C|complement', 'd|delete', 's|squeeze-repeats', 't|truncate-set1'), ...GNU_STANDARD],
  plan: (_options, operands) => ({ kinds: operands.slice(0, 2).map((): WordKind => 'inert') }),
};

export const NL: ProgramModel = {
  name: 'nl',
  syntax: GNU,
  options: [
    // A STYLE of `pBRE` numbers the lines matching a regular expression: text, no file.
    opt('b|body-numbering=', { value: 'pattern' }),
    opt('d|section-delimiter=', { value: 'inert' }),
    opt('f|footer-numbering=', { value: 'pattern' }),
    opt('h|header-numbering=', { value: 'pattern' }),
    opt('i|line-increment='),
    opt('l|join-blank-lines='),
    opt('n|number-format='),
    opt('p|no-renumber'),
    opt('s|number-separator=', { value: 'inert' }),
    opt('v|starting-line-number='),
    opt('w|number-width='),
    ...GNU_STANDARD,
  ],
  plan: readAll,
};

export const PASTE: ProgramModel = {
  name: 'paste',
  syntax: GNU,
  options: [opt('d|delimiters=', { value: 'inert' }), ...flags('s|serial', 'z|zero-terminated'), ...GNU_STANDARD],
  plan: readAll,
};

export const REV: ProgramModel = { name: 'rev', syntax: GNU, options: flags('h|help', 'V|version'), plan: readAll };

export const TAC: ProgramModel = {
  name: 'tac',
  syntax: GNU,
  options: [...flags('b|before', 'r|regex'), opt('s|separator=', { value: 'inert' }), ...GNU_STANDARD],
  plan: readAll,
};

export const NUMFMT: ProgramModel = {
  name: 'numfmt',
  syntax: GNU,
  options: [
    ...flags('debug', 'grouping', 'z|zero-terminated'),
    opt('d|delimiter=', { value: 'inert' }),
    opt('field='),
    opt('format=', { value: 'inert' }),
    opt('from='),
    opt('from-unit='),
    opt('header[=]'),
    opt('invalid='),
    opt('padding='),
    opt('round='),
    opt('suffix=', { value: 'inert' }),
    opt('to='),
    opt('to-unit='),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('inert', operands) }),
};

// base64 has no output file: it reads FILE (or stdin) and prints. A second operand is an error.
export const BASE64: ProgramModel = {
  name: 'base64',
  syntax: GNU,
  options: [...flags('d|decode', 'i|ignore-garbage'), opt('w|wrap='), ...GNU_STANDARD],
  plan: readAtMost(1),
};

// fold, expand and unexpand take the obsolete `-8` (a width or tab stop) as digit options with an optional value (`-12`).
const DIGIT_WIDTH = opt('0|1|2|3|4|5|6|7|8|9[=]');

export const FOLD: ProgramModel = {
  name: 'fold',
  syntax: GNU,
  options: [DIGIT_WIDTH, ...flags('b|bytes', 's|spaces'), opt('w|width='), ...GNU_STANDARD],
  plan: readAll,
};

export const EXPAND: ProgramModel = {
  name: 'expand',
  syntax: GNU,
  options: [DIGIT_WIDTH, opt('i|initial'), opt('t|tabs='), ...GNU_STANDARD],
  plan: readAll,
};

export const UNEXPAND: ProgramModel = {
  name: 'unexpand',
  syntax: GNU,
  options: [DIGIT_WIDTH, ...flags('a|all', 'first-only'), opt('t|tabs='), ...GNU_STANDARD],
  plan: readAll,
};

export const COMM: ProgramModel = {
  name: 'comm',
  syntax: GNU,
  options: [...flags('1', '2', '3', 'check-order', 'nocheck-order', 'total', 'z|zero-terminated'), opt('output-delimiter=', { value: 'inert' }), ...GNU_STANDARD],
  plan: readAtMost(2),
};

export const JOIN: ProgramModel = {
  name: 'join',
  syntax: GNU,
  options: [
    opt('a='),
    opt('e=', { value: 'inert' }),
    opt('i|ignore-case'),
    opt('j='),
    opt('o='),
    opt('t=', { value: 'inert' }),
    opt('v='),
    opt('1='),
    opt('2='),
    ...flags('check-order', 'nocheck-order', 'header', 'z|zero-terminated'),
    ...GNU_STANDARD,
  ],
  plan: readAtMost(2),
};

// od's operands are files, or offsets and labels (`od -c f +10`): all are taken as files, which only adds reads.
export const OD: ProgramModel = {
  name: 'od',
  syntax: GNU,
  options: [
    opt('A|address-radix='),
    opt('endian='),
    opt('j|skip-bytes='),
    opt('N|read-bytes='),
    // `-S BYTES` needs its value; `--strings` may go without one.
    opt('S='),
    opt('strings[=]'),
    opt('t|format='),
    opt('v|output-duplicates'),
    opt('w|width[=]'),
    opt('traditional'),
    ...flags('a', 'b', 'c', 'd', 'f', 'i', 'l', 'o', 's', 'x'),
    ...GNU_STANDARD,
  ],
  plan: readAll,
};

export const TEXT_TOOLS: readonly ProgramModel[] = [CUT, TR, NL, PASTE, REV, TAC, NUMFMT, BASE64, FOLD, EXPAND, UNEXPAND, COMM, JOIN, OD];
