// sort and uniq (GNU coreutils 9.1). sort reads its operands; -o writes and
// --compress-program runs a program, so both are refused (by any prefix:
// `--outp`, `--compress-prog`). -T is a directory sort writes temporary files in.
// uniq's second operand is its output file.
import { every, flags, GNU, GNU_STANDARD, opt, WHY, type ProgramModel, type WordKind } from './programModel.js';

export const SORT: ProgramModel = {
  name: 'sort',
  syntax: GNU,
  options: [
    ...flags(
      'b|ignore-leading-blanks', 'd|dictionary-order', 'f|ignore-case', 'g|general-numeric-sort', 'i|ignore-nonprinting', 'M|month-sort',
      'h|human-numeric-sort', 'n|numeric-sort', 'R|random-sort', 'r|reverse', 'V|version-sort', 'C', 'debug', 'm|merge', 's|stable',
      'u|unique', 'z|zero-terminated',
    ),
    opt('random-source=', { value: 'read-path' }),
    opt('sort='),
    opt('batch-size='),
    opt('c|check[=]'),
    opt('k|key=', { value: 'inert' }),
    opt('S|buffer-size='),
    opt('t|field-separator=', { value: 'inert' }),
    opt('T|temporary-directory=', { value: 'write-path' }),
    opt('parallel='),
    opt('o|output=', { refuse: WHY.writes }),
    opt('compress-program=', { refuse: 'runs a program on its temporary files' }),
    opt('files0-from=', { refuse: WHY.fileList }),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};

// `uniq -5` is `uniq -f 5`.
export const UNIQ: ProgramModel = {
  name: 'uniq',
  syntax: GNU,
  options: [
    opt('0|1|2|3|4|5|6|7|8|9'),
    ...flags('c|count', 'd|repeated', 'i|ignore-case', 'u|unique', 'z|zero-terminated', 'D'),
    opt('all-repeated[=]'),
    opt('f|skip-fields='),
    opt('group[=]'),
    opt('s|skip-chars='),
    opt('w|check-chars='),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: operands.slice(0, 2).map((_o, i): WordKind => (i === 0 ? 'read-path' : 'write-path')) }),
};
