// Parses a shell command line (bash dialect) with tree-sitter's bash grammar and
// turns it into plain data (core/shellCommand.ts): every simple command it would
// run, with `-c`/`eval` strings parsed again and wrappers unwrapped (R-SH-1).
// Runs in the daemon, never in the hook (R-HOOK-8); the grammar loads once.
import { createRequire } from 'node:module';
import type * as TreeSitter from '@vscode/tree-sitter-wasm';
import { AssentError } from '../core/errors.js';
import {
  MAX_SHELL_DEPTH,
  joinWords,
  type ParsedShell,
  type ShellAssignment,
  type ShellRedirect,
  type ShellWord,
  type SimpleCommand,
} from '../core/shellCommand.js';
import { findExecCommands, unwrapCommand } from '../core/shellWrappers.js';
import { commandBaseName } from '../core/shellCommand.js';

type Node = TreeSitter.Node;

/** Longer command lines are not analysed (a parse error, so at least prompt): parsing stays well inside the §14 budget. */
export const MAX_COMMAND_CHARS = 65_536;

/** A loaded bash parser. `parse` is synchronous and costs about a tenth of a millisecond for a 20-part line. */
export interface ShellParser {
  parse(source: string): ParsedShell;
}

let loading: Promise<ShellParser> | undefined;
let loaded: ShellParser | undefined;

/** The bash parser if it has loaded already (so a caller can decide without waiting). */
export function loadedShellParser(): ShellParser | undefined {
  return loaded;
}

/** The bash parser, loaded on first use and kept for the life of the process. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= createParser().then((parser) => (loaded = parser)).catch((error: unknown) => {
    loading = undefined;
    throw new AssentError('internal', `the bash grammar could not be loaded (${error instanceof Error ? error.message : String(error)}); reinstall assent`, { cause: error });
  });
  return loading;
}

async function createParser(): Promise<ShellParser> {
  const require = createRequire(import.meta.url);
  const ts = require('@vscode/tree-sitter-wasm') as typeof TreeSitter;
  await ts.Parser.init();
  const language = await ts.Language.load(require.resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm'));
  const parser = new ts.Parser();
  parser.setLanguage(language);
  return { parse: (source) => parseShell(parser, source) };
}

interface Context {
  parser: TreeSitter.Parser;
  depth: number;
  via: string | undefined;
  out: ParsedShell;
}

function parseShell(parser: TreeSitter.Parser, source: string): ParsedShell {
  const out: ParsedShell = { source, commands: [], errors: [] };
  parseInto({ parser, depth: 0, via: undefined, out }, source);
  return out;
}

function parseInto(ctx: Context, source: string): void {
  const where = ctx.via === undefined ? '' : ` in the string given to ${ctx.via}`;
  if (source.length > MAX_COMMAND_CHARS) {
    ctx.out.errors.push(`the command${where} is ${source.length} characters long; assent analyses at most ${MAX_COMMAND_CHARS}`);
    return;
  }
  const tree = ctx.parser.parse(source);
  if (tree === null) {
    ctx.out.errors.push(`the command${where} could not be parsed`);
    return;
  }
  try {
    visit(ctx, tree.rootNode, where);
  } finally {
    tree.delete();
  }
}

function snippet(text: string): string {
  const one = text.replace(/\s+/g, ' ');
  return JSON.stringify(one.length > 40 ? `${one.slice(0, 40)}…` : one);
}

function visit(ctx: Context, node: Node, where: string): void {
  if (node.isMissing) {
    if (ctx.out.errors.length < 10) ctx.out.errors.push(`parse error${where}: a "${node.type}" is missing at character ${node.startIndex + 1}`);
    return;
  }
  switch (node.type) {
    case 'ERROR':
      if (ctx.out.errors.length < 10) ctx.out.errors.push(`parse error${where} at character ${node.startIndex + 1} near ${snippet(node.text)}`);
      break; // what parsed around it is still judged
    case 'command':
      commandNode(ctx, node, node, [], where);
      return;
    case 'declaration_command':
    case 'unset_command':
      declarationNode(ctx, node, node, [], where);
      return;
    case 'test_command':
      testNode(ctx, node, where);
      return;
    case 'redirected_statement':
      redirectedNode(ctx, node, where);
      return;
    case 'variable_assignment':
    case 'variable_assignments': {
      // A statement of its own (`PATH=/tmp; git status`): later commands run with it.
      const parent = node.parent?.type;
      if (parent === 'command' || parent === 'declaration_command' || parent === 'variable_assignments') break;
      const nodes = node.type === 'variable_assignment' ? [node] : node.namedChildren.filter((c): c is Node => c !== null && c.type === 'variable_assignment');
      push(ctx, { text: node.text, words: [], assignments: nodes.map(assignmentOf), redirects: [], depth: ctx.depth, unknown: [] });
      break;
    }
    case 'command_substitution':
    case 'process_substitution':
      if (ctx.via === undefined) {
        visitChildren({ ...ctx, via: node.type === 'command_substitution' ? 'a command substitution' : 'a process substitution' }, node, where);
        return;
      }
      break;
    default:
      break;
  }
  for (const child of node.children) if (child !== null) visit(ctx, child, where);
}

function redirectedNode(ctx: Context, node: Node, where: string): void {
  const redirects: ShellRedirect[] = [];
  const extraWords: ShellWord[] = [];
  let body: Node | undefined;
  const children = node.children;
  for (const child of children) {
    if (child === null) continue;
    if (child.type.endsWith('_redirect')) redirectInto(child, redirects, extraWords);
    else if (body === undefined && child.isNamed) body = child;
    else visit(ctx, child, where);
  }
  if (body !== undefined && body.type === 'command') commandNode(ctx, body, node, redirects, where, extraWords);
  else if (body !== undefined && (body.type === 'declaration_command' || body.type === 'unset_command')) declarationNode(ctx, body, node, redirects, where);
  else {
    if (body !== undefined) visit(ctx, body, where);
    // A redirection of a whole group or loop: a file access of its own.
    push(ctx, { text: node.text, words: extraWords, assignments: [], redirects, depth: ctx.depth, unknown: [] });
  }
  for (const child of children) if (child !== null && child.type.endsWith('_redirect')) visitChildren(ctx, child, where);
}

function visitChildren(ctx: Context, node: Node, where: string): void {
  for (const child of node.children) if (child !== null) visit(ctx, child, where);
}

function commandNode(ctx: Context, node: Node, textNode: Node, outer: ShellRedirect[], where: string, extra: ShellWord[] = []): void {
  const words: ShellWord[] = [];
  const assignments: ShellAssignment[] = [];
  const redirects: ShellRedirect[] = [];
  const children = node.children;
  for (const child of children) {
    if (child === null) continue;
    const type = child.type;
    if (type === 'variable_assignment') assignments.push(assignmentOf(child));
    else if (type.endsWith('_redirect')) redirectInto(child, redirects, words);
    else if (type === 'command_name') words.unshift(wordOf(child));
    else if (child.isNamed) words.push(wordOf(child));
  }
  words.push(...extra);
  redirects.push(...outer);
  push(ctx, { text: textNode.text, words, assignments, redirects, depth: ctx.depth, unknown: [] });
  for (const child of children) if (child !== null && mayHoldCommands(child)) visit(ctx, child, where);
}

/** Plain words, numbers and quoted literals hold no command; skipping them keeps the walk cheap. */
function mayHoldCommands(node: Node): boolean {
  const type = node.type;
  return node.isNamed && type !== 'word' && type !== 'number' && type !== 'raw_string' && type !== 'ansi_c_string' && type !== 'variable_name';
}

/** `export A=1`, `local x`, `declare -i n`, `unset x`: simple commands whose arguments may be assignments. */
function declarationNode(ctx: Context, node: Node, textNode: Node, outer: ShellRedirect[], where: string): void {
  const words: ShellWord[] = [];
  for (const child of node.children) {
    if (child === null) continue;
    if (!child.isNamed) {
      if (words.length === 0) words.push({ text: child.text, static: true });
      continue;
    }
    words.push(child.type === 'variable_assignment' ? assignmentWord(child) : wordOf(child));
  }
  push(ctx, { text: textNode.text, words, assignments: [], redirects: [...outer], depth: ctx.depth, unknown: [] });
  visitChildren(ctx, node, where);
}

/** `[[ … ]]` and `(( … ))`: a command of their own, so a rule can name them; arithmetic in them may run code. */
function testNode(ctx: Context, node: Node, where: string): void {
  const open = node.firstChild?.text ?? '[[';
  const inner = node.text.slice(open.length, node.text.length - open.length).trim();
  const expands = /[$`]/.test(inner);
  const words: ShellWord[] = [{ text: open, static: true }, expands ? { text: inner, static: false, why: 'an expansion inside a test' } : { text: inner, static: true }];
  push(ctx, { text: node.text, words, assignments: [], redirects: [], depth: ctx.depth, unknown: [] });
  visitChildren(ctx, node, where);
}

function assignmentOf(node: Node): ShellAssignment {
  const name = node.childForFieldName('name');
  const value = node.childForFieldName('value');
  return { name: name?.text ?? node.text, value: value === null ? { text: '', static: true } : wordOf(value) };
}

function assignmentWord(node: Node): ShellWord {
  const assignment = assignmentOf(node);
  const text = `${assignment.name}=${assignment.value.text}`;
  return assignment.value.static && !assignment.name.includes('[')
    ? { text, static: true }
    : { text: node.text, static: false, why: assignment.value.why ?? 'an array subscript' };
}

function redirectInto(node: Node, redirects: ShellRedirect[], words: ShellWord[]): void {
  if (node.type === 'heredoc_redirect') {
    // Input from the command line itself (its body is visited for substitutions); a
    // redirection written after `<<EOF` on the same line is a child of it.
    for (const child of node.children) if (child !== null && child.type === 'file_redirect') redirectInto(child, redirects, words);
    return;
  }
  let op = '';
  let fd: number | undefined;
  let target: ShellWord | undefined;
  for (const child of node.children) {
    if (child === null) continue;
    if (child.type === 'file_descriptor') fd = Number(child.text);
    else if (!child.isNamed) op += child.text;
    else if (target === undefined) target = wordOf(child);
    else words.push(wordOf(child)); // `cmd > f more` — the words after the target are the command's
  }
  const redirect: ShellRedirect = { op: node.type === 'herestring_redirect' ? '<<<' : op, target: target ?? { text: '', static: false, why: 'no target' } };
  if (fd !== undefined && Number.isInteger(fd)) redirect.fd = fd;
  redirects.push(redirect);
}

/** Expands a simple command into itself and what it runs (wrappers, `-c` strings, `find -exec`). */
function push(ctx: Context, command: SimpleCommand, hops = 0): void {
  if (ctx.via !== undefined && command.via === undefined) command.via = ctx.via;
  ctx.out.commands.push(command);
  if (hops > 8) {
    command.unknown.push('wrappers nested too deeply to follow');
    return;
  }
  if (commandBaseName(command.words[0]) === 'find') {
    for (const exec of findExecCommands(command.words)) {
      if (exec.words.length === 0) continue;
      push(ctx, innerCommand(command, exec.via, exec.words, [], [`${exec.via} runs it with file names found at run time`]), hops + 1);
    }
    return;
  }
  const unwrapped = unwrapCommand(command.words);
  if (unwrapped === undefined) return;
  command.unknown.push(...unwrapped.unknown);
  if (unwrapped.inner !== undefined) {
    const inner = innerCommand(command, unwrapped.via, unwrapped.inner.words, unwrapped.inner.assignments, unwrapped.inner.unknown);
    if (unwrapped.inner.chdir !== undefined) inner.chdir = unwrapped.inner.chdir;
    push(ctx, inner, hops + 1);
  }
  if (unwrapped.reparse !== undefined) {
    if (!unwrapped.reparse.static) command.unknown.push(`the string given to ${unwrapped.via} is not a literal`);
    else if (ctx.depth + 1 > MAX_SHELL_DEPTH) command.unknown.push(`the string given to ${unwrapped.via} is nested past depth ${MAX_SHELL_DEPTH}`);
    else parseInto({ parser: ctx.parser, depth: ctx.depth + 1, via: unwrapped.via, out: ctx.out }, unwrapped.reparse.text);
  }
}

function innerCommand(outer: SimpleCommand, via: string, words: ShellWord[], assignments: ShellAssignment[], unknown: string[]): SimpleCommand {
  const inner: SimpleCommand = {
    text: joinWords(words),
    words,
    assignments: [...outer.assignments, ...assignments],
    redirects: [],
    depth: outer.depth,
    via,
    unknown: [...unknown],
  };
  if (outer.chdir !== undefined) inner.chdir = outer.chdir;
  return inner;
}

// ---- words -----------------------------------------------------------------

interface WordState {
  text: string;
  /** The word with quoted and escaped characters replaced, to look for brace expansion. */
  bare: string;
  why: string | undefined;
  tilde: boolean;
  first: boolean;
}

/** A word after quote removal, with whether the shell would expand anything in it. */
export function wordOf(node: Node): ShellWord {
  const state: WordState = { text: '', bare: '', why: undefined, tilde: false, first: true };
  appendPart(node, state);
  if (state.why === undefined && /\{[^{}]*(,|\.\.)[^{}]*\}/.test(state.bare)) state.why = 'a brace expansion';
  if (state.why !== undefined) return { text: node.text, static: false, why: state.why };
  return state.tilde ? { text: state.text, static: true, tilde: true } : { text: state.text, static: true };
}

function dynamic(state: WordState, why: string): void {
  state.why ??= why;
}

function appendPart(node: Node, state: WordState): void {
  const first = state.first;
  state.first = false;
  switch (node.type) {
    case 'word':
      appendUnquoted(node.text, state, first);
      return;
    case 'number':
      appendUnquoted(node.text, state, first);
      return;
    case 'raw_string':
      state.text += node.text.slice(1, -1);
      state.bare += 'Q'.repeat(Math.max(0, node.text.length - 2));
      return;
    case 'string':
    case 'translated_string':
      for (const child of node.children) {
        if (child === null) continue;
        if (child.type === 'string_content') {
          const content = unescapeDouble(child.text);
          state.text += content;
          state.bare += 'Q'.repeat(content.length);
        } else if (child.isNamed) appendPart(child, state);
      }
      return;
    case 'ansi_c_string': {
      const decoded = decodeAnsiC(node.text.slice(2, -1));
      if (decoded === undefined) dynamic(state, `an escape in ${node.text} that assent does not decode`);
      else {
        state.text += decoded;
        state.bare += 'Q'.repeat(decoded.length);
      }
      return;
    }
    case 'concatenation':
    case 'command_name':
      state.first = first;
      for (const child of node.children) {
        if (child === null) continue;
        if (!child.isNamed) appendUnquoted(child.text, state, state.first);
        else appendPart(child, state);
        state.first = false;
      }
      return;
    case 'simple_expansion':
      dynamic(state, `a variable (${node.text})`);
      return;
    case 'expansion':
      dynamic(state, `a parameter expansion (${node.text})`);
      return;
    case 'command_substitution':
      dynamic(state, 'a command substitution');
      return;
    case 'process_substitution':
      dynamic(state, 'a process substitution');
      return;
    case 'arithmetic_expansion':
      dynamic(state, 'an arithmetic expansion');
      return;
    case 'brace_expression':
      dynamic(state, 'a brace expansion');
      return;
    default:
      dynamic(state, `${node.type.replace(/_/g, ' ')} (${node.text})`);
  }
}

/** Unquoted text: backslash escapes removed; globs and `~user` make the word dynamic; a leading `~`/`~/` is a tilde. */
function appendUnquoted(raw: string, state: WordState, first: boolean): void {
  if (first && raw.startsWith('~')) {
    const end = raw.indexOf('/');
    const prefix = end < 0 ? raw : raw.slice(0, end);
    if (prefix === '~') state.tilde = true;
    else dynamic(state, `a tilde expansion (${prefix})`);
  }
  for (let i = 0; i < raw.length; i += 1) {
    const ch = raw[i] as string;
    if (ch === '\\') {
      const next = raw[i + 1];
      i += 1;
      if (next === undefined || next === '\n') continue;
      state.text += next;
      state.bare += 'Q';
      continue;
    }
    if (ch === '*' || ch === '?' || (ch === '[' && raw.indexOf(']', i + 1) > i)) dynamic(state, `a glob (${raw})`);
    if ((ch === '@' || ch === '!' || ch === '+') && raw[i + 1] === '(') dynamic(state, `an extended glob (${raw})`);
    state.text += ch;
    state.bare += ch;
  }
}

/** Inside double quotes a backslash escapes only `$`, backtick, `"`, `\` and a newline. */
function unescapeDouble(raw: string): string {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\([$`"\\\n])/g, (_, ch: string) => (ch === '\n' ? '' : ch));
}

const ANSI_C: Readonly<Record<string, string>> = Object.freeze({
  a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?',
});

/** Decodes `$'…'`; undefined for an escape not decoded here (`\c`), which makes the word dynamic. */
function decodeAnsiC(body: string): string | undefined {
  let out = '';
  for (let i = 0; i < body.length; i += 1) {
    const ch = body[i] as string;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = body[i + 1];
    if (next === undefined) return undefined;
    const simple = Object.prototype.hasOwnProperty.call(ANSI_C, next) ? ANSI_C[next] : undefined;
    if (simple !== undefined) {
      out += simple;
      i += 1;
      continue;
    }
    const hex = /^x([0-9A-Fa-f]{1,2})|^u([0-9A-Fa-f]{1,4})|^U([0-9A-Fa-f]{1,8})|^([0-7]{1,3})/.exec(body.slice(i + 1));
    if (hex === null) return undefined;
    const code = hex[4] !== undefined ? parseInt(hex[4], 8) : parseInt(hex[1] ?? hex[2] ?? hex[3] ?? '', 16);
    if (!Number.isFinite(code) || code > 0x10ffff) return undefined;
    out += String.fromCodePoint(code);
    i += hex[0].length;
  }
  return out;
}
