// Here-documents and backticks as bash reads them (R-SH-8). The grammar's own
// split of a here-document body misses backticks and ends some bodies where bash
// does not, so the body is cut from the source by bash's rules and, when its
// delimiter is unquoted, re-parsed as the inside of a double-quoted string.
// Backtick bodies are unescaped as bash does before they are parsed again.
import type * as TreeSitter from 'web-tree-sitter';

type Node = TreeSitter.Node;

/** One `<<`/`<<-` redirection with its body as bash reads it. */
export interface HereDocument {
  op: '<<' | '<<-';
  fd?: number;
  delimiter: string;
  /** A quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<\EOF`): the body is literal. */
  quoted: boolean;
  /** The body, leading tabs removed for `<<-`. */
  body: string;
  /** Why bash and the grammar disagree on where the body ends (a parse error). */
  problem?: string;
}

/** Quote removal on a delimiter word (`E"O"F` → `EOF`). */
function removeQuotes(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i += 1) {
    const ch = raw[i] as string;
    if (ch === '\\') {
      out += raw[i + 1] ?? '';
      i += 1;
    } else if (ch === "'") {
      const end = raw.indexOf("'", i + 1);
      out += raw.slice(i + 1, end < 0 ? raw.length : end);
      i = end < 0 ? raw.length : end;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < raw.length && raw[j] !== '"'; j += 1) {
        if (raw[j] === '\\' && '$`"\\'.includes(raw[j + 1] ?? '')) j += 1;
        out += raw[j];
      }
      i = j;
    } else out += ch;
  }
  return out;
}

/** Where the logical line starting at `pos` ends (after its newline), joining `\`-newline for an unquoted body. */
function logicalLine(source: string, pos: number, join: boolean): { line: string; next: number } {
  let line = '';
  let at = pos;
  for (;;) {
    const nl = source.indexOf('\n', at);
    const physical = source.slice(at, nl < 0 ? source.length : nl);
    const slashes = /\\*$/.exec(physical)?.[0].length ?? 0;
    if (join && nl >= 0 && slashes % 2 === 1) {
      line += physical.slice(0, -1);
      at = nl + 1;
      continue;
    }
    return { line: line + physical, next: nl < 0 ? source.length : nl + 1 };
  }
}

/** Reads a `heredoc_redirect` node: its delimiter and the body bash would feed the command (`source` is the parsed text). */
export function readHereDocument(node: Node, source: string): HereDocument {
  let op: HereDocument['op'] = '<<';
  let fd: number | undefined;
  let start: Node | undefined;
  let body: Node | undefined;
  let end: Node | undefined;
  for (const child of node.children) {
    if (child === null) continue;
    if (child.type === '<<-') op = '<<-';
    else if (child.type === 'file_descriptor') fd = Number(child.text);
    else if (child.type === 'heredoc_start') start = child;
    else if (child.type === 'heredoc_body') body = child;
    else if (child.type === 'heredoc_end') end = child;
  }
  const raw = start?.text ?? '';
  const doc: HereDocument = { op, delimiter: removeQuotes(raw), quoted: /['"\\]/.test(raw), body: '' };
  if (fd !== undefined && Number.isInteger(fd)) doc.fd = fd;
  if (body === undefined) {
    doc.problem = `the here-document ${raw} has no body`;
    return doc;
  }
  let lineStart = body.startIndex;
  while (lineStart > 0 && (source[lineStart - 1] === '\t' || source[lineStart - 1] === ' ')) lineStart -= 1; // the grammar skips leading blanks
  if (lineStart > 0 && source[lineStart - 1] !== '\n') {
    doc.problem = `the body of the here-document ${raw} does not start on a line of its own`;
    return doc;
  }
  // Bash ends the body at the first (logical) line that is exactly the delimiter.
  let bashEnd = source.length;
  for (let pos = lineStart; pos < source.length; ) {
    const { line, next } = logicalLine(source, pos, !doc.quoted);
    if ((op === '<<-' ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
      bashEnd = pos;
      break;
    }
    pos = next;
  }
  let treeEnd = source.length;
  if (end !== undefined && !end.isMissing) {
    treeEnd = end.startIndex;
    while (treeEnd > lineStart && (source[treeEnd - 1] === ' ' || source[treeEnd - 1] === '\t')) treeEnd -= 1;
  }
  if (bashEnd < treeEnd) doc.problem = `bash ends the here-document ${raw} before the line assent's parser ends it at, so the lines between would run as commands`;
  const text = source.slice(lineStart, bashEnd);
  doc.body = op === '<<-' ? text.replace(/^\t+/gm, '') : text;
  return doc;
}

/** Index just after the backtick closing the one at `open`: the first one no backslash escapes (bash's rule). */
export function backtickEnd(text: string, open: number): number | undefined {
  for (let i = open + 1; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '`') return i + 1;
  }
  return undefined;
}

/** A backtick body as bash parses it: `\\`, `` \` ``, `\$` (and `\"` inside double quotes) lose the backslash. */
export function unescapeBackticks(body: string, inDouble: boolean): string {
  if (!body.includes('\\')) return body;
  return body.replace(inDouble ? /\\([\\`$"])/g : /\\([\\`$])/g, '$1');
}

/** Index just after the bracket closing the one at `open` (`(`, `{` or `[`), skipping quotes and nested substitutions. */
function closing(text: string, open: number): number | undefined {
  const opener = text[open] as string;
  const closer = opener === '(' ? ')' : opener === '{' ? '}' : ']';
  let depth = 1;
  // Inside `$(…)` a `case` pattern ends with an unmatched `)`: between `case` and `esac` it closes nothing.
  let cases = 0;
  for (let i = open + 1; i < text.length; i += 1) {
    const ch = text[i] as string;
    if (opener === '(' && /[\s;&|(]/.test(text[i - 1] ?? ' ')) {
      if (/^case[\s]/.test(text.slice(i, i + 5))) cases += 1;
      else if (cases > 0 && /^esac(?:[\s;&|)]|$)/.test(text.slice(i, i + 5))) cases -= 1;
    }
    if (ch === '\\') i += 1;
    else if (ch === "'" && opener !== '[') {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return undefined;
      i = end;
    } else if (ch === '"') {
      const end = doubleQuoteEnd(text, i);
      if (end === undefined) return undefined;
      i = end - 1;
    } else if (ch === '`') {
      const end = backtickEnd(text, i);
      if (end === undefined) return undefined;
      i = end - 1;
    } else if (ch === '$' && '({['.includes(text[i + 1] ?? '')) {
      const end = closing(text, i + 1);
      if (end === undefined) return undefined;
      i = end - 1;
    } else if (ch === opener) depth += 1;
    else if (ch === closer && depth === 1 && cases > 0) continue;
    else if (ch === closer) {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

function doubleQuoteEnd(text: string, open: number): number | undefined {
  for (let i = open + 1; i < text.length; i += 1) {
    const ch = text[i] as string;
    if (ch === '\\') i += 1;
    else if (ch === '"') return i + 1;
    else if (ch === '`' || (ch === '$' && '({['.includes(text[i + 1] ?? ''))) {
      const end = ch === '`' ? backtickEnd(text, i) : closing(text, i + 1);
      if (end === undefined) return undefined;
      i = end - 1;
    }
  }
  return undefined;
}

/** An unquoted body as a double-quoted string with the same meaning, and where its substitutions and `${…}` lie in it. */
export interface HereDocString {
  text: string;
  regions: (readonly [number, number])[];
}

/**
 * Rewrites an unquoted here-document body as `"…"`: in a body `"` is an ordinary
 * character and a backslash escapes only `$`, backtick, `\` and newline, so a
 * top-level `"` becomes `\"` and a backslash before anything else becomes `\\`;
 * `$(…)`, `${…}`, `$[…]` and backticks are copied as they are. Undefined when one
 * of those is not closed.
 */
export function hereDocString(body: string): HereDocString | undefined {
  let out = '"';
  const regions: HereDocString['regions'] = [];
  for (let i = 0; i < body.length; ) {
    const ch = body[i] as string;
    if (ch === '\\') {
      const next = body[i + 1];
      if (next !== undefined && '$`\\\n'.includes(next)) {
        out += ch + next;
        i += 2;
      } else {
        out += '\\\\';
        i += 1;
      }
      continue;
    }
    if (ch === '"') {
      out += '\\"';
      i += 1;
      continue;
    }
    const opens = ch === '`' || (ch === '$' && '({['.includes(body[i + 1] ?? ''));
    if (!opens) {
      out += ch;
      i += 1;
      continue;
    }
    const end = ch === '`' ? backtickEnd(body, i) : closing(body, i + 1);
    if (end === undefined) return undefined;
    regions.push([out.length, out.length + end - i]);
    out += body.slice(i, end);
    i = end;
  }
  return { text: `${out}"`, regions };
}

/**
 * Whether the grammar read the rewritten body as one string whose substitutions
 * and `${…}` lie exactly where the rewrite put them — so no `"` was escaped
 * inside a substitution or left bare outside one.
 */
export function stringMatches(root: Node, doc: HereDocString): Node | undefined {
  if (root.hasError) return undefined;
  const command = root.namedChildCount === 1 ? root.namedChildren[0] : undefined;
  const name = command?.type === 'command' && command.namedChildCount === 1 ? command.namedChildren[0] : undefined;
  const string = name?.type === 'command_name' && name.namedChildCount === 1 ? name.namedChildren[0] : undefined;
  if (string?.type !== 'string' || string.startIndex !== 0 || string.endIndex !== doc.text.length) return undefined;
  const spans = string.namedChildren.filter((c): c is Node => c !== null && c.type !== 'string_content' && c.type !== 'simple_expansion');
  if (spans.length !== doc.regions.length) return undefined;
  for (let i = 0; i < spans.length; i += 1) {
    const span = spans[i] as Node;
    const region = doc.regions[i] as readonly [number, number];
    // (inside a string the grammar counts the blanks before `${`, `$(` or a backtick into the node)
    let start = span.startIndex;
    while (start < region[0] && /\s/.test(doc.text[start] ?? '')) start += 1;
    if (start !== region[0] || span.endIndex !== region[1]) return undefined;
  }
  return string;
}
