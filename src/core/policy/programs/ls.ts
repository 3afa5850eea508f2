// ls (GNU coreutils 9.1): lists names and metadata, never file contents, so
// even `-R` is no recursive read (R-SH-10). Every operand is a path it reads.
import { every, flags, GNU, GNU_STANDARD, opt, type ProgramModel } from './programModel.js';

export const LS: ProgramModel = {
  name: 'ls',
  syntax: GNU,
  options: [
    ...flags(
      '1', 'a|all', 'A|almost-all', 'author', 'b|escape', 'B|ignore-backups', 'c', 'C', 'd|directory', 'D|dired', 'f', 'file-type',
      'full-time', 'g', 'group-directories-first', 'G|no-group', 'h|human-readable', 'si', 'H|dereference-command-line',
      'dereference-command-line-symlink-to-dir', 'i|inode', 'k|kibibytes', 'l', 'L|dereference', 'm', 'n|numeric-uid-gid',
      'N|literal', 'o', 'p', 'q|hide-control-chars', 'show-control-chars', 'Q|quote-name', 'r|reverse', 'R|recursive', 's|size',
      'S', 't', 'u', 'U', 'v', 'x', 'X', 'Z|context', 'zero',
    ),
    opt('block-size='),
    opt('color[=]'),
    opt('F|classify[=]'),
    opt('format='),
    opt('hide=', { value: 'pattern' }),
    opt('hyperlink[=]'),
    opt('indicator-style='),
    opt('I|ignore=', { value: 'pattern' }),
    opt('quoting-style='),
    opt('sort='),
    opt('time='),
    opt('time-style='),
    opt('T|tabsize='),
    opt('w|width='),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};
