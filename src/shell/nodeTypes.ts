// Every node type tree-sitter's bash grammar can produce, and how the decomposer
// handles it (R-SH-8): one table, so a grammar update that adds a type fails the
// test that walks the grammar (test/unit/shell/nodeTypes.test.ts) until the type
// is listed here. A type that is missing, or listed as refused, makes the command
// a parse error (at least prompt) where it appears — never skipped.

/**
 * How the decomposer treats one node type.
 * - `statement`: runs something; its own handler in shellParser.ts decomposes it.
 * - `substitution`: `$(…)`, backticks, `<(…)`: its commands are decomposed, with `inside` set.
 * - `redirect`: a redirection, read by the command (or group) it belongs to.
 * - `word`: part of a word; wordOf (shellWords.ts) decides what it expands to, and its
 *   children are walked for substitutions.
 * - `expression`: an operator node of `[[ ]]` or arithmetic; walked like a word.
 * - `leaf`: holds nothing that can run (literal text, names, comments).
 * - `token`: an anonymous keyword, operator or punctuation; its parent gives it meaning.
 * - `refused`: a construct assent does not model; `construct` names it in the error.
 */
export type NodeKind = 'statement' | 'substitution' | 'redirect' | 'word' | 'expression' | 'leaf' | 'token' | 'refused';

export interface NodeRule {
  kind: NodeKind;
  /** Named (`command`) or anonymous (`;`, `if`) in the grammar. */
  named: boolean;
  /** How it is modelled, or (refused) the construct as a person would call it. */
  how: string;
}

const NAMED: Readonly<Record<string, readonly [NodeKind, string]>> = {
  // statements
  program: ['statement', 'the command line: each statement decomposed in order'],
  list: ['statement', 'a && / || list: both sides decomposed'],
  pipeline: ['statement', 'each stage decomposed; its commands get {id, stage}'],
  command: ['statement', 'a simple command: words, prefix assignments, redirections; wrappers unwrapped'],
  declaration_command: ['statement', 'export/declare/typeset/local/readonly as a simple command; assigns its names'],
  unset_command: ['statement', 'unset as a simple command; assigns (removes) its names'],
  test_command: ['statement', '[[ ]] as a command of its leaves (arithmetic operands not known); [ ] parsed again as the builtin with its redirections'],
  redirected_statement: ['statement', 'the redirections belong to the command, or to a word-less command for a group'],
  variable_assignment: ['statement', 'NAME=value: a word-less command (as a statement) or a prefix of its command'],
  variable_assignments: ['statement', 'several NAME=value statements: one word-less command'],
  compound_statement: ['statement', '{ …; }: its statements decomposed'],
  subshell: ['statement', '( … ): its statements decomposed'],
  do_group: ['statement', 'do … done: its statements decomposed'],
  negated_command: ['statement', '! pipeline: the pipeline decomposed'],
  if_statement: ['statement', 'conditions and bodies decomposed'],
  elif_clause: ['statement', 'condition and body decomposed'],
  else_clause: ['statement', 'body decomposed'],
  while_statement: ['statement', 'while/until: condition and body decomposed'],
  for_statement: ['statement', 'for/select NAME in …: a word-less header command assigning NAME each word, then the body'],
  c_style_for_statement: ['statement', 'for ((…)): a word-less header command, not statically known (arithmetic), then the body'],
  case_statement: ['statement', 'subject and patterns scanned (a header command when they expand code), items decomposed'],
  case_item: ['statement', 'patterns scanned, body decomposed'],
  function_definition: ['statement', 'the body decomposed as if it ran; redirections of the definition judged as a group'],
  // substitutions
  command_substitution: ['substitution', '$(…) and backticks (re-parsed after bash\'s backslash removal); $(<f) is a word-less read, $(>f) a write'],
  process_substitution: ['substitution', '<(…) and >(…): its statements decomposed'],
  // redirections
  file_redirect: ['redirect', 'op, fd and target; extra words after the target are the command\'s'],
  heredoc_redirect: ['redirect', '<< / <<-: an unquoted body is re-parsed as a double-quoted string and scanned; a quoted one is literal'],
  herestring_redirect: ['redirect', '<<< word: the word is scanned like any other'],
  // word parts
  command_name: ['word', 'the first word of a command'],
  word: ['leaf', 'unquoted text: backslashes removed, globs and ~user make it not static'],
  number: ['word', 'a literal number; one with an expansion in its base is not static'],
  string: ['word', '"…": literal text with expansions and substitutions inside'],
  string_content: ['leaf', 'literal text of a "…" string (read from the source between the string\'s expansions)'],
  raw_string: ['leaf', "'…': literal"],
  ansi_c_string: ['leaf', "$'…': decoded, or not static when an escape is not decoded"],
  translated_string: ['word', '$"…": not static (the translation is looked up at run time)'],
  concatenation: ['word', 'adjacent parts of one word'],
  simple_expansion: ['word', '$NAME (a plain variable) or a special parameter ($@, $1…): not static'],
  expansion: ['word', '${…}: plain ${NAME}, or an operator/transformation/subscript/indirection (not static; some run code)'],
  arithmetic_expansion: ['word', '$((…)) / $[…] / ((…)): not static, and the command is not statically known (arithmetic may run code)'],
  brace_expression: ['word', '{1..3}: not static'],
  extglob_pattern: ['leaf', 'a glob pattern (case patterns, ==): not static'],
  array: ['word', '(…) array value: not static; elements scanned'],
  subscript: ['word', 'a[…]: the command is not statically known unless the index is a literal number, @ or *'],
  regex: ['leaf', 'the right side of =~ or a pattern in ${x#…}: literal text'],
  variable_name: ['leaf', 'a name (of an assignment, a for loop, an expansion)'],
  special_variable_name: ['leaf', '@ * # ? $ ! - 0 and digits: special parameters'],
  file_descriptor: ['leaf', 'the fd of a redirection'],
  heredoc_start: ['leaf', 'the here-document delimiter (quoted or not)'],
  heredoc_body: ['word', 'the here-document body: read from the source and scanned again (not tree-sitter\'s own split)'],
  heredoc_content: ['leaf', 'literal text of a here-document body'],
  heredoc_end: ['leaf', 'the closing delimiter line'],
  // expressions in [[ ]] and arithmetic
  binary_expression: ['expression', 'an operator with two operands ([[ ]], arithmetic)'],
  unary_expression: ['expression', 'an operator with one operand ([[ ]], arithmetic)'],
  ternary_expression: ['expression', 'a ? b : c in arithmetic'],
  postfix_expression: ['expression', 'x++ / x-- in arithmetic (assigns x)'],
  parenthesized_expression: ['expression', '( … ) in [[ ]] or arithmetic'],
  test_operator: ['leaf', '-f, -eq, -v … in [[ ]]'],
  comment: ['leaf', '# …: ignored, as bash does'],
  ERROR: ['statement', 'a parse error: reported (at least prompt); what parsed around it is still decomposed'],
};

/** Anonymous tokens by what they are; the parent node they appear in gives them meaning. */
const TOKENS: Readonly<Record<string, readonly string[]>> = {
  'the operator of an assignment (NAME=value, NAME+=value)': ['=', '+='],
  'a keyword of a compound command or declaration': [
    'if', 'then', 'elif', 'else', 'fi', 'for', 'select', 'in', 'do', 'done', 'while', 'until', 'case', 'esac', 'function',
    'declare', 'typeset', 'export', 'readonly', 'local', 'unset', 'unsetenv', '{', '}', '[[', ']]', '[', ']', '((', '))', '(', ')',
  ],
  'a list, pipeline or case separator': [';', '&', '&&', '||', '|', '|&', ';;', ';&', ';;&', '!'],
  'a redirection operator': ['<', '>', '>>', '&>', '&>>', '<&', '>&', '>|', '<&-', '>&-', '<<', '<<-', '<<<'],
  'the opening or closing of a quote, expansion or substitution': ['"', '$', '${', '$(', '$((', '$[', '`', '$`', '``', '<(', '>('],
  'an operator inside ${…}': [
    '#', '##', '%', '%%', '/', '//', '/#', '/%', ':', ':-', ':=', ':?', ':+', '-', '=', '?', '+', '^', '^^', ',', ',,', '@', '*',
    'U', 'u', 'L', 'Q', 'E', 'P', 'A', 'K', 'a', 'k',
  ],
  'an arithmetic or test operator': [
    '!=', '==', '=~', '<=', '>=', '<<', '>>', '**', '++', '--', '~', '-a', '-o', '..',
    '+=', '-=', '*=', '/=', '%=', '**=', '<<=', '>>=', '&=', '^=', '|=',
  ],
};

function buildTable(): ReadonlyMap<string, NodeRule> {
  const table = new Map<string, NodeRule>();
  for (const [type, [kind, how]] of Object.entries(NAMED)) table.set(type, { kind, named: true, how });
  for (const [how, tokens] of Object.entries(TOKENS)) {
    for (const token of tokens) if (!table.has(token)) table.set(token, { kind: 'token', named: false, how });
  }
  return table;
}

/** The table itself: node type → how it is handled. */
export const NODE_TYPES: ReadonlyMap<string, NodeRule> = buildTable();

/** The same as a prototype-less object: the walk looks a type up for most nodes it visits. */
const LOOKUP: Readonly<Record<string, NodeRule | undefined>> = Object.assign(Object.create(null) as Record<string, NodeRule>, Object.fromEntries(NODE_TYPES));

/** How `type` is handled, or undefined for a type the table does not list. */
export function nodeRule(type: string): NodeRule | undefined {
  return LOOKUP[type];
}

/**
 * The error for a node the decomposer meets and does not model: a type the
 * table does not list, one it refuses, or a modelled type where it cannot be
 * (an expression where a command belongs). Undefined when the type is fine there.
 */
export function unmodelledNode(type: string, where = ''): string | undefined {
  const rule = NODE_TYPES.get(type);
  if (rule === undefined) return `the command${where} uses a "${type.replace(/_/g, ' ')}", which assent does not model`;
  if (rule.kind === 'refused') return `the command${where} uses ${rule.how}, which assent does not model`;
  return undefined;
}
