// Minimal edits to a settings file's JSON text: add or remove one object member
// or array element, or replace one value, leaving every other byte as it was,
// so a hand-formatted file keeps its layout and comments and the diff shows
// only assent's lines. Nodes and their offsets come from jsonc-parser; this
// file only decides where the inserted text goes and which separator and
// whitespace a removal takes with it. A comment between children is never
// removed: a removal next to one takes the child and its comma and leaves the
// comment where it was.
import { createScanner, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError, type SyntaxKind } from 'jsonc-parser';
import { AssentError } from '../../core/base/errors.js';

/** The scanner's token kinds used here (jsonc-parser declares them as a const enum, which this build cannot import). */
const COMMA = 5 as SyntaxKind;
const LINE_COMMENT = 12 as SyntaxKind;
const BLOCK_COMMENT = 13 as SyntaxKind;
const LINE_BREAK = 14 as SyntaxKind;
const WHITESPACE = 15 as SyntaxKind;
const EOF = 17 as SyntaxKind;

export type JsonNode = Node;

export interface TextFormat {
  /** One indentation step; '' when the file is on one line. */
  indent: string;
  eol: string;
}

/** The node tree of JSON (or JSON with comments and trailing commas) text; throws on anything else. */
export function parseJsonTree(text: string): JsonNode {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  const first = errors[0];
  if (first !== undefined || root === undefined) {
    throw new AssentError('invalid_input', `the settings text is not JSON (${first === undefined ? 'it is empty' : `${printParseErrorCode(first.error)} at offset ${first.offset}`}); fix the file, then run this again`);
  }
  return root;
}

/** The value a node stands for (jsonc-parser's reading of it). */
export function valueOf(node: JsonNode): unknown {
  return getNodeValue(node);
}

const end = (node: JsonNode): number => node.offset + node.length;
const children = (node: JsonNode): JsonNode[] => (node.type === 'object' || node.type === 'array' ? (node.children ?? []) : []);

/** The member `key` of an object node (a property node: key, then value): the last one, as JSON.parse keeps the last of repeated keys. */
export function memberOf(node: JsonNode | undefined, key: string): JsonNode | undefined {
  return node?.type === 'object' ? children(node).findLast((member) => member.children?.[0]?.value === key) : undefined;
}

/** The value node of a member. */
export function memberValue(member: JsonNode | undefined): JsonNode | undefined {
  return member?.children?.[1];
}

interface Token {
  kind: SyntaxKind;
  start: number;
  end: number;
}

const isComment = (token: Token): boolean => token.kind === LINE_COMMENT || token.kind === BLOCK_COMMENT;

/** The commas and comments in text[from, to) (whitespace left out); between two nodes there is nothing else. */
function tokensBetween(text: string, from: number, to: number): Token[] {
  const scanner = createScanner(text.slice(from, to), false);
  const tokens: Token[] = [];
  for (let kind = scanner.scan(); kind !== EOF; kind = scanner.scan()) {
    if (kind === WHITESPACE || kind === LINE_BREAK) continue;
    const start = from + scanner.getTokenOffset();
    tokens.push({ kind, start, end: start + scanner.getTokenLength() });
  }
  return tokens;
}

/** The text inside a container's brackets. */
const inner = (container: JsonNode): { start: number; end: number } => ({ start: container.offset + 1, end: end(container) - 1 });

/** Whether a container holds a comment of its own (between its children, not inside them). */
export function holdsComments(text: string, container: JsonNode): boolean {
  const { start, end: stop } = inner(container);
  const bounds = [start, ...children(container).flatMap((child) => [child.offset, end(child)]), stop];
  for (let i = 0; i < bounds.length; i += 2) {
    if (tokensBetween(text, bounds[i] as number, bounds[i + 1] as number).some(isComment)) return true;
  }
  return false;
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

/** The text with the ranges [start, end) cut out and `insert` put at the first one (ranges in order, not overlapping). */
function cut(text: string, ranges: [number, number][], insert = ''): string {
  let result = text.slice(0, ranges[0]?.[0] ?? text.length) + insert;
  ranges.forEach(([, stop], i) => {
    result += text.slice(stop, ranges[i + 1]?.[0] ?? text.length);
  });
  return result;
}

/**
 * Where a removal that follows `token` starts: at its end, except after a line
 * comment when what follows the removal is not a line break, which must then
 * stay to end the comment.
 */
function cutFrom(text: string, token: Token, removalEnd: number): number {
  if (token.kind !== LINE_COMMENT || /^[ \t]*(\r?\n|$)/.test(text.slice(removalEnd))) return token.end;
  return token.end + (text.startsWith('\r\n', token.end) ? 2 : 1);
}

/**
 * Adds a child (laid out by `child`) after the last one, or inside an empty
 * container: on a line of its own when the container spans lines, indented like
 * its siblings; after a comment that ends the last child's line, with the comma
 * right behind that child; followed by a comma when the last child had a trailing one.
 */
function insertChild(text: string, container: JsonNode, child: (indent: string, multiline: boolean) => string, format: TextFormat): string {
  const kids = children(container);
  const { start, end: stop } = inner(container);
  const multiline = format.indent !== '' && (text.slice(container.offset, end(container)).includes('\n') || kids.length === 0);
  const first = kids[0];
  const last = kids[kids.length - 1];
  const outer = lineIndent(text, container.offset);
  const indent = first !== undefined && startsLine(text, first.offset) ? lineIndent(text, first.offset) : `${outer}${format.indent}`;
  if (last === undefined) {
    const comment = tokensBetween(text, start, stop).findLast(isComment);
    // Comments inside an empty container stay; the child goes after them.
    if (comment !== undefined) return cut(text, [[comment.end, comment.end]], `${multiline ? `${format.eol}${indent}` : ' '}${child(indent, multiline)}`);
    // Otherwise whatever whitespace is inside it is replaced.
    return cut(text, [[start, stop]], multiline ? `${format.eol}${indent}${child(indent, true)}${format.eol}${outer}` : child(indent, false));
  }
  if (!multiline || !startsLine(text, last.offset)) return cut(text, [[end(last), end(last)]], `, ${child(indent, false)}`);
  const after = tokensBetween(text, end(last), stop);
  const lineEnd = text.indexOf('\n', end(last));
  const comma = after.find((token) => token.kind === COMMA);
  const onItsLine = after.filter((token) => lineEnd < 0 || token.start < lineEnd);
  const at = Math.max(onItsLine[onItsLine.length - 1]?.end ?? end(last), comma?.end ?? 0);
  const line = `${format.eol}${indent}${child(indent, true)}`;
  if (comma !== undefined) return cut(text, [[at, at]], `${line},`);
  if (at === end(last)) return cut(text, [[at, at]], `,${line}`);
  return `${text.slice(0, end(last))},${text.slice(end(last), at)}${line}${text.slice(at)}`;
}

/** Adds `"key": value` as the last member of the object at `node`. */
export function insertMember(text: string, node: JsonNode, key: string, value: unknown, format: TextFormat): string {
  if (node.type !== 'object') return text;
  return insertChild(text, node, (indent, multiline) => `${JSON.stringify(key)}: ${render(value, format, indent, multiline)}`, format);
}

/** Adds `value` as the last element of the array at `node`. */
export function appendElement(text: string, node: JsonNode, value: unknown, format: TextFormat): string {
  if (node.type !== 'array') return text;
  return insertChild(text, node, (indent, multiline) => render(value, format, indent, multiline), format);
}

/** Replaces the value at `node` with `value`, laid out from the indentation of its line. */
export function replaceValue(text: string, node: JsonNode, value: unknown, format: TextFormat): string {
  const multiline = text.slice(node.offset, end(node)).includes('\n');
  return cut(text, [[node.offset, end(node)]], render(value, format, lineIndent(text, node.offset), multiline));
}

/**
 * Removes the `index`-th child of an object or array with one separator: a
 * child with a comma right behind it, from what stands before it (a comma or
 * a comment) through that comma; otherwise after a previous sibling, from that
 * sibling's end (the comma before it, when a comment sits between them); as
 * the first of several, up to the next one; as the only child, everything
 * between the brackets that is not a comment. The inverse of insertChild.
 */
export function removeChild(text: string, container: JsonNode, index: number): string {
  const kids = children(container);
  const child = kids[index];
  if (child === undefined) return text;
  const { start, end: stop } = inner(container);
  const previous = kids[index - 1];
  const next = kids[index + 1];
  const before = tokensBetween(text, previous === undefined ? start : end(previous), child.offset);
  const after = tokensBetween(text, end(child), next === undefined ? stop : next.offset);
  const beforeComma = before.find((token) => token.kind === COMMA);
  const afterComma = after.find((token) => token.kind === COMMA);
  const lastBefore = before[before.length - 1];
  if (afterComma?.start === end(child) && (lastBefore !== undefined || next === undefined || after.some(isComment))) {
    // The child and the comma right behind it go; what stood before it (a comma, a comment) stays.
    return cut(text, [[lastBefore === undefined ? start : cutFrom(text, lastBefore, afterComma.end), afterComma.end]]);
  }
  if (previous !== undefined && beforeComma !== undefined) {
    if (!before.some(isComment)) return cut(text, [[end(previous), end(child)]]);
    if (lastBefore === beforeComma) return cut(text, [[beforeComma.start, end(child)]]);
    return cut(text, [
      [beforeComma.start, beforeComma.end],
      [cutFrom(text, lastBefore as Token, end(child)), end(child)],
    ]);
  }
  if (next !== undefined && afterComma !== undefined) {
    if (!after.some(isComment)) return cut(text, [[child.offset, next.offset]]);
    const following = after[after.indexOf(afterComma) + 1];
    return cut(text, [
      [child.offset, end(child)],
      [afterComma.start, following?.start ?? next.offset],
    ]);
  }
  if (!before.some(isComment) && !after.some(isComment)) return cut(text, [[start, stop]]);
  // The only child, with comments around it: they stay, and so does the line break a line comment before it needs.
  const from = lastBefore === undefined ? start : cutFrom(text, lastBefore, end(child));
  return cut(text, afterComma === undefined ? [[from, end(child)]] : [[from, end(child)], [afterComma.start, afterComma.end]]);
}
