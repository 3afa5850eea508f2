// Builds the SimpleCommands of one statement node (R-SH-1, R-SH-7, R-SH-8):
// simple commands and declarations, `[[ ]]`, assignment statements, loop and
// case headers, function definitions, redirections and here-documents. What a
// statement contains is handed back to the walk (ctx.walk) once the command
// holding it has its index, so substitutions know their `inside`.
import type { ShellAssignment, ShellRedirect, ShellWord, SimpleCommand } from '../core/policy/shellCommand.js';
import { hereDocString, readHereDocument, stringMatches } from './hereDocuments.js';
import { nodeRule, unmodelledNode } from './nodeTypes.js';
import { reportError, type Context, type Node, type ParsedText } from './shellContext.js';
import { NAME, arithmeticAssigns, assignmentOf, assignmentWord, newSink, nonPlainExpansions, scanWord, shown, wordOf, type WordSink } from './shellWords.js';

const REDIRECTS = new Set(['file_redirect', 'herestring_redirect', 'heredoc_redirect']);
/**
 * Reserved words bash never runs as a command name: a command the grammar names
 * so is a construct it did not read as bash does. (`time`, `coproc` and `!`
 * where bash reads them as keywords are rewritten before; `in` and `]]` are
 * ordinary words in command position.)
 */
const RESERVED = new Set(['{', '}', 'if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'select', 'function', '[[', '!']);
/** The usual arguments of a command (any other type is looked up in nodeTypes.ts). */
const WORDS = new Set(['word', 'string', 'raw_string', 'number', 'simple_expansion', 'expansion', 'command_substitution']);
/** Word nodes that never hold a substitution; not walking them keeps the walk cheap. */
const FLAT = new Set(['word', 'raw_string', 'ansi_c_string', 'variable_name', 'special_variable_name', 'test_operator', 'file_descriptor', 'heredoc_start', 'comment', 'string_content']);
/** Tokens the grammar may leave unsplit with a substitution inside (`sudo [[ a == $(x) ]]`). */
const PATTERNS = new Set(['regex', 'extglob_pattern']);

/** A here-document body parsed as a string, walked once its command has an index. */
interface ParsedBody extends ParsedText {
  string: Node;
}

/** A command being built. */
interface Pending {
  words: ShellWord[];
  assignments: ShellAssignment[];
  redirects: ShellRedirect[];
  sink: WordSink;
  /** Nodes walked for substitutions once the command has its index. */
  later: Node[];
  /** Statements among its children (`echo (ls)`), decomposed after it. */
  statements: Node[];
  bodies: ParsedBody[];
  assigns: string[];
}

function pending(): Pending {
  return { words: [], assignments: [], redirects: [], sink: newSink(), later: [], statements: [], bodies: [], assigns: [] };
}

function literal(text: string): ShellWord {
  return { text, static: true };
}

/** Whether a named node may hold a substitution (plain words, names and literals cannot). */
export function holdsParts(node: Node, type = node.type): boolean {
  if (PATTERNS.has(type)) return /[$`]/.test(node.text);
  return !FLAT.has(type) && (type !== 'number' || node.childCount > 0);
}

function walkLater(p: Pending, node: Node, type = node.type): void {
  if (type === 'variable_assignment') {
    for (const child of node.namedChildren) if (child !== null && holdsParts(child)) p.later.push(child);
  } else if (holdsParts(node, type)) p.later.push(node);
}

function unmodelled(ctx: Context, node: Node): void {
  reportError(ctx, unmodelledNode(node.type, ctx.where) ?? `the command${ctx.where} has ${node.type.replace(/_/g, ' ')} (${shown(node.text)}) where assent does not expect it`);
}

/** `{fd}>file`: bash allocates a descriptor and assigns its number to fd; the `{fd}` is no word. */
function isFdVariable(node: Node, next: Node | null | undefined): boolean {
  return next !== null && next !== undefined && REDIRECTS.has(next.type) && next.startIndex === node.endIndex && /^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(node.text);
}

/** A simple command, `export`/`declare`/`local`/`readonly`/`typeset` or `unset`; `outer` are the redirections of the statement around it. */
export function simpleCommand(ctx: Context, node: Node, text: string, outer: readonly Node[]): number {
  const p = pending();
  const declaration = node.type !== 'command';
  const children = node.children;
  for (let i = 0; i < children.length; i += 1) {
    const child = children[i];
    if (child === null || child === undefined) continue;
    const type = child.type;
    if (!child.isNamed) {
      const next = children[i + 1];
      if (type === '$' && next !== null && next !== undefined && next.isNamed && next.startIndex === child.endIndex) {
        // `$"…"`: a translated string, looked up at run time
        scanWord(next, p.sink);
        p.words.push({ text: `$${next.text}`, static: false, why: `a translated string ($${shown(next.text)})` });
        walkLater(p, next);
        i += 1;
      } else p.words.push(literal(child.text)); // the keyword of a declaration, or `==`, `=~`, `$` lifted out of a word
      continue;
    }
    if (type === 'variable_assignment') {
      if (declaration) p.words.push(assignmentWord(child, p.sink));
      else p.assignments.push(assignmentOf(child, p.sink));
      walkLater(p, child, type);
    } else if (REDIRECTS.has(type)) redirect(ctx, child, p);
    else if (type === 'command_name') {
      const name = wordOf(child, p.sink, type);
      if (name.static && RESERVED.has(child.text)) reportError(ctx, `the command${ctx.where} has the reserved word ${child.text} where bash does not run a command (${shown(text)}), so assent's parser did not read it as bash does`);
      p.words.unshift(name);
      walkLater(p, child, type);
    } else if (type === 'comment') continue;
    else if (type === 'concatenation' && isFdVariable(child, i + 1 < children.length ? children[i + 1] : outer[0])) p.assigns.push(child.text.slice(1, -1));
    else if (WORDS.has(type)) {
      p.words.push(wordOf(child, p.sink, type));
      walkLater(p, child, type);
    } else {
      const kind = nodeRule(type)?.kind;
      if (kind === 'statement') {
        p.statements.push(child);
        continue;
      }
      if (kind === undefined || kind === 'refused' || kind === 'redirect') unmodelled(ctx, child);
      p.words.push(wordOf(child, p.sink, type));
      walkLater(p, child, type);
    }
  }
  return finish(ctx, p, text, outer);
}

/** Records the command, then walks what it holds with its index as `inside`. */
function finish(ctx: Context, p: Pending, text: string, outer: readonly Node[]): number {
  for (const node of outer) redirect(ctx, node, p);
  const command: SimpleCommand = { text, words: p.words, assignments: p.assignments, redirects: p.redirects, depth: ctx.depth, unknown: [...p.sink.code] };
  let index: number;
  try {
    index = ctx.walk.push(ctx, command, p.sink, p.assigns);
    for (const node of p.later) ctx.walk.part(ctx, node, index);
    for (const body of p.bodies) hereDocParts(ctx, body, index);
  } finally {
    for (const body of p.bodies) body.tree.delete();
  }
  for (const statement of p.statements) ctx.walk.statement(ctx, statement);
  return index;
}

/** A word-less command for the redirections of a group, loop, function or bare `> f`: file accesses of their own. */
export function groupRedirects(ctx: Context, text: string, redirects: readonly Node[]): number {
  return finish(ctx, pending(), text, redirects);
}

function redirect(ctx: Context, node: Node, p: Pending): void {
  if (node.type === 'heredoc_redirect') {
    hereDocument(ctx, node, p);
    return;
  }
  let op = '';
  let fd: number | undefined;
  let target: ShellWord | undefined;
  for (const child of node.children) {
    if (child === null) continue;
    if (child.type === 'file_descriptor') fd = Number(child.text);
    else if (!child.isNamed) op += child.text;
    else {
      if (target === undefined) {
        target = wordOf(child, p.sink);
        if (node.type === 'herestring_redirect') for (const expansion of nonPlainExpansions(child)) p.sink.code.push(`the here-string expands ${expansion}`);
      } else p.words.push(wordOf(child, p.sink)); // `cmd > f more`: the words after the target are the command's
      walkLater(p, child);
    }
  }
  if (node.type === 'herestring_redirect') op = '<<<';
  // `>&-` / `<&-` close a descriptor: the same as duplicating `-`
  if ((op === '>&-' || op === '<&-') && target === undefined) {
    op = op.slice(0, 2);
    target = literal('-');
  }
  const redirection: ShellRedirect = { op, target: target ?? { text: '', static: false, why: 'no target' } };
  if (fd !== undefined && Number.isInteger(fd)) redirection.fd = fd;
  p.redirects.push(redirection);
}

/** `<<EOF`/`<<-EOF`: the body bash reads; an unquoted one is parsed again as a string and scanned (R-SH-8). */
function hereDocument(ctx: Context, node: Node, p: Pending): void {
  const doc = readHereDocument(node, ctx.source);
  if (doc.problem !== undefined) reportError(ctx, `${doc.problem}${ctx.where}`);
  for (let i = 0; i < node.childCount; i += 1) {
    const child = node.child(i);
    if (child === null) continue;
    if (node.fieldNameForChild(i) === 'argument') {
      p.words.push(wordOf(child, p.sink)); // `cat <<EOF file`: words after the delimiter are the command's
      walkLater(p, child);
    } else if (child.type === 'file_redirect' || child.type === 'herestring_redirect') redirect(ctx, child, p);
  }
  const target = doc.quoted ? literal(doc.body) : hereDocBody(ctx, doc.body, p);
  const redirection: ShellRedirect = { op: doc.op, target };
  if (doc.fd !== undefined) redirection.fd = doc.fd;
  p.redirects.push(redirection);
}

function hereDocBody(ctx: Context, body: string, p: Pending): ShellWord {
  const rewritten = hereDocString(body);
  const parsed = rewritten === undefined ? undefined : ctx.walk.parseText(ctx, rewritten.text);
  const string = parsed === undefined || rewritten === undefined ? undefined : stringMatches(parsed.tree.rootNode, rewritten);
  if (parsed === undefined || string === undefined) {
    parsed?.tree.delete();
    reportError(ctx, `a here-document body${ctx.where} that assent cannot split into text and substitutions (${shown(body)})`);
    return { text: body, static: false, why: 'a here-document body assent cannot split' };
  }
  p.bodies.push({ ...parsed, string });
  for (const expansion of nonPlainExpansions(string)) p.sink.code.push(`the here-document body expands ${expansion}`);
  const word = wordOf(string, p.sink);
  return word.static ? word : { ...word, text: body };
}

function hereDocParts(ctx: Context, body: ParsedBody, owner: number): void {
  const inner: Context = { ...ctx, source: body.source, headers: body.headers, via: ctx.via ?? 'a here-document', hereDoc: body.string.id };
  for (const child of body.string.namedChildren) {
    if (child !== null && child.type !== 'string_content' && child.type !== 'simple_expansion') ctx.walk.part(inner, child, owner);
  }
}

// ---- [[ ]] -------------------------------------------------------------------

const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** Special parameters that always expand to a number. */
const NUMERIC_PARAMETERS = new Set(['$#', '$?', '$$', '$!', '${#}', '${?}', '${$}', '${!}']);

function isNumber(node: Node): boolean {
  if (NUMERIC_PARAMETERS.has(node.text)) return true;
  const word = wordOf(node);
  return word.static && /^\s*[-+]?[0-9]+\s*$/.test(word.text);
}

/** In `[[ ]]` the operands of -eq… are arithmetic, and `-v a[i]` evaluates the subscript: either may run code (R-SH-5). */
function arithmeticTest(node: Node, sink: WordSink): void {
  const operator = node.childForFieldName('operator');
  if (node.type === 'binary_expression' && operator?.type === 'test_operator' && ARITHMETIC_TESTS.has(operator.text)) {
    for (const side of [node.childForFieldName('left'), node.childForFieldName('right')]) {
      if (side !== null && !isNumber(side)) sink.code.push(`an arithmetic comparison (${shown(node.text)}): bash evaluates ${shown(side.text)} as arithmetic, which may run code`);
    }
  } else if (node.type === 'unary_expression' && operator?.text === '-v') {
    const operand = node.namedChildren[node.namedChildCount - 1];
    const word = operand === null || operand === undefined ? undefined : wordOf(operand, undefined, operand.type, false);
    const plain = word !== undefined && word.static && (NAME.test(word.text) || /^[A-Za-z_][A-Za-z0-9_]*\[([0-9]+|@|\*)\]$/.test(word.text));
    if (!plain) sink.code.push(`a variable test (${shown(node.text)}) whose name is not a plain name: bash evaluates its subscript, which may run code`);
  }
}

function testLeaves(node: Node, p: Pending): void {
  if (!node.isNamed) {
    p.words.push(literal(node.type));
    return;
  }
  const kind = nodeRule(node.type)?.kind;
  if (kind === 'expression') {
    arithmeticTest(node, p.sink);
    for (const child of node.children) if (child !== null) testLeaves(child, p);
  } else if (node.type === 'test_operator') p.words.push(literal(node.text));
  else if (kind === 'statement') p.statements.push(node);
  else if (node.type !== 'comment') {
    p.words.push(wordOf(node, p.sink, node.type, false));
    walkLater(p, node);
  }
}

/** `(( … ))` where the grammar makes it a test or a group (`f() (( x ))`): an arithmetic command, not statically known. */
export function arithmeticCommand(ctx: Context, node: Node): void {
  const p = pending();
  const text = shown(node.text);
  p.words.push({ text: node.text, static: false, why: `an arithmetic command (${text})` });
  p.sink.code.push(`an arithmetic command (${text}), which may run code through the variables it reads`);
  p.assigns.push(...arithmeticAssigns(node.text));
  for (const child of node.namedChildren) if (child !== null) walkLater(p, child);
  finish(ctx, p, node.text, []);
}

/** `[[ … ]]`: a command of its leaves; `[ … ]` is the `[` builtin, parsed again as one so its redirections count. */
export function testCommand(ctx: Context, node: Node): void {
  const children = node.children;
  if (children[0]?.type === '((') {
    arithmeticCommand(ctx, node);
    return;
  }
  if (children[0]?.type === '[') {
    const from = ctx.state.out.commands.length;
    ctx.walk.parseInto(ctx, `\\${node.text}`);
    const first = ctx.state.out.commands[from];
    if (first !== undefined && first.text.startsWith('\\[')) first.text = first.text.slice(1);
    return;
  }
  const p = pending();
  p.words.push(literal('[['));
  for (let i = 1; i < children.length - 1; i += 1) {
    const child = children[i];
    if (child !== null && child !== undefined) testLeaves(child, p);
  }
  p.words.push(literal(']]'));
  finish(ctx, p, node.text, []);
}

// ---- assignments, loops, case, functions -------------------------------------

/** `A=1` or `A=1 B=2` as a statement: a word-less command; later commands run with it. */
export function assignmentStatement(ctx: Context, node: Node): void {
  const p = pending();
  const nodes = node.type === 'variable_assignment' ? [node] : node.namedChildren.filter((c): c is Node => c !== null && c.type === 'variable_assignment');
  for (const assignment of nodes) {
    p.assignments.push(assignmentOf(assignment, p.sink));
    walkLater(p, assignment);
  }
  finish(ctx, p, node.text, []);
}

function bodyOf(ctx: Context, node: Node, skip: (field: string | null, child: Node) => boolean): void {
  for (let i = 0; i < node.childCount; i += 1) {
    const child = node.child(i);
    if (child === null || !child.isNamed || skip(node.fieldNameForChild(i), child)) continue;
    ctx.walk.statement(ctx, child);
  }
}

/** `for NAME in …` / `select NAME in …`: a header command that assigns NAME each word, then the body (R-SH-7). */
export function forLoop(ctx: Context, node: Node): void {
  const keyword = node.firstChild?.text ?? 'for';
  const variable = node.childForFieldName('variable');
  const name = variable !== null && NAME.test(variable.text) ? variable.text : '*';
  const values = node.childrenForFieldName('value').filter((v): v is Node => v !== null);
  const p = pending();
  const listed = node.children.some((c) => c !== null && c.type === 'in');
  for (const value of values) {
    p.assignments.push({ name, value: wordOf(value, p.sink) });
    walkLater(p, value);
  }
  if (!listed) p.assignments.push({ name, value: { text: '"$@"', static: false, why: 'the positional parameters ("$@")' } });
  p.assigns.push(name);
  if (keyword === 'select') p.assigns.push('REPLY');
  const last = values[values.length - 1] ?? variable;
  const text = last === null ? keyword : node.text.slice(0, last.endIndex - node.startIndex);
  finish(ctx, p, text, []);
  bodyOf(ctx, node, (field) => field === 'variable' || field === 'value');
}

/** `for ((init; cond; step))`: a header command, not statically known (arithmetic), then the body. */
export function cStyleFor(ctx: Context, node: Node): void {
  const children = node.children.filter((c): c is Node => c !== null);
  const open = children.find((c) => c.type === '((');
  const close = children.find((c) => c.type === '))');
  const start = node.startIndex;
  const inner = open !== undefined && close !== undefined ? node.text.slice(open.endIndex - start, close.startIndex - start) : node.text;
  const p = pending();
  p.sink.code.push(`an arithmetic expression (for ((${shown(inner)}))), which may run code through the variables it reads`);
  p.assigns.push(...arithmeticAssigns(inner));
  for (const field of ['initializer', 'condition', 'update']) {
    for (const child of node.childrenForFieldName(field)) if (child !== null && child.isNamed) walkLater(p, child);
  }
  finish(ctx, p, close === undefined ? node.text : node.text.slice(0, close.endIndex - start), []);
  bodyOf(ctx, node, (field) => field === 'initializer' || field === 'condition' || field === 'update');
}

/** `case WORD in PATTERN) …`: the subject and patterns are expanded; a header command holds them when they run or assign anything. */
export function caseStatement(ctx: Context, node: Node): void {
  const subject = node.childForFieldName('value');
  const items = node.namedChildren.filter((c): c is Node => c !== null && c.type === 'case_item');
  const words = [subject, ...items.flatMap((item) => item.childrenForFieldName('value'))].filter((w): w is Node => w !== null);
  const p = pending();
  let substitutes = false;
  for (const word of words) {
    scanWord(word, p.sink);
    substitutes ||= word.descendantsOfType(['command_substitution', 'process_substitution']).length > 0;
    walkLater(p, word);
  }
  if (p.sink.code.length > 0 || p.sink.assigns.length > 0 || substitutes) finish(ctx, p, `case ${subject?.text ?? ''} in`, []);
  else for (const word of p.later) ctx.walk.part(ctx, word, undefined);
  for (const item of items) bodyOf(ctx, item, (field) => field === 'value');
  bodyOf(ctx, node, (field, child) => field === 'value' || child.type === 'case_item');
}

/** `f() { …; }`: the body is decomposed as if it ran; redirections of the definition apply each time it does. */
export function functionDefinition(ctx: Context, node: Node): void {
  const redirects: Node[] = [];
  for (let i = 0; i < node.childCount; i += 1) {
    const child = node.child(i);
    if (child === null || !child.isNamed) continue;
    const field = node.fieldNameForChild(i);
    if (REDIRECTS.has(child.type)) redirects.push(child);
    else if (field !== 'name') ctx.walk.statement(ctx, child);
  }
  if (redirects.length > 0) groupRedirects(ctx, node.text, redirects);
}
