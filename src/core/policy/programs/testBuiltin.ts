// bash's test builtin, as `test EXPR` and `[ EXPR ]` (bash 5.2, test.c). It
// only compares and looks at files: a file test's operand (-e, -f, -d, …,
// and both sides of -nt, -ot, -ef) is a read-path — the kind stat and
// realpath use for metadata reads, there being none for metadata alone — so
// `test -f ~/.ssh/id_rsa` is judged by the path rules like `stat` is. String
// and number operands are inert; bash's test compares numbers without
// evaluating them (only `[[` does). The words are placed as bash places them:
// by their count for up to four, then by its expression grammar. Refused:
// -v (bash evaluates an array subscript in the name, which may run code),
// -R (a variable test, not modelled), `[` without its closing `]`, any
// syntax error, and a word not statically known where its value would
// decide what the others are.
import type { ShellWord } from '../shellCommand.js';
import { checkWord, refusedVerdict, whereFor } from './judgeModel.js';
import type { WordKind } from './programModel.js';
import type { ProgramVerdict } from './programVerdict.js';

/** Unary operators whose operand is a file (or a file descriptor, for -t). */
const FILE_TESTS = new Set(['-a', '-b', '-c', '-d', '-e', '-f', '-g', '-h', '-k', '-p', '-r', '-s', '-u', '-w', '-x', '-G', '-L', '-N', '-O', '-S']);
const UNARY = new Set([...FILE_TESTS, '-n', '-z', '-o', '-t', '-v', '-R']);
const UNARY_REFUSED: ReadonlyMap<string, string> = new Map([
  ['-v', 'makes bash evaluate the array subscript of a variable name, which may run code'],
  ['-R', 'tests a shell variable, which this model does not describe'],
]);
const FILE_BINARY = new Set(['-nt', '-ot', '-ef']);
const BINARY = new Set(['=', '==', '!=', '<', '>', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', ...FILE_BINARY]);

class Syntax extends Error {}

/** Places each word of a test expression: an operator, or an operand of some kind. */
class Placer {
  readonly kinds: (WordKind | 'operator')[];
  /** A word whose text decides the parse: it must be statically known. */
  readonly deciding = new Set<number>();
  pos = 0;
  refusal: { reason: string; option: string } | undefined;

  constructor(private readonly words: readonly ShellWord[]) {
    this.kinds = words.map(() => 'inert');
  }

  private text(i: number): string | undefined {
    this.deciding.add(i);
    return this.words[i]?.text;
  }

  private operator(i: number): void {
    this.kinds[i] = 'operator';
    this.deciding.add(i);
  }

  /** A unary operator at `i` and its operand. */
  private unary(i: number): number {
    const op = this.words[i]?.text ?? '';
    this.operator(i);
    const why = UNARY_REFUSED.get(op);
    if (why !== undefined) this.refusal ??= { reason: `the operator ${op} ${why}`, option: op };
    if (op === '-t') {
      // -t takes a following number only; bash's legal_number, then isatty.
      if (i + 1 < this.words.length && /^\s*[-+]?[0-9]+\s*$/.test(this.text(i + 1) ?? '')) return i + 2;
      return i + 1;
    }
    if (i + 1 >= this.words.length) throw new Syntax(`${op} needs an operand`);
    this.kinds[i + 1] = FILE_TESTS.has(op) ? 'read-path' : 'inert';
    return i + 2;
  }

  private binary(i: number): number {
    const op = this.words[i + 1]?.text ?? '';
    this.operator(i + 1);
    const kind: WordKind = FILE_BINARY.has(op) ? 'read-path' : 'inert';
    this.kinds[i] = kind;
    this.kinds[i + 2] = kind;
    return i + 3;
  }

  /** bash's posixtest: up to four words are placed by their count. */
  place(): void {
    const n = this.words.length;
    if (n === 0) return;
    if (n === 1) return; // a string: true when not empty
    if (n === 2) return this.two(0);
    if (n === 3) return this.three(0);
    if (n === 4) {
      if (this.text(0) === '!') {
        this.operator(0);
        return this.three(1);
      }
      if (this.text(0) === '(' && this.text(3) === ')') {
        this.operator(0);
        this.operator(3);
        return this.two(1);
      }
    }
    this.pos = 0;
    this.or();
    if (this.pos < n) throw new Syntax('too many arguments');
  }

  private two(i: number): void {
    const first = this.text(i);
    if (first === '!') return this.operator(i);
    if (first !== undefined && UNARY.has(first)) {
      this.unary(i);
      return;
    }
    throw new Syntax(`${first ?? ''}: unary operator expected`);
  }

  private three(i: number): void {
    const middle = this.text(i + 1) ?? '';
    if (BINARY.has(middle)) {
      this.binary(i);
      return;
    }
    if (middle === '-a' || middle === '-o') return this.operator(i + 1);
    if (this.text(i) === '!') {
      this.operator(i);
      return this.two(i + 1);
    }
    if (this.text(i) === '(' && this.text(i + 2) === ')') {
      this.operator(i);
      return this.operator(i + 2);
    }
    throw new Syntax(`${middle}: binary operator expected`);
  }

  // The expression grammar of test.c: or → and ('-o' or)?, and → term ('-a' and)?.
  private or(): void {
    this.and();
    if (this.pos < this.words.length && this.text(this.pos) === '-o') {
      this.operator(this.pos);
      this.pos += 1;
      this.or();
    }
  }

  private and(): void {
    this.term();
    if (this.pos < this.words.length && this.text(this.pos) === '-a') {
      this.operator(this.pos);
      this.pos += 1;
      this.and();
    }
  }

  private term(): void {
    const n = this.words.length;
    if (this.pos >= n) throw new Syntax('argument expected');
    while (this.text(this.pos) === '!') {
      this.operator(this.pos);
      this.pos += 1;
      if (this.pos >= n) throw new Syntax('argument expected');
    }
    if (this.text(this.pos) === '(') {
      this.operator(this.pos);
      this.pos += 1;
      this.or();
      if (this.pos >= n || this.text(this.pos) !== ')') throw new Syntax("')' expected");
      this.operator(this.pos);
      this.pos += 1;
      return;
    }
    if (this.pos + 3 <= n && BINARY.has(this.text(this.pos + 1) ?? '')) this.pos = this.binary(this.pos);
    else if (this.pos + 2 <= n && UNARY.has(this.text(this.pos) ?? '')) this.pos = this.unary(this.pos);
    else this.pos += 1;
  }
}

/** Judges the words of a test expression (without `test`, `[` or `]`). */
function judgeExpression(model: string, words: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const placer = new Placer(words);
  let syntax: string | undefined;
  try {
    placer.place();
  } catch (error) {
    if (!(error instanceof Syntax)) throw error;
    syntax = error.message;
  }
  // A word bash places by its value comes first: with another value there may be no syntax error.
  const deciding = words.find((word, i) => !word.static && (placer.kinds[i] === 'operator' || placer.deciding.has(i)));
  if (deciding !== undefined) {
    return refusedVerdict(model, { reason: `${JSON.stringify(deciding.text)} is not statically known, and its value would decide what the other words of the test are` });
  }
  if (syntax !== undefined) return refusedVerdict(model, { reason: `bash reports a syntax error in the test (${syntax})` });
  if (placer.refusal !== undefined) return refusedVerdict(model, placer.refusal);
  const verdict: ProgramVerdict = { model, reads: [], writes: [], trees: [] };
  for (const [i, word] of words.entries()) {
    const kind = placer.kinds[i] ?? 'inert';
    if (kind === 'operator') continue;
    const why = checkWord(word, kind, { free: true, splitHarmless: false, where: whereFor(kind) }, assigned);
    if (why !== undefined) return refusedVerdict(model, { reason: why });
    if (kind === 'read-path') verdict.reads.push(word);
  }
  return verdict;
}

export function judgeTest(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  return judgeExpression('test', args, assigned);
}

/** `[ EXPR ]`: the last word must be `]`. */
export function judgeBracket(args: readonly ShellWord[], assigned: ReadonlySet<string>): ProgramVerdict {
  const last = args[args.length - 1];
  if (last === undefined || !last.static || last.text !== ']') return refusedVerdict('[', { reason: "[ needs ] as its last word (bash reports a missing `]')" });
  return judgeExpression('[', args.slice(0, -1), assigned);
}
