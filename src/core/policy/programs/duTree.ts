// du (GNU coreutils 9.1) and tree (2.1): they walk directories but report only
// names and sizes, so they are no recursive reads (R-SH-10). tree -o writes its
// listing to a file and -R writes one into every directory: both refused.
import { every, flags, GNU, GNU_STANDARD, opt, type OptionSyntax, type ProgramModel } from './programModel.js';

export const DU: ProgramModel = {
  name: 'du',
  syntax: GNU,
  options: [
    ...flags(
      '0|null', 'a|all', 'apparent-size', 'b|bytes', 'c|total', 'D|H|dereference-args', 's|summarize', 'h|human-readable', 'inodes',
      'L|dereference', 'l|count-links', 'P|no-dereference', 'S|separate-dirs', 'si', 'x|one-file-system', 'k', 'm',
    ),
    // du only sizes the files named in the list, so a list of unknown names reads nothing.
    opt('files0-from=', { value: 'read-path' }),
    opt('B|block-size='),
    opt('d|max-depth='),
    opt('t|threshold='),
    opt('time[=]'),
    opt('time-style='),
    opt('X|exclude-from=', { value: 'read-path' }),
    opt('exclude=', { value: 'pattern' }),
    ...GNU_STANDARD,
  ],
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};

// tree takes each value of a short option from the following words (`-L 2`, `-LP 2 '*.go'`)
// and matches long options by their exact names.
const TREE_SYNTAX: OptionSyntax = { long: 'exact', permute: true, shortValues: 'next' };

export const TREE: ProgramModel = {
  name: 'tree',
  syntax: TREE_SYNTAX,
  options: [
    ...flags(
      'a', 'd', 'l', 'f', 'x', 'gitignore', 'ignore-case', 'matchdirs', 'metafirst', 'prune', 'info', 'noreport', 'q', 'N', 'Q', 'p', 'u',
      'g', 's', 'h', 'si', 'du', 'D', 'F', 'inodes', 'device', 'v', 't', 'c', 'U', 'r', 'dirsfirst', 'filesfirst', 'i', 'A', 'S', 'n', 'C',
      'X', 'J', 'nolinks', 'fromfile', 'fromtabfile', 'fflinks', 'version', 'help',
    ),
    opt('L='),
    opt('P=', { value: 'pattern' }),
    opt('I=', { value: 'pattern' }),
    opt('gitfile=', { value: 'read-path' }),
    opt('infofile=', { value: 'read-path' }),
    opt('charset='),
    opt('filelimit='),
    opt('timefmt=', { value: 'inert' }),
    opt('sort='),
    opt('H=', { value: 'inert' }),
    opt('T=', { value: 'inert' }),
    opt('hintro=', { value: 'read-path' }),
    opt('houtro=', { value: 'read-path' }),
    opt('o=', { refuse: 'writes the listing to a file' }),
    opt('R', { refuse: 'writes a listing file into every directory (with -o)' }),
  ],
  // With --fromfile the operands are files of names; either way tree reads them.
  plan: (_options, operands) => ({ kinds: every('read-path', operands) }),
};
