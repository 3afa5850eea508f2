// Minimal edits to JSON text: add or remove one object member or array element,
// or replace one value, leaving every other byte of the file as it was, so a
// hand-formatted settings file keeps its layout and the diff shows only
// assent's lines. The text must already be valid JSON (callers parse it first).

export type JsonNode =
  | { kind: 'object'; start: number; end: number; members: JsonMember[] }
  | { kind: 'array'; start: number; end: number; elements: JsonNode[] }
  | { kind: 'scalar'; start: number; end: number };

export interface JsonMember {
  key: string;
  keyStart: number;
  value: JsonNode;
}

/** Parses JSON text into nodes with their offsets; `end` is just past the node. */
export function parseJsonTree(text: string): JsonNode {
  let i = 0;
  const skip = (): void => {
    while (i < text.length && ' \t\n\r\uFEFF'.includes(text[i] as string)) i += 1;
  };
  const stringEnd = (from: number): number => {
    let j = from + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    return j + 1;
  };
  const value = (): JsonNode => {
    skip();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i += 1;
      const members: JsonMember[] = [];
      skip();
      while (text[i] !== '}' && i < text.length) {
        const keyStart = i;
        i = stringEnd(i);
        const key = JSON.parse(text.slice(keyStart, i)) as string;
        skip();
        i += 1; // ':'
        members.push({ key, keyStart, value: value() });
        skip();
        if (text[i] === ',') i += 1;
        skip();
      }
      i += 1;
      return { kind: 'object', start, end: i, members };
    }
    if (c === '[') {
      i += 1;
      const elements: JsonNode[] = [];
      skip();
      while (text[i] !== ']' && i < text.length) {
        elements.push(value());
        skip();
        if (text[i] === ',') i += 1;
        skip();
      }
      i += 1;
      return { kind: 'array', start, end: i, elements };
    }
    if (c === '"') i = stringEnd(i);
    else while (i < text.length && !',}] \t\n\r'.includes(text[i] as string)) i += 1;
    return { kind: 'scalar', start, end: i };
  };
  return value();
}

export interface TextFormat {
  /** One indentation step; '' when the file is on one line. */
  indent: string;
  eol: string;
}

/** The whitespace at the start of the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
}

/** Whether `offset` is the first non-blank character of its line. */
function startsLine(text: string, offset: number): boolean {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return text.slice(lineStart, offset).trim() === '';
}

/** JSON text of `value` laid out for a place whose lines start with `indent` (one line for a one-line place). */
function render(value: unknown, format: TextFormat, indent: string, multiline: boolean): string {
  if (!multiline || format.indent === '') return JSON.stringify(value);
  return JSON.stringify(value, null, format.indent).split('\n').join(`${format.eol}${indent}`);
}

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

/**
 * Where a new child of `container` goes and how it is laid out: after the last
 * child (or inside an empty container), on a line of its own when the
 * container spans lines, indented like its siblings.
 */
function insertion(text: string, container: JsonNode & { kind: 'object' | 'array' }, format: TextFormat): { at: number; prefix: string; suffix: string; indent: string; multiline: boolean } {
  const children = container.kind === 'object' ? container.members.map((m) => ({ start: m.keyStart, end: m.value.end })) : container.elements;
  const multiline = format.indent !== '' && (text.slice(container.start, container.end).includes('\n') || children.length === 0);
  const first = children[0];
  const last = children[children.length - 1];
  const outer = lineIndent(text, container.start);
  const indent = first !== undefined && startsLine(text, first.start) ? lineIndent(text, first.start) : `${outer}${format.indent}`;
  if (last === undefined) {
    // Empty container: replace whatever whitespace is inside it.
    return multiline
      ? { at: container.start + 1, prefix: `${format.eol}${indent}`, suffix: `${format.eol}${outer}`, indent, multiline }
      : { at: container.start + 1, prefix: '', suffix: '', indent, multiline };
  }
  const separator = multiline && startsLine(text, last.start) ? `,${format.eol}${indent}` : ', ';
  return { at: last.end, prefix: separator, suffix: '', indent, multiline: multiline && startsLine(text, last.start) };
}

/** Adds `"key": value` as the last member of the object at `node`. */
export function insertMember(text: string, node: JsonNode, key: string, value: unknown, format: TextFormat): string {
  if (node.kind !== 'object') return text;
  const place = insertion(text, node, format);
  const member = `${JSON.stringify(key)}: ${render(value, format, place.indent, place.multiline)}`;
  const end = node.members.length === 0 ? node.end - 1 : place.at;
  return splice(text, place.at, end, `${place.prefix}${member}${place.suffix}`);
}

/** Adds `value` as the last element of the array at `node`. */
export function appendElement(text: string, node: JsonNode, value: unknown, format: TextFormat): string {
  if (node.kind !== 'array') return text;
  const place = insertion(text, node, format);
  const end = node.elements.length === 0 ? node.end - 1 : place.at;
  return splice(text, place.at, end, `${place.prefix}${render(value, format, place.indent, place.multiline)}${place.suffix}`);
}

/** Replaces the value at `node` with `value`, laid out from the indentation of its line. */
export function replaceValue(text: string, node: JsonNode, value: unknown, format: TextFormat): string {
  const multiline = text.slice(node.start, node.end).includes('\n');
  return splice(text, node.start, node.end, render(value, format, lineIndent(text, node.start), multiline));
}

/**
 * Removes the `index`-th child of an object or array with its separator: after
 * a previous sibling, from that sibling's end; as the first of several, up to
 * the next one; as the only child, everything between the brackets.
 */
export function removeChild(text: string, container: JsonNode, index: number): string {
  const children =
    container.kind === 'object' ? container.members.map((m) => ({ start: m.keyStart, end: m.value.end })) : container.kind === 'array' ? container.elements : [];
  const child = children[index];
  if (child === undefined) return text;
  const previous = children[index - 1];
  const next = children[index + 1];
  if (previous !== undefined) return splice(text, previous.end, child.end, '');
  if (next !== undefined) return splice(text, child.start, next.start, '');
  return splice(text, container.start + 1, container.end - 1, '');
}

/** The member `key` of an object node: the last one, as JSON.parse keeps the last of repeated keys. */
export function memberOf(node: JsonNode | undefined, key: string): JsonMember | undefined {
  return node?.kind === 'object' ? node.members.findLast((m) => m.key === key) : undefined;
}
