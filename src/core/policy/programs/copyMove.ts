// cp and mv (GNU coreutils 9.1): sources are read (mv also removes them, a
// write), the destination is written: the last operand, or -t DIR. A
// destination that is a directory receives DEST/<name of the source>, so that
// path is a write too. A recursive copy or a move lands a whole tree whose
// names only the file system knows (`treeWrites`); a recursive copy reads its
// sources as trees (R-SH-10).
import type { ShellWord } from '../shellCommand.js';
import { flags, GNU, GNU_STANDARD, opt, type OptionsSeen, type OperandPlan, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';
import type { TreeRead, TreeWrite } from './programVerdict.js';

/** DEST/<last component of SOURCE>, where a copy into a directory lands. */
export function landingPath(dest: ShellWord, source: ShellWord, parents: boolean): ShellWord {
  const trimmed = source.text.replace(/\/+$/, '');
  const name = parents ? trimmed.replace(/^\/+/, '') : trimmed.slice(trimmed.lastIndexOf('/') + 1);
  const base = dest.text.replace(/\/+$/, '');
  return { text: `${base === '' && dest.text.startsWith('/') ? '' : base}/${name === '' ? '.' : name}`, static: true, ...(dest.tilde === true ? { tilde: true } : {}) };
}

interface CopyShape {
  move: boolean;
  recursive: boolean;
  follow: boolean;
}

function planCopy(shape: CopyShape, options: OptionsSeen, operands: readonly ParsedOperand[]): OperandPlan {
  const suffix = options.values('--suffix').find((s) => s.text.includes('/'));
  if (suffix !== undefined) return { kinds: [], refused: { reason: `the backup suffix ${JSON.stringify(suffix.text)} names another directory`, option: '--suffix' } };
  const target = options.values('--target-directory')[0];
  const exact = options.has('--no-target-directory');
  const parents = options.has('--parents');
  const words = operands.map((o) => o.word);
  let sources: ShellWord[];
  let dest: ShellWord;
  let kinds: WordKind[];
  if (target !== undefined) {
    sources = words;
    dest = target;
    kinds = words.map(() => 'read-path');
  } else {
    if (words.length < 2) return { kinds: [], refused: { reason: `${shape.move ? 'mv' : 'cp'} needs a source and a destination` } };
    if (exact && words.length > 2) return { kinds: [], refused: { reason: 'with -T there is exactly one source' } };
    sources = words.slice(0, -1);
    dest = words[words.length - 1] as ShellWord;
    kinds = words.map((_w, i) => (i === words.length - 1 ? 'write-path' : 'read-path'));
  }
  const landings = exact ? [] : sources.filter((s) => s.static).map((s) => landingPath(dest, s, parents));
  const writes = [...(shape.move ? sources : []), ...landings];
  const treeWrites: TreeWrite[] = shape.move || shape.recursive ? sources.map((from) => ({ from, to: dest })) : [];
  const trees: TreeRead[] = shape.recursive ? sources.map((dir) => ({ dir, hidden: true, ...(shape.follow ? { follow: true } : {}) })) : [];
  return { kinds, extra: { writes, trees, ...(treeWrites.length > 0 ? { treeWrites } : {}) } };
}

export const CP: ProgramModel = {
  name: 'cp',
  syntax: GNU,
  options: [
    ...flags(
      'a|archive', 'attributes-only', 'b', 'copy-contents', 'd', 'f|force', 'i|interactive', 'H', 'l|link', 'L|dereference', 'n|no-clobber',
      'P|no-dereference', 'p', 'parents', 'r|R|recursive', 'remove-destination', 'strip-trailing-slashes', 's|symbolic-link',
      'T|no-target-directory', 'u|update', 'v|verbose', 'x|one-file-system', 'Z',
    ),
    opt('backup[=]'),
    opt('preserve[=]'),
    opt('no-preserve='),
    opt('reflink[=]'),
    opt('sparse='),
    opt('S|suffix='),
    opt('t|target-directory=', { value: 'write-path' }),
    opt('context[=]'),
    ...GNU_STANDARD,
  ],
  plan: (options, operands) =>
    planCopy({ move: false, recursive: options.has('--archive', '--recursive'), follow: options.has('--dereference') }, options, operands),
};

export const MV: ProgramModel = {
  name: 'mv',
  syntax: GNU,
  options: [
    ...flags('b', 'f|force', 'i|interactive', 'n|no-clobber', 'strip-trailing-slashes', 'T|no-target-directory', 'u|update', 'v|verbose', 'Z|context'),
    opt('backup[=]'),
    opt('S|suffix='),
    opt('t|target-directory=', { value: 'write-path' }),
    ...GNU_STANDARD,
  ],
  plan: (options, operands) => planCopy({ move: true, recursive: false, follow: false }, options, operands),
};
