// Programs that print what is in the files they are given: cat, head, tail, wc
// (GNU coreutils 9.1). Every operand is a file read; no option writes or runs anything.
import { every, flags, GNU, GNU_STANDARD, opt, WHY, type ProgramModel } from './programModel.js';

const readAll: ProgramModel['plan'] = (_options, operands) => ({ kinds: every('read-path', operands) });

export const CAT: ProgramModel = {
  name: 'cat',
  syntax: GNU,
  options: [
    ...flags('A|show-all', 'b|number-nonblank', 'e', 'E|show-ends', 'n|number', 's|squeeze-blank', 't', 'T|show-tabs', 'u', 'v|show-nonprinting'),
    ...GNU_STANDARD,
  ],
  plan: readAll,
};

// Digits are options too: `head -5` is the obsolete form of `-n 5`.
const DIGITS = opt('0|1|2|3|4|5|6|7|8|9');

export const HEAD: ProgramModel = {
  name: 'head',
  syntax: GNU,
  options: [DIGITS, opt('c|bytes='), opt('n|lines='), ...flags('q|quiet|silent', 'v|verbose', 'z|zero-terminated'), ...GNU_STANDARD],
  plan: readAll,
};

export const TAIL: ProgramModel = {
  name: 'tail',
  syntax: GNU,
  options: [
    DIGITS,
    // `b` and `l` are the suffixes of the obsolete `-5l`; getopt knows them as letters.
    ...flags('b', 'l', 'f', 'F', 'retry', 'q|quiet|silent', 'v|verbose', 'z|zero-terminated'),
    opt('c|bytes='),
    opt('n|lines='),
    opt('follow[=]'),
    opt('max-unchanged-stats='),
    opt('pid='),
    opt('s|sleep-interval='),
    ...GNU_STANDARD,
  ],
  plan: readAll,
};

export const WC: ProgramModel = {
  name: 'wc',
  syntax: GNU,
  options: [
    ...flags('c|bytes', 'm|chars', 'l|lines', 'L|max-line-length', 'w|words', 'debug'),
    opt('files0-from=', { refuse: WHY.fileList }),
    ...GNU_STANDARD,
  ],
  plan: readAll,
};
