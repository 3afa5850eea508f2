// jq (1.6, as Debian ships it; an option only 1.7 has is refused as unknown). The filter is the
// first operand, and must be statically known; the other operands are files
// it reads, or, after --args/--jsonargs, strings. jq's own parser (main.c)
// matches long options exactly, bundles short flags (`-nr`) and takes
// --arg/--argjson/--slurpfile/--rawfile/--argfile with two words each.
// Refused: -f/--from-file (the filter is in a file), -L (modules from a
// directory), --run-tests (the programs are in a file), and a filter that reads
// the environment or other files: `env`, `$ENV`, `input_filename`,
// `import`, `include`, `modulemeta` and the search-path builtins. jq also
// loads ~/.jq by itself: a definition there could use env, but no jq program
// runs a program or writes a file, and writing ~/.jq is not allowed by default.
import type { ShellWord } from '../shellCommand.js';
import { checkWord, refusedVerdict, whereFor } from './judgeModel.js';
import { notStaticAt } from './optionParser.js';
import type { WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

/** Names a filter may not use: they read the environment, other files, or where jq looks for them. */
const READS_OUTSIDE = new Set(['env', 'ENV', 'input_filename', 'import', 'include', 'modulemeta', 'get_search_list', 'get_prog_origin', 'get_jq_origin']);

/**
 * Why a jq filter may read what its input does not hold, or undefined. Every
 * identifier counts, in strings and comments too (a string's `\(env)` runs),
 * except a field access `.env` (a dot not itself after a dot or a digit).
 */
export function jqFilterRefusal(filter: string): string | undefined {
  for (const match of filter.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    const name = match[0];
    const at = match.index;
    if (!READS_OUTSIDE.has(name)) continue;
    const before = filter[at - 1];
    // The match is a whole identifier (`xenv` is not `env`); after a lone dot it is a field name.
    if (before === '.' && !/[.0-9]/.test(filter[at - 2] ?? '')) continue;
    return `the filter uses ${before === '$' ? '$' : ''}${name}, which reads ${name === 'env' || name === 'ENV' ? "the environment (the agent's API keys)" : 'files or names beyond its input'}`;
  }
  return undefined;
}

const FLAGS = new Set('srjacCMSRneVh');
const LONG_FLAGS = new Set([
  'slurp', 'raw-output', 'join-output', 'ascii-output', 'compact-output', 'color-output', 'monochrome-output', 'tab', 'unbuffered',
  'sort-keys', 'raw-input', 'null-input', 'exit-status', 'stream', 'stream-errors', 'seq', 'debug-dump-disasm', 'debug-trace', 'debug-trace=all',
  'help', 'version',
]);
/** Options that take the next words: their kinds. */
const WITH_WORDS: ReadonlyMap<string, readonly WordKind[]> = new Map<string, readonly WordKind[]>([
  ['indent', ['literal']],
  ['arg', ['literal', 'inert']],
  ['argjson', ['literal', 'inert']],
  ['slurpfile', ['literal', 'read-path']],
  ['rawfile', ['literal', 'read-path']],
  ['argfile', ['literal', 'read-path']],
]);
const REFUSED: ReadonlyMap<string, string> = new Map([
  ['from-file', 'reads the filter from a file, so it is not statically known'],
  ['run-tests', 'runs the jq programs of a test file, which are not statically known'],
]);

function refuse(reason: string, option?: string): ProgramVerdict {
  return refusedVerdict('jq', option === undefined ? { reason } : { reason, option });
}

export function judgeJq(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const verdict: ProgramVerdict = { model: 'jq', reads: [], writes: [], trees: [] };
  let filter: ShellWord | undefined;
  let argsDone = false;
  let positional: 'files' | 'strings' = 'files';
  const operand = (word: ShellWord): string | undefined => {
    if (filter === undefined) {
      filter = word;
      if (!word.static) return notStaticAt(word, 'the filter position');
      return jqFilterRefusal(word.text);
    }
    const kind: WordKind = positional === 'files' ? 'read-path' : 'inert';
    const why = checkWord(word, kind, { free: argsDone, splitHarmless: false, where: whereFor(kind) }, assigned);
    if (why === undefined && kind === 'read-path') verdict.reads.push(word);
    return why;
  };
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    // A lone `-` is an operand: as the filter a syntax error, as a file stdin.
    if (argsDone || (word.static && (!word.text.startsWith('-') || word.text === '-'))) {
      const why = operand(word);
      if (why !== undefined) return refuse(why);
      continue;
    }
    if (!word.static) return refuse(notStaticAt(word, 'an option position'));
    const text = word.text;
    if (text === '--') {
      argsDone = true;
      continue;
    }
    if (text.startsWith('-L')) return refuse('the option -L adds a directory jq loads modules from', '-L');
    if (text.startsWith('--')) {
      const name = text.slice(2);
      const refusal = REFUSED.get(name);
      if (refusal !== undefined) return refuse(`the option ${text} ${refusal}`, text);
      if (name === 'args' || name === 'jsonargs') positional = 'strings';
      else if (LONG_FLAGS.has(name)) continue;
      else {
        const kinds = WITH_WORDS.get(name);
        if (kinds === undefined) return refuse(`the option ${text} is not one this model knows`);
        for (const [k, kind] of kinds.entries()) {
          const value = args[i + 1 + k];
          if (value === undefined) return refuse(`the option ${text} takes ${kinds.length} words and has fewer`, text);
          const why = checkWord(value, kind, { free: true, splitHarmless: false, where: `a word of ${text}` }, assigned);
          if (why !== undefined) return refuse(why, text);
          if (kind === 'read-path') verdict.reads.push(value);
        }
        i += kinds.length;
      }
      continue;
    }
    for (const letter of text.slice(1)) {
      if (letter === 'f') return refuse(`the option -f (--from-file) ${REFUSED.get('from-file') ?? ''}`, '--from-file');
      if (!FLAGS.has(letter)) return refuse(`the option -${letter}${text.length > 2 ? ` (in ${JSON.stringify(text)})` : ''} is not one this model knows`);
    }
  }
  return verdict;
}
