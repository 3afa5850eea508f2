// The `time`, `coproc` and `!` reserved words (R-SH-8). Tree-sitter's grammar
// reads the first two as command names, so `time { rm -rf ~; }` becomes the
// command `time { rm -rf ~` and a stray `}`, and takes `! { …; }` for a command
// named `{`. Bash reads a keyword there: the keyword (with `time -p`, `coproc
// NAME`) is blanked out of the source, keeping every offset, and the line is
// parsed again; what `coproc` does is kept as a header command.
import type * as TreeSitter from 'web-tree-sitter';

type Node = TreeSitter.Node;

/** A `coproc` before a compound command: the word-less header command that assigns its name. */
export interface KeywordHeader {
  /** Offset of the compound command the keyword applied to. */
  at: number;
  text: string;
  assigns: string[];
}

export interface KeywordRewrite {
  source: string;
  headers: KeywordHeader[];
}

/** A compound command starts here: `{`, `(`, `((`, `[[` or a reserved word that opens one. */
const COMPOUND = /^(?:\{(?=[\s])|\(|\[\[(?=[\s])|(?:if|while|until|for|case|select)(?=[\s;]|$))/;
const COPROC_NAME = /^([A-Za-z_][A-Za-z0-9_]*)[ \t]+/;

/** Whether `node` starts a pipeline: bash reads `time` as a keyword only there (`a | time b` runs the program time). */
function startsPipeline(command: Node): boolean {
  let node: Node = command;
  let parent = node.parent;
  if (parent?.type === 'redirected_statement') {
    node = parent;
    parent = node.parent;
  }
  return parent?.type !== 'pipeline' || parent.firstNamedChild?.startIndex === node.startIndex;
}

/** A keyword at the very start of its command: nothing (an assignment, a redirection) before it. */
function keywordOf(name: Node): string | undefined {
  const command = name.parent;
  if (command?.type !== 'command' || command.firstNamedChild?.startIndex !== name.startIndex) return undefined;
  const word = name.childCount === 1 ? name.firstChild : null;
  if (word?.type !== 'word') return undefined;
  return word.text === 'time' || word.text === 'coproc' ? word.text : undefined;
}

function blank(chars: string[], start: number, end: number): void {
  for (let i = start; i < end; i += 1) if (chars[i] !== '\n') chars[i] = ' ';
}

/** Blanks the `time`/`coproc`/`!` keywords bash would see; undefined when there are none. */
export function rewriteKeywords(root: Node, source: string): KeywordRewrite | undefined {
  let chars: string[] | undefined;
  const headers: KeywordHeader[] = [];
  for (const name of root.descendantsOfType('command_name')) {
    if (name === null) continue;
    const keyword = keywordOf(name);
    if (keyword === undefined) continue;
    const start = name.startIndex;
    let end = name.endIndex;
    const after = (at: number): string => source.slice(at).replace(/^[ \t]+/, '');
    const skipped = (at: number): number => at + (source.slice(at).length - after(at).length);
    if (keyword === 'time') {
      if (!startsPipeline(name.parent as Node)) continue;
      // `time -p`, `time --`, `time -p --` (bash's TIMEOPT and TIMEIGN)
      for (const option of ['-p', '--']) {
        const at = skipped(end);
        if (source.startsWith(option, at) && /^(?:[\s;&|]|$)/.test(source.slice(at + option.length, at + option.length + 1))) end = at + option.length;
      }
    } else {
      const at = skipped(end);
      const rest = source.slice(at);
      if (COMPOUND.test(rest)) headers.push({ at, text: 'coproc', assigns: ['COPROC', 'COPROC_PID'] });
      else {
        const named = COPROC_NAME.exec(rest);
        if (named === null || !COMPOUND.test(rest.slice(named[0].length))) continue; // `coproc cmd …`: a wrapper of a simple command
        const coprocName = named[1] as string;
        end = at + coprocName.length;
        headers.push({ at: at + named[0].length, text: `coproc ${coprocName}`, assigns: [coprocName, `${coprocName}_PID`] });
      }
    }
    chars ??= source.split(''); // UTF-16 units, as the tree's offsets count
    blank(chars, start, end);
  }
  // `!` only inverts the status, and the grammar takes `! { …; }` or `! if …` for a command named `{` or `if`.
  for (const negated of root.descendantsOfType('negated_command')) {
    const bang = negated?.firstChild;
    if (bang === null || bang === undefined || bang.type !== '!') continue;
    chars ??= source.split('');
    blank(chars, bang.startIndex, bang.endIndex);
  }
  return chars === undefined ? undefined : { source: chars.join(''), headers };
}
