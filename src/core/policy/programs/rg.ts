// ripgrep (14.x flag set). Recursive by default: each directory operand, or `.`
// when there is none, is a tree read (R-SH-10) that skips hidden entries unless
// --hidden, `-.`, `-uu`, an include glob or a whitelisting ignore file says
// otherwise (the edge reads the ignore files, treeScan.ts). Options that run programs (--pre,
// --search-zip, --hostname-bin) are refused. ripgrep matches long names exactly.
import { flags, opt, refused, searchTrees, type OptionsSeen, type OptionSyntax, type ParsedOperand, type ProgramModel, type WordKind } from './programModel.js';

const SYNTAX: OptionSyntax = { long: 'exact', permute: true, shortEquals: true };

/**
 * Whether ripgrep may search hidden files: --hidden or `-uu`, and also any
 * include glob (`-g .env`, `--iglob '*'`: a glob that names a hidden file
 * searches it), a type defined on the line (`--type-add 'x:.env' -t x`), or an
 * extra ignore file (whose `!.env` whitelists it). Only `-g '!…'` excludes.
 */
function hidden(options: OptionsSeen): boolean {
  const unrestricted = options.all.filter((o) => o.name === '--unrestricted').length;
  const includes = options.all.some((o) => (o.name === '--glob' || o.name === '--iglob') && !(o.value?.static === true && o.value.text.startsWith('!')));
  return options.has('--hidden', '--type-add', '--ignore-file') || unrestricted >= 2 || includes;
}

function plan(options: OptionsSeen, operands: readonly ParsedOperand[]) {
  if (options.has('--type-list', '--pcre2-version', '--generate')) return { kinds: [] };
  const listing = options.has('--files');
  const patternGiven = listing || options.has('--regexp', '--file');
  const kinds: WordKind[] = operands.map((_o, i) => (i === 0 && !patternGiven ? 'pattern' : 'read-path'));
  if (listing) return { kinds }; // --files prints names only
  const paths = operands.filter((_o, i) => kinds[i] === 'read-path').map((o) => o.word);
  return { kinds, extra: { trees: searchTrees(paths, hidden(options), options.has('--follow')) } };
}

export const RG: ProgramModel = {
  name: 'rg',
  syntax: SYNTAX,
  options: [
    ...flags(
      'h|help', 'V|version', 'pcre2-version', 'line-buffered', 'no-line-buffered', 'block-buffered', 'no-block-buffered',
      'i|ignore-case', 's|case-sensitive', 'S|smart-case', 'column', 'no-column', 'c|count', 'count-matches', 'include-zero',
      'no-include-zero', 'no-encoding', 'l|files-with-matches', 'files-without-match', 'H|with-filename', 'I|no-filename',
      'one-file-system', 'no-one-file-system', 'F|fixed-strings', 'no-fixed-strings', 'L|follow', 'no-follow',
      'glob-case-insensitive', 'no-glob-case-insensitive', 'heading', 'no-heading', '.|hidden', 'no-hidden', 'auto-hybrid-regex',
      'no-auto-hybrid-regex', 'no-ignore', 'ignore', 'ignore-file-case-insensitive', 'no-ignore-file-case-insensitive',
      'no-ignore-exclude', 'ignore-exclude', 'no-ignore-global', 'ignore-global', 'no-ignore-parent', 'ignore-parent',
      'no-ignore-vcs', 'ignore-vcs', 'no-require-git', 'require-git', 'no-ignore-dot', 'ignore-dot', 'no-ignore-files',
      'ignore-files', 'json', 'no-json', 'n|line-number', 'N|no-line-number', 'crlf', 'no-crlf', 'null-data',
      'max-columns-preview', 'no-max-columns-preview', 'no-messages', 'messages', 'no-ignore-messages', 'ignore-messages', 'mmap',
      'no-mmap', 'U|multiline', 'no-multiline', 'multiline-dotall', 'no-multiline-dotall', 'o|only-matching', 'passthru|passthrough',
      'P|pcre2', 'no-pcre2', 'pcre2-unicode', 'no-pcre2-unicode', 'no-pre', 'p|pretty', 'vimgrep', 'sort-files', 'no-sort-files',
      'stats', 'no-stats', 'a|text', 'binary', 'no-binary', 'no-text', 'trim', 'no-trim', 'type-list', 'w|word-regexp',
      'x|line-regexp', 'unicode', 'no-unicode', 'no-search-zip', 'b|byte-offset', 'no-byte-offset', 'no-context-separator',
      'debug', 'trace', 'files', 'v|invert-match', 'no-invert-match', 'no-config', '0|null', 'q|quiet', 'u|unrestricted',
      'stop-on-nonmatch',
    ),
    opt('A|after-context='),
    opt('B|before-context='),
    opt('C|context='),
    opt('E|encoding='),
    opt('engine='),
    opt('f|file=', { value: 'read-path' }),
    opt('generate='),
    opt('g|glob=', { value: 'pattern' }),
    opt('iglob=', { value: 'pattern' }),
    opt('d|max-depth|maxdepth='),
    opt('e|regexp=', { value: 'pattern' }),
    opt('r|replace=', { value: 'inert' }),
    opt('sort='),
    opt('sortr='),
    opt('j|threads='),
    opt('t|type='),
    opt('type-add=', { value: 'inert' }),
    opt('type-clear='),
    opt('T|type-not='),
    opt('color='),
    opt('colors=', { value: 'inert' }),
    opt('context-separator=', { value: 'inert' }),
    opt('field-context-separator=', { value: 'inert' }),
    opt('field-match-separator=', { value: 'inert' }),
    opt('hyperlink-format=', { value: 'inert' }),
    opt('dfa-size-limit='),
    opt('ignore-file=', { value: 'read-path' }),
    opt('M|max-columns='),
    opt('m|max-count='),
    opt('max-bytes='),
    opt('max-filesize='),
    opt('path-separator=', { value: 'inert' }),
    opt('regex-size-limit='),
    opt('pre=', { refuse: 'runs a program on every file searched' }),
    opt('pre-glob=', { refuse: 'chooses the files --pre runs a program on' }),
    ...refused('runs decompression programs on compressed files', 'z|search-zip'),
    opt('hostname-bin=', { refuse: 'runs a program to find the host name' }),
  ],
  plan,
};
