// The walk of a bash tree into every simple command it would run (R-SH-1, R-SH-8):
// statements, pipelines, substitutions (backticks re-parsed as bash unescapes
// them), `-c`/`eval` strings and wrappers. Each node type is handled as
// nodeTypes.ts lists it; one it does not list, or lists as refused, is an error.
import type * as TreeSitter from 'web-tree-sitter';
import type { ParsedShell } from '../core/policy/shellCommand.js';
import { backtickEnd, unescapeBackticks } from './hereDocuments.js';
import { nodeRule, unmodelledNode } from './nodeTypes.js';
import { pushCommand } from './pushCommand.js';
import { arithmeticCommand, assignmentStatement, caseStatement, cStyleFor, forLoop, functionDefinition, groupRedirects, holdsParts, simpleCommand, testCommand } from './shellCommands.js';
import { reportError, type Context, type Node, type ParsedText, type Walker } from './shellContext.js';
import { rewriteKeywords, type KeywordHeader } from './shellKeywords.js';
import { newSink, scanWord, shown } from './shellWords.js';

/** Longer command lines are not analysed (a parse error, so at least prompt): parsing stays well inside the §14 budget. */
export const MAX_COMMAND_CHARS = 65_536;

const WALKER: Walker = { statement, part, push: pushCommand, parseInto, parseText };

const BOUNDARY = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '{', '}', '!', '`']);

/** `time` or `coproc` as a word of its own, or a `!`, somewhere: only then is the tree searched for the keywords. */
function mentionsKeyword(source: string): boolean {
  if (source.includes('!')) return true;
  for (const keyword of ['time', 'coproc']) {
    for (let at = source.indexOf(keyword); at >= 0; at = source.indexOf(keyword, at + 1)) {
      const before = source[at - 1];
      const after = source[at + keyword.length];
      if ((before === undefined || BOUNDARY.has(before)) && (after === undefined || BOUNDARY.has(after))) return true;
    }
  }
  return false;
}

/** Statements and word parts nested deeper than this are not analysed (a parse error): the walk is recursive. */
export const MAX_NESTING = 400;

/** Decomposes one command line. */
export function decomposeShell(parser: TreeSitter.Parser, source: string): ParsedShell {
  const out: ParsedShell = { source, commands: [], errors: [] };
  const ctx: Context = {
    state: { parser, out, pipelines: 0, level: 0 },
    walk: WALKER,
    depth: 0,
    via: undefined,
    where: '',
    source,
    inside: undefined,
    pipeline: undefined,
    headers: [],
    hereDoc: undefined,
  };
  try {
    parseInto(ctx, source);
  } catch (error) {
    // A word nested deeper than the walk's bound (`${x:-${x:-…}}` thousands deep) may still exhaust the stack.
    if (!(error instanceof RangeError)) throw error;
    reportError(ctx, 'the command is nested too deeply for assent to analyse');
  }
  return out;
}

/** Enters one level of the walk; false (and an error) past MAX_NESTING. */
function enter(ctx: Context): boolean {
  if (ctx.state.level >= MAX_NESTING) {
    reportError(ctx, `the command${ctx.where} nests statements, substitutions or expansions more than ${MAX_NESTING} levels deep; assent does not analyse it`);
    return false;
  }
  ctx.state.level += 1;
  return true;
}

/** Parses `text`; the `time`, `coproc` and `!` keywords are blanked and the text parsed again until none is left. */
function parseText(ctx: Context, text: string): ParsedText | undefined {
  let source = text;
  let tree = ctx.state.parser.parse(source);
  if (tree === null) return undefined;
  const headers: KeywordHeader[] = [];
  if (mentionsKeyword(source)) {
    for (let round = 0; round < 16; round += 1) {
      const rewrite = rewriteKeywords(tree.rootNode, source);
      if (rewrite === undefined) break;
      const next = ctx.state.parser.parse(rewrite.source);
      if (next === null) break;
      tree.delete();
      tree = next;
      source = rewrite.source;
      headers.push(...rewrite.headers);
    }
  }
  return { tree, source, headers };
}

function parseInto(ctx: Context, source: string): void {
  if (source.length > MAX_COMMAND_CHARS) {
    reportError(ctx, `the command${ctx.where} is ${source.length} characters long; assent analyses at most ${MAX_COMMAND_CHARS}`);
    return;
  }
  const parsed = parseText(ctx, source);
  if (parsed === undefined) {
    reportError(ctx, `the command${ctx.where} could not be parsed`);
    return;
  }
  try {
    const inner: Context = { ...ctx, source: parsed.source, headers: parsed.headers, hereDoc: undefined };
    const root = parsed.tree.rootNode;
    if (root.hasError) reportParseErrors(inner, parsed.tree);
    if (parsed.source.includes('\n')) reportJoinedLines(inner, parsed.tree);
    if (parsed.source.includes('\\')) reportSplitWords(inner, parsed.tree);
    statement(inner, root);
    for (const header of inner.headers.splice(0)) pushHeader(inner, header);
  } finally {
    parsed.tree.delete();
  }
}

/**
 * The grammar sometimes reads a line that starts with a backslash as part of
 * the word before it (`echo a⏎\\ls b` becomes one command with the word
 * "⏎\\ls"), where bash ends the command at the newline and runs `ls`. An
 * unquoted word holding a bare newline is never what bash reads, so it is a
 * parse error (found by the bash oracle).
 */
function reportJoinedLines(ctx: Context, tree: TreeSitter.Tree): void {
  const cursor = tree.walk();
  try {
    for (;;) {
      if (cursor.nodeType === 'word' && /(^|[^\\])\n/.test(cursor.nodeText)) {
        reportError(ctx, `parse error${ctx.where}: a line break inside the word ${shown(cursor.nodeText)} at character ${cursor.startIndex + 1}; bash ends the command there`);
      }
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return;
    }
  } finally {
    cursor.delete();
  }
}

/** Nodes whose named children are separate words of bash. */
const SEPARATE_WORDS = new Set(['command', 'declaration_command', 'unset_command', 'file_redirect', 'herestring_redirect', 'for_statement', 'array', 'case_statement', 'test_command', 'unary_expression', 'binary_expression']);
/** Nodes that are (part of) one word. */
const WORD_PARTS = new Set([
  'word', 'concatenation', 'string', 'raw_string', 'ansi_c_string', 'translated_string', 'simple_expansion', 'expansion', 'command_substitution',
  'process_substitution', 'number', 'arithmetic_expansion', 'brace_expression', 'variable_assignment', 'command_name', 'extglob_pattern', 'test_operator',
  // operators the grammar lifts out of a word (`==x`, `=~x`)
  '==', '=~', '!=', 'regex',
]);

/**
 * The grammar sometimes ends a word before a backslash escape that bash reads
 * as part of it: `cat .e''\nv` becomes the two words `.e` and `nv`, where bash
 * reads the one word `.env` (and `a=x''\y cat` runs `cat`, not `\y`). Two
 * words with nothing between them are one bash word, so it is a parse error
 * (found by the word oracle against real bash).
 */
function reportSplitWords(ctx: Context, tree: TreeSitter.Tree): void {
  const cursor = tree.walk();
  try {
    for (;;) {
      if (SEPARATE_WORDS.has(cursor.nodeType)) {
        let previous: Node | undefined;
        for (const child of cursor.currentNode.children) {
          if (child === null) continue;
          if (previous !== undefined && WORD_PARTS.has(previous.type) && WORD_PARTS.has(child.type) && previous.endIndex === child.startIndex) reportError(ctx, `parse error${ctx.where}: assent's parser splits the word ${JSON.stringify(shown(previous.text + child.text))} at character ${child.startIndex + 1}, where bash reads one word; quote the whole word`);
          previous = child;
        }
      }
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return;
    }
  } finally {
    cursor.delete();
  }
}

/**
 * Every parse error in a tree that has one: ERROR nodes (also those under a
 * node the walk reads itself, such as a here-document) and MISSING ones (an
 * unclosed quote, a `fi` that never comes; zero-width leaves).
 */
function reportParseErrors(ctx: Context, tree: TreeSitter.Tree): void {
  const cursor = tree.walk();
  try {
    for (;;) {
      if (cursor.nodeIsMissing) reportError(ctx, `parse error${ctx.where}: a "${cursor.nodeType}" is missing at character ${cursor.startIndex + 1}`);
      else if (cursor.nodeType === 'ERROR') reportError(ctx, parseErrorMessage(ctx, cursor.currentNode));
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return;
    }
  } finally {
    cursor.delete();
  }
}

function parseErrorMessage(ctx: Context, node: Node): string {
  return `parse error${ctx.where} at character ${node.startIndex + 1} near ${JSON.stringify(shown(node.text))}`;
}

function pushHeader(ctx: Context, header: KeywordHeader): void {
  pushCommand(ctx, { text: header.text, words: [], assignments: [], redirects: [], depth: ctx.depth, unknown: [] }, undefined, header.assigns);
}

function statement(ctx: Context, node: Node, type = node.type): void {
  if (!enter(ctx)) return;
  try {
    statementNode(ctx, node, type);
  } finally {
    ctx.state.level -= 1;
  }
}

function statementNode(ctx: Context, node: Node, type: string): void {
  if (ctx.headers.length > 0) {
    const at = ctx.headers.findIndex((header) => header.at === node.startIndex);
    if (at >= 0) pushHeader(ctx, ctx.headers.splice(at, 1)[0] as KeywordHeader);
  }
  switch (type) {
    case 'command':
    case 'declaration_command':
    case 'unset_command':
      simpleCommand(ctx, node, node.text, []);
      return;
    case 'test_command':
      testCommand(ctx, node);
      return;
    case 'redirected_statement':
      redirected(ctx, node);
      return;
    case 'variable_assignment':
    case 'variable_assignments':
      assignmentStatement(ctx, node);
      return;
    case 'pipeline':
      pipeline(ctx, stagesOf(node));
      return;
    case 'for_statement':
      forLoop(ctx, node);
      return;
    case 'c_style_for_statement':
      cStyleFor(ctx, node);
      return;
    case 'case_statement':
      caseStatement(ctx, node);
      return;
    case 'function_definition':
      functionDefinition(ctx, node);
      return;
    case 'ERROR':
      reportError(ctx, parseErrorMessage(ctx, node));
      for (const child of node.namedChildren) if (child !== null) anything(ctx, child, undefined);
      return;
    case 'compound_statement':
      if (node.firstChild?.type === '((') arithmeticCommand(ctx, node);
      else container(ctx, node);
      return;
    case 'comment':
      return;
    default:
      if (nodeRule(type)?.kind === 'statement') container(ctx, node);
      else misplaced(ctx, node);
  }
}

/** `{ }`, `( )`, `do … done`, `if`, `while`, `!`, lists and the program: each statement in it. */
function container(ctx: Context, node: Node): void {
  for (const child of node.namedChildren) {
    if (child === null) continue;
    const type = child.type;
    if (nodeRule(type)?.kind === 'statement') statement(ctx, child, type);
    else if (type !== 'comment') misplaced(ctx, child);
  }
}

/** A node where a statement belongs that is no statement: reported, and walked for what it may run. */
function misplaced(ctx: Context, node: Node): void {
  reportError(ctx, unmodelledNode(node.type, ctx.where) ?? `the command${ctx.where} has ${node.type.replace(/_/g, ' ')} (${shown(node.text)}) where a command belongs, which assent does not model`);
  anything(ctx, node, undefined);
}

/** Inside a parse error any node may appear: each is decomposed for what it is. */
function anything(ctx: Context, node: Node, owner: number | undefined): void {
  const kind = nodeRule(node.type)?.kind;
  if (kind === 'statement') statement(ctx, node);
  else if (kind === 'substitution' || kind === 'word' || kind === 'expression') part(ctx, node, owner);
  else if (kind === 'redirect') groupRedirects(ctx, node.text, [node]);
  else if (kind !== 'leaf' && kind !== 'token') {
    reportError(ctx, unmodelledNode(node.type, ctx.where) ?? `the command${ctx.where} uses ${node.type}`);
    for (const child of node.namedChildren) if (child !== null) anything(ctx, child, owner);
  }
}

/** Walks a word or expression for the substitutions in it; their commands get `inside: owner`. */
function part(ctx: Context, node: Node, owner: number | undefined, type = node.type): void {
  if (!enter(ctx)) return;
  try {
    partNode(ctx, node, owner, type);
  } finally {
    ctx.state.level -= 1;
  }
}

function partNode(ctx: Context, node: Node, owner: number | undefined, type: string): void {
  if (type === 'command_substitution' || type === 'process_substitution') {
    substitution(ctx, node, owner);
    return;
  }
  if ((type === 'regex' || type === 'extglob_pattern') && /[$`]/.test(node.text)) {
    patternWord(ctx, node, owner);
    return;
  }
  const kind = nodeRule(type)?.kind;
  if (kind === 'word' || kind === 'expression' || type === 'variable_assignment') {
    // (an assignment here is arithmetic: `for ((i = $(n); …))`)
    for (const child of node.namedChildren) {
      if (child === null) continue;
      const childType = child.type;
      if (holdsParts(child, childType)) part(ctx, child, owner, childType);
    }
  } else if (kind === 'statement') statement(ctx, node, type);
  else if (kind !== 'leaf' && kind !== 'token') anything(ctx, node, owner);
}

/** A pattern token with `$` or a backtick in it, read again as a word: what it substitutes runs, what it expands counts for its command. */
function patternWord(ctx: Context, node: Node, owner: number | undefined): void {
  const parsed = parseText(ctx, `: ${node.text}`);
  if (parsed === undefined) {
    reportError(ctx, `the pattern ${shown(node.text)}${ctx.where} could not be parsed`);
    return;
  }
  try {
    const inner: Context = { ...ctx, source: parsed.source, headers: parsed.headers };
    const command = parsed.tree.rootNode.firstNamedChild;
    if (parsed.tree.rootNode.hasError || command?.type !== 'command') reportError(ctx, `the pattern ${shown(node.text)}${ctx.where} could not be parsed as a word`);
    const sink = newSink();
    for (const child of command?.namedChildren ?? []) {
      if (child === null || child.type === 'command_name') continue;
      scanWord(child, sink);
      part(inner, child, owner);
    }
    if (owner !== undefined) ctx.state.out.commands[owner]?.unknown.push(...sink.code);
  } finally {
    parsed.tree.delete();
  }
}

function substitution(ctx: Context, node: Node, owner: number | undefined): void {
  const via = ctx.via ?? (node.type === 'process_substitution' ? 'a process substitution' : 'a command substitution');
  const inner: Context = { ...ctx, via, inside: owner, pipeline: undefined };
  const open = node.firstChild?.type;
  if (open === '`' || open === '$`') {
    backticks(inner, node, inDoubleQuotes(ctx, node));
    return;
  }
  for (const child of node.namedChildren) {
    if (child === null || child.type === 'comment') continue;
    // `$(<file)` reads file, `$(>file)` truncates it: a word-less command with the redirection
    if (child.type === 'file_redirect') groupRedirects(inner, child.text, [child]);
    else if (nodeRule(child.type)?.kind === 'statement') statement(inner, child);
    else misplaced(inner, child);
  }
}

/** Whether a backtick substitution sits inside double quotes (where `\"` in it loses its backslash too). */
function inDoubleQuotes(ctx: Context, node: Node): boolean {
  for (let parent = node.parent; parent !== null; parent = parent.parent) {
    if (parent.type === 'string') return parent.id !== ctx.hereDoc;
    const kind = nodeRule(parent.type)?.kind;
    if (kind === 'statement' || kind === 'substitution') return false;
  }
  return false;
}

/** `` `…` ``: bash ends it at the first unescaped backtick, removes the backslash before `\`, `` ` `` and `$`, and parses the rest. */
function backticks(ctx: Context, node: Node, inDouble: boolean): void {
  const text = node.text.trimStart(); // inside a string the grammar counts the blanks before it into the node
  const open = text.startsWith('$`') ? 2 : 1;
  const end = backtickEnd(text, open - 1);
  if (end !== text.length) {
    reportError(ctx, `a backtick substitution${ctx.where} at character ${node.startIndex + 1} does not end where bash ends it`);
    container(ctx, node);
    return;
  }
  const body = text.slice(open, -1);
  const unescaped = unescapeBackticks(body, inDouble);
  if (unescaped === body) container(ctx, node);
  else parseInto(ctx, unescaped);
}

/** The stages of a pipeline; `a | b | c` may nest as (a | (b | c)) in the grammar. */
function stagesOf(node: Node): Node[] {
  const stages: Node[] = [];
  for (const child of node.namedChildren) {
    if (child === null) continue;
    const type = child.type;
    if (type === 'pipeline') stages.push(...stagesOf(child));
    else if (type !== 'comment') stages.push(child);
  }
  return stages;
}

type Stage = Node | ((ctx: Context) => void);

/** Each stage with its {id, stage}; a pipeline inside a stage records the stage as `outer`. */
function pipeline(ctx: Context, stages: readonly Stage[]): void {
  if (stages.length === 1) {
    const only = stages[0] as Stage;
    if (typeof only === 'function') only(ctx);
    else statement(ctx, only);
    return;
  }
  ctx.state.pipelines += 1;
  const id = ctx.state.pipelines;
  stages.forEach((stage, index) => {
    const inner: Context = { ...ctx, pipeline: ctx.pipeline === undefined ? { id, stage: index } : { id, stage: index, outer: ctx.pipeline } };
    if (typeof stage === 'function') stage(inner);
    else statement(inner, stage);
  });
}

/**
 * `cmd > f`, `{ …; } > f`, `cat <<EOF | sh`: the redirections belong to the
 * command (the last stage of a pipeline the grammar put under them), else to a
 * word-less group command; what the grammar hangs under a here-document
 * (`| sh`, `&& ls`) is the rest of the pipeline or list.
 */
function redirected(ctx: Context, node: Node): void {
  let body: Node | null = null;
  const redirects: Node[] = [];
  const tails: Node[] = [];
  const lists: Node[] = [];
  let tailStart = node.endIndex;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    const type = child.type;
    if (type.endsWith('_redirect')) {
      redirects.push(child);
      if (type !== 'heredoc_redirect') continue;
      for (let i = 0; i < child.childCount; i += 1) {
        const tail = child.child(i);
        if (tail === null) continue;
        if (tail.type === 'pipeline') tails.push(...stagesOf(tail));
        else if (child.fieldNameForChild(i) === 'right') lists.push(tail);
        else continue;
        tailStart = Math.min(tailStart, tail.startIndex);
      }
    } else if (body === null && redirects.length === 0 && type !== 'comment') body = child; // the grammar's `body` field
    else if (type !== 'comment') statement(ctx, child, type);
  }
  const bodyStages: (Node | null)[] = body?.type === 'pipeline' ? stagesOf(body) : [body];
  const owner = bodyStages.length - 1;
  // The owner's text: from its own start (the last stage of a pipeline) to before what hangs under a here-document.
  const start = bodyStages[owner]?.startIndex ?? node.startIndex;
  const text = start === node.startIndex && tailStart === node.endIndex ? node.text : ctx.source.slice(start, tailStart).replace(/\s*(\||\|&|&&|\|\|)?\s*$/, '');
  const stages: Stage[] = bodyStages.map((stage, index) => (index === owner ? (inner: Context) => ownRedirects(inner, stage, redirects, text) : (stage as Node)));
  pipeline(ctx, [...stages, ...tails]);
  for (const right of lists) statement(ctx, right);
}

function ownRedirects(ctx: Context, body: Node | null, redirects: readonly Node[], text: string): void {
  if (body !== null && (body.type === 'command' || body.type === 'declaration_command' || body.type === 'unset_command')) {
    simpleCommand(ctx, body, text, redirects);
    return;
  }
  if (body !== null) statement(ctx, body);
  groupRedirects(ctx, text, redirects);
}
