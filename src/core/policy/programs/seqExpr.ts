// seq and expr (GNU coreutils 9.1): they compute with their operands and
// print the result; nothing is read, written or run. seq's options end at
// its first operand, and a word like `-5` or `-.5` where an option could
// stand is a negative number that ends them too (seq.c checks this before
// getopt). expr reads every word as part of its expression (`:` and `match`
// take a regular expression: text).
import type { ShellWord } from '../shellCommand.js';
import { checkWord, judgeModel, refusedVerdict } from './judgeModel.js';
import { resolveLong } from './optionParser.js';
import { flags, GNU_STANDARD, GNU_STOP, opt, type ProgramModel } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

export const SEQ: ProgramModel = {
  name: 'seq',
  syntax: GNU_STOP,
  options: [opt('f|format=', { value: 'inert' }), opt('s|separator=', { value: 'inert' }), ...flags('w|equal-width'), ...GNU_STANDARD],
  // FIRST, INCREMENT, LAST.
  plan: (_options, operands) => ({ kinds: operands.slice(0, 3).map(() => 'inert' as const) }),
};

/** Whether an option word leaves its value to the next word (`-s`, `-ws`, `--sep`). */
function takesNextWord(text: string): boolean {
  if (text.startsWith('--')) {
    if (text.includes('=')) return false;
    const found = resolveLong(text.slice(2), SEQ.options, SEQ.syntax);
    return found.kind === 'option' && found.spec.arg === 'required';
  }
  for (let k = 1; k < text.length; k += 1) {
    const spec = SEQ.options.find((s) => s.short.includes(text[k] as string));
    if (spec === undefined) return false;
    if (spec.arg === 'required') return k === text.length - 1;
  }
  return false;
}

/** seq's arguments with a `--` before the negative number that ends its options, as seq reads them. */
function withNegativeNumbers(args: readonly ShellWord[]): readonly ShellWord[] {
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i] as ShellWord;
    if (!word.static || word.text === '--' || !word.text.startsWith('-') || word.text === '-') return args;
    if (/^-[0-9.]/.test(word.text)) return [...args.slice(0, i), { text: '--', static: true }, ...args.slice(i)];
    if (takesNextWord(word.text)) i += 1;
  }
  return args;
}

export function judgeSeq(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  return judgeModel(SEQ, withNegativeNumbers(args), assigned);
}

/** expr EXPRESSION: every word is text of the expression (`--help` and `--version` alone print and exit). */
export function judgeExpr(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  for (const word of args) {
    const why = checkWord(word, 'inert', { free: true, splitHarmless: false, where: 'an operand of the expression' }, assigned);
    if (why !== undefined) return refusedVerdict('expr', { reason: why });
  }
  return { model: 'expr', reads: [], writes: [], trees: [] };
}
