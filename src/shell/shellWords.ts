// Word analysis (R-SH-5): what one word of the bash tree expands to — a literal
// after quote removal, a word that is not static only through plain `$NAME`
// (plainVars), or not static at all, with why. Expansions that may run code no
// part shows (arithmetic, subscripts, `${x@P}`, `${!x}`) are reported to a sink
// so the command holding the word is not statically known.
import type * as TreeSitter from 'web-tree-sitter';
import type { ShellAssignment, ShellWord } from '../core/policy/shellCommand.js';

type Node = TreeSitter.Node;

/** What the words of one command reveal beyond their own static-ness. */
export interface WordSink {
  /** Why the command may run code that no part shows: arithmetic, array subscripts, `${x@P}`, `${!x}` (R-SH-5). */
  code: string[];
  /** Variables its expansions assign (`${x:=v}`, `$((x = 1))`); `'*'` when the name is not known. */
  assigns: string[];
}

export function newSink(): WordSink {
  return { code: [], assigns: [] };
}

/** A plain variable name (R-SH-5); `_` is left out: bash sets it after every command. */
export const NAME = /^(?!_$)[A-Za-z_][A-Za-z0-9_]*$/;

interface WordState {
  text: string;
  /** The word with quoted and escaped characters replaced, to look for brace expansion. */
  bare: string;
  /**
   * The word as bash's pattern matcher sees it after quote removal: unquoted
   * characters as they are, quoted ones as `Q` except a quoted `]`, kept so that
   * `[` in one piece and `]` in another (`.e["n"]v`) still read as a bracket.
   */
  pattern: string;
  /** The first reason it is not static, other than a plain variable. */
  other: string | undefined;
  /** Plain `$NAME`/`${NAME}` names, and the first as written. */
  plain: string[];
  plainText: string | undefined;
  unquotedPlain: boolean;
  tilde: boolean;
  /** A leading `~` whose prefix (up to the first unquoted `/`) did not end in its own piece. */
  tildeOpen: boolean;
  first: boolean;
  quoted: boolean;
  sink: WordSink | undefined;
}

function newState(sink: WordSink | undefined): WordState {
  return { text: '', bare: '', pattern: '', other: undefined, plain: [], plainText: undefined, unquotedPlain: false, tilde: false, tildeOpen: false, first: true, quoted: false, sink };
}

/** Text for a reason: short, on one line. */
export function shown(text: string): string {
  const one = text.trim().replace(/\s+/g, ' ');
  return one.length > 40 ? `${one.slice(0, 40)}…` : one;
}

/** A word after quote removal, with whether the shell would expand anything in it; code-running expansions go to `sink`; `globs` false inside `[[ ]]`. */
export function wordOf(node: Node, sink?: WordSink, type = node.type, globs = true): ShellWord {
  const state = newState(sink);
  appendPart(node, state, type);
  // Bash looks past a `}` with no comma before it (`{e}x,}` expands), so any unquoted `{` … `,` or `..` … `}` may be one.
  if (state.other === undefined && /\{.*(,|\.\.).*\}/s.test(state.bare)) state.other = 'a brace expansion';
  // An unquoted `[` with any `]` after it may open a bracket expression, whatever pieces the grammar split the word into.
  // (`[[ ]]` does no pathname expansion: there `a[0]` is a word.)
  if (globs && state.other === undefined && /\[.*\]/s.test(state.pattern)) state.other = `a glob (${shown(node.text)})`;
  // `~` alone is the home folder; `~"x"` or `~$'/'` is a prefix with quoted characters, which bash leaves as it is written.
  if (state.tildeOpen) {
    if (node.text === '~') state.tilde = true;
    else dynamic(state, `a tilde followed by quoted text (${shown(node.text)})`);
  }
  if (state.other !== undefined) return { text: node.text, static: false, why: state.other };
  if (state.plain.length > 0) {
    return { text: node.text, static: false, why: `a variable (${state.plainText ?? ''})`, plainVars: { names: [...new Set(state.plain)], quoted: !state.unquotedPlain } };
  }
  return state.tilde ? { text: state.text, static: true, tilde: true } : { text: state.text, static: true };
}

/** Scans a node only for what its expansions run or assign (a here-document body, a case pattern). */
export function scanWord(node: Node, sink: WordSink): void {
  appendPart(node, newState(sink));
}

function dynamic(state: WordState, why: string): void {
  state.other ??= why;
}

function runsCode(state: WordState, why: string): void {
  if (state.sink !== undefined && !state.sink.code.includes(why)) state.sink.code.push(why);
}

function assigns(state: WordState, name: string): void {
  if (state.sink !== undefined && !state.sink.assigns.includes(name)) state.sink.assigns.push(name);
}

function appendPart(node: Node, state: WordState, type = node.type): void {
  const first = state.first;
  state.first = false;
  switch (type) {
    case 'word':
      appendUnquoted(node.text, state, first);
      return;
    case 'number':
      if (node.childCount > 0) {
        dynamic(state, `a number with an expansion (${shown(node.text)})`);
        for (const child of node.namedChildren) if (child !== null) appendPart(child, state);
      } else appendUnquoted(node.text, state, first);
      return;
    case 'regex':
      if (/[$`]/.test(node.text)) {
        dynamic(state, `a pattern with an expansion (${shown(node.text)})`);
        return;
      }
      addQuoted(state, node.text);
      return;
    case 'variable_name':
      addQuoted(state, node.text);
      return;
    case 'raw_string':
      addQuoted(state, node.text.slice(1, -1));
      return;
    case 'string':
      appendString(node, state);
      return;
    case 'translated_string':
      dynamic(state, `a translated string (${shown(node.text)})`);
      for (const child of node.namedChildren) if (child !== null) appendString(child, state);
      return;
    case 'ansi_c_string': {
      const decoded = decodeAnsiC(node.text.slice(2, -1));
      if (decoded === undefined) dynamic(state, `an escape in ${shown(node.text)} that assent does not decode`);
      else addQuoted(state, decoded);
      return;
    }
    case 'concatenation':
    case 'command_name':
    case 'variable_assignment': {
      state.first = first;
      const children = node.children;
      for (const [i, child] of children.entries()) {
        if (child === null) continue;
        const type = child.type;
        if (type === '``') dynamic(state, 'a command substitution');
        else if (type === '$' && children[i + 1]?.type === 'string') dynamic(state, `a translated string (${shown(node.text)})`); // `a$"b"`
        else if (!child.isNamed) appendUnquoted(child.text, state, state.first);
        else appendPart(child, state, type);
        state.first = false;
      }
      return;
    }
    case 'simple_expansion': {
      const name = node.namedChildren[0];
      if (name?.type === 'variable_name' && NAME.test(name.text)) plainVariable(state, name.text, node.text);
      else dynamic(state, `a special parameter (${node.text})`);
      return;
    }
    case 'expansion':
      appendExpansion(node, state);
      return;
    case 'command_substitution':
      dynamic(state, 'a command substitution');
      return;
    case 'process_substitution':
      dynamic(state, 'a process substitution');
      return;
    case 'arithmetic_expansion':
      dynamic(state, `an arithmetic expansion (${shown(node.text)})`);
      runsCode(state, `an arithmetic expansion (${shown(node.text)}), which may run code through the variables it reads`);
      for (const name of arithmeticAssigns(node.text)) assigns(state, name);
      return;
    case 'brace_expression':
      dynamic(state, 'a brace expansion');
      return;
    case 'extglob_pattern':
      dynamic(state, `a glob (${shown(node.text)})`);
      return;
    case 'array':
      dynamic(state, `an array (${shown(node.text)})`);
      for (const child of node.namedChildren) {
        if (child === null) continue;
        if (child.text.startsWith('[') && !/^\[[0-9]+\]/.test(child.text)) runsCode(state, `an array subscript (${shown(child.text)}), which bash evaluates as arithmetic`);
        appendPart(child, newStateSharing(state));
      }
      return;
    default:
      dynamic(state, `${type.replace(/_/g, ' ')} (${shown(node.text)})`);
  }
}

function newStateSharing(state: WordState): WordState {
  return newState(state.sink);
}

function plainVariable(state: WordState, name: string, written: string): void {
  state.plain.push(name);
  state.plainText ??= written;
  if (!state.quoted) state.unquotedPlain = true;
}

/**
 * `"…"`: the literal text is read from the source between the expansions (the
 * grammar's string_content drops newlines), then unescaped as bash does.
 */
function appendString(node: Node, state: WordState): void {
  const text = node.text;
  const base = node.startIndex;
  const children = node.children;
  const last = children[children.length - 1];
  const end = last !== undefined && last !== null && last.type === '"' && !last.isMissing && children.length > 1 ? last.startIndex - base : text.length;
  const wasQuoted = state.quoted;
  state.quoted = true;
  let pos = 1;
  for (const child of children) {
    if (child === null || !child.isNamed || child.type === 'string_content') continue;
    appendQuoted(text.slice(pos, child.startIndex - base), state);
    appendPart(child, state);
    pos = child.endIndex - base;
  }
  appendQuoted(text.slice(pos, Math.max(pos, end)), state);
  state.quoted = wasQuoted;
}

function appendQuoted(raw: string, state: WordState): void {
  if (raw === '') return;
  addQuoted(state, unescapeDouble(raw));
}

/** Text bash does not expand: no glob or brace character in it counts, but a `]` may still close an unquoted `[`. */
function addQuoted(state: WordState, content: string): void {
  state.text += content;
  state.bare += 'Q'.repeat(content.length);
  state.pattern += content.replace(/[^\]]/g, 'Q');
}

const SUBSTRING_SAFE = new Set(['number']);

/** `${…}`: plain `${NAME}`, or why it is not static and whether it may run code or assign. */
function appendExpansion(node: Node, state: WordState): void {
  const inner = node.children.filter((c): c is Node => c !== null && c.type !== '${' && c.type !== '}');
  const only = inner.length === 1 ? inner[0] : undefined;
  if (only?.type === 'variable_name' && NAME.test(only.text)) {
    plainVariable(state, only.text, node.text);
    return;
  }
  const written = shown(node.text);
  if (only?.type === 'variable_name' || only?.type === 'special_variable_name') {
    dynamic(state, `a special parameter (${written})`);
    return;
  }
  const ops = inner.filter((c) => !c.isNamed).map((c) => c.type);
  const nameIndex = inner.findIndex((c) => c.type === 'variable_name' || c.type === 'subscript' || c.type === 'special_variable_name');
  const name = nameIndex < 0 ? undefined : inner[nameIndex];
  const rest = inner.slice(nameIndex + 1).filter((c) => c.isNamed);
  let why = `a parameter expansion (${written})`;
  if (inner[0]?.type === '!') {
    if ((ops.includes('@') || ops.includes('*')) && rest.length === 0 && name?.type === 'variable_name') why = `a list of variable names (${written})`;
    else if (name?.type === 'subscript' && literalIndex(name)) why = `the keys of an array (${written})`;
    else {
      why = `an indirect expansion (${written})`;
      runsCode(state, `an indirect expansion (${written}), which may expand an array subscript that runs code`);
    }
  } else if (inner[0]?.type === '#' && name !== undefined && rest.length === 0) why = `the length of a variable (${written})`;
  const at = ops.indexOf('@');
  if (at >= 0 && inner[0]?.type !== '!') {
    why = `a parameter transformation (${written})`;
    if (ops.includes('P')) runsCode(state, `a parameter transformation (${written}), which expands the value as a prompt and may run code`);
  }
  if (ops.includes(':') && !rest.every((c) => SUBSTRING_SAFE.has(c.type))) {
    runsCode(state, `a substring offset (${written}), which bash evaluates as arithmetic`);
  }
  if (ops.includes('=') || ops.includes(':=')) assigns(state, name?.type === 'variable_name' && NAME.test(name.text) ? name.text : '*');
  if (name?.type === 'subscript' && ops.length === 0 && inner[0]?.type !== '!' && inner[0]?.type !== '#') {
    why = literalIndex(name) ? `an array element (${written})` : `an array subscript (${written})`;
  }
  if (name?.type === 'subscript' && !literalIndex(name)) runsCode(state, `an array subscript (${written}), which bash evaluates as arithmetic`);
  dynamic(state, why);
  // Expansions nested in the operand (`${x:-$((y))}`) are scanned for what they run.
  for (const child of inner) if (child.isNamed && child !== name && child.type !== 'regex') appendPart(child, newStateSharing(state));
  if (name?.type === 'subscript') for (const child of name.namedChildren) if (child !== null && child.type !== 'variable_name') appendPart(child, newStateSharing(state));
}

function isPlainExpansion(node: Node, type: string): boolean {
  const inner = node.namedChildren;
  if (type === 'simple_expansion') return inner[0]?.type === 'variable_name' && NAME.test(inner[0].text);
  return node.childCount === 3 && inner.length === 1 && inner[0]?.type === 'variable_name' && NAME.test(inner[0].text);
}

/**
 * The expansions of a word other than plain `$NAME`/`${NAME}`, outside its
 * substitutions: what a here-document body or a here-string expands, which
 * makes the command fed with it not statically known (R-SH-8).
 */
export function nonPlainExpansions(node: Node, out: string[] = []): string[] {
  const type = node.type;
  if (type === 'simple_expansion' || type === 'expansion') {
    if (!isPlainExpansion(node, type)) out.push(shown(node.text));
  } else if (type === 'arithmetic_expansion') out.push(shown(node.text));
  else if (type !== 'command_substitution' && type !== 'process_substitution') {
    for (const child of node.namedChildren) if (child !== null && child.childCount > 0) nonPlainExpansions(child, out);
  }
  return out;
}

/** `a[0]`, `a[@]`, `a[*]`: an index that evaluates nothing. */
export function literalIndex(subscript: Node): boolean {
  const index = subscript.childForFieldName('index');
  return index === null || /^([0-9]+|@|\*)$/.test(index.text);
}

/** Unquoted text: backslash escapes removed; globs and `~user` make the word dynamic; a leading `~`/`~/` is a tilde. */
function appendUnquoted(raw: string, state: WordState, first: boolean): void {
  if (first && raw.startsWith('~')) {
    const end = raw.indexOf('/');
    const prefix = end < 0 ? raw : raw.slice(0, end);
    if (prefix !== '~') dynamic(state, `a tilde expansion (${prefix})`);
    else if (end < 0) state.tildeOpen = true;
    else state.tilde = true;
  }
  for (let i = 0; i < raw.length; i += 1) {
    const ch = raw[i] as string;
    if (ch === '\\') {
      const next = raw[i + 1];
      i += 1;
      if (next === undefined || next === '\n') continue;
      addQuoted(state, next);
      continue;
    }
    if (ch === '*' || ch === '?' || (ch === '[' && raw.indexOf(']', i + 1) > i)) dynamic(state, `a glob (${raw})`);
    // Bash expands a tilde after `=` or `:` in any word shaped like an assignment (`a=~/x`, `PATH=a:~/b`): found by the bash oracle.
    if (ch === '~' && i > 0 && (raw[i - 1] === '=' || raw[i - 1] === ':')) dynamic(state, `a tilde expansion after ${raw[i - 1]} (${raw})`);
    if ((ch === '@' || ch === '!' || ch === '+') && raw[i + 1] === '(') dynamic(state, `an extended glob (${raw})`);
    state.text += ch;
    state.bare += ch;
    state.pattern += ch;
  }
}

/** Inside double quotes a backslash escapes only `$`, backtick, `"`, `\` and a newline. */
export function unescapeDouble(raw: string): string {
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

// ---- assignments -------------------------------------------------------------

/** `NAME=value` / `a[i]=v` / `NAME+=v`: the name (an array's own name), its value; a computed subscript may run code. */
export function assignmentOf(node: Node, sink?: WordSink): ShellAssignment {
  const nameNode = node.childForFieldName('name');
  const value = node.childForFieldName('value');
  let name = nameNode?.text ?? node.text;
  if (nameNode?.type === 'subscript') {
    name = nameNode.childForFieldName('name')?.text ?? name;
    if (sink !== undefined && !literalIndex(nameNode)) sink.code.push(`an array subscript (${shown(nameNode.text)}=), which bash evaluates as arithmetic`);
  }
  return { name, value: value === null ? { text: '', static: true } : wordOf(value, sink) };
}

/** An assignment given as an argument (`export A=1`, `local x=$y`), as one word. */
export function assignmentWord(node: Node, sink?: WordSink): ShellWord {
  const assignment = assignmentOf(node, sink);
  const subscripted = node.childForFieldName('name')?.type === 'subscript';
  const operator = node.children.find((c) => c !== null && !c.isNamed)?.text ?? '=';
  const text = `${assignment.name}${operator}${assignment.value.text}`;
  if (assignment.value.static && !subscripted) return { text, static: true };
  const word: ShellWord = { text: node.text, static: false, why: subscripted ? 'an array subscript' : (assignment.value.why ?? 'not a literal') };
  if (!subscripted && assignment.value.plainVars !== undefined) word.plainVars = assignment.value.plainVars;
  return word;
}

// ---- arithmetic --------------------------------------------------------------

const ASSIGN_OP = /(\*\*|<<|>>|[-+*/%&^|])?=(?!=)/g;
const STEP_OP = /\+\+|--/g;
const TRAILING_NAME = /(?:^|[^$\w}])([A-Za-z_][A-Za-z0-9_]*)$/;
const LEADING_NAME = /^\s*([A-Za-z_][A-Za-z0-9_]*)/;

/**
 * Variables an arithmetic expression assigns (`x = 1`, `y += 2`, `i++`, `--j`),
 * read from its text; `'*'` for an assignment whose target is not a plain name
 * (`a[i] = 1`, `$n = 2`).
 */
export function arithmeticAssigns(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(ASSIGN_OP)) {
    const at = match.index;
    if (match[1] === undefined && at > 0 && '=!<>'.includes(text[at - 1] as string)) continue;
    const target = TRAILING_NAME.exec(text.slice(0, at).trimEnd());
    names.add(target?.[1] ?? '*');
  }
  for (const match of text.matchAll(STEP_OP)) {
    const at = match.index;
    const before = TRAILING_NAME.exec(text.slice(0, at).trimEnd());
    const after = LEADING_NAME.exec(text.slice(at + 2));
    names.add(before?.[1] ?? after?.[1] ?? '*');
  }
  return [...names];
}
