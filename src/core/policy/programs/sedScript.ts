// A parser for GNU sed 4.9 scripts, precise enough to find every command that
// writes a file, reads one or runs a program (w, W, r, R, e; the w and e flags
// of s). Where sed's own reading is uncertain this parser ends a label or a
// word as early as sed possibly could, so nothing sed runs as a command can
// hide from it as text. Anything it cannot parse is an error: the caller refuses.
import { AssentError } from '../../base/errors.js';

/** Why the script is refused, or undefined when it only reads its input and prints. */
export type SedScriptProblem = string | undefined;

const REFUSED_COMMANDS: Record<string, string> = {
  w: 'the sed command w writes a file',
  W: 'the sed command W writes a file',
  r: 'the sed command r reads a file named in the script',
  R: 'the sed command R reads a file named in the script',
  e: 'the sed command e runs a shell command',
};

/** Commands that take nothing after them but the end of the command. */
const SIMPLE = '=dDFgGhHnNpPxz';

class SedScanner {
  pos = 0;
  depth = 0;
  constructor(readonly text: string) {}

  peek(): string | undefined {
    return this.text[this.pos];
  }

  next(): string | undefined {
    const ch = this.text[this.pos];
    if (ch !== undefined) this.pos += 1;
    return ch;
  }

  /** Skips blanks (not newlines), as sed's in_nonblank. */
  skipBlanks(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos += 1;
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }
}

function fail(message: string): never {
  throw new AssentError('invalid_input', message);
}

/** sed's match_slash: text up to an unescaped delimiter, on one line. */
function delimited(s: SedScanner, delimiter: string, what: string): void {
  for (;;) {
    const ch = s.next();
    if (ch === undefined || ch === '\n') fail(`an unterminated ${what}`);
    if (ch === delimiter) return;
    if (ch === '\\') {
      const escaped = s.next();
      if (escaped === undefined) fail(`an unterminated ${what}`);
    }
  }
}

function readNumber(s: SedScanner): boolean {
  let digits = 0;
  while (/[0-9]/.test(s.peek() ?? '')) {
    s.next();
    digits += 1;
  }
  return digits > 0;
}

/** One address: a line number (`first~step`), `$`, `/re/flags` or `\cREc flags`. */
function address(s: SedScanner, second: boolean): boolean {
  const ch = s.peek();
  if (ch === undefined) return false;
  if (/[0-9]/.test(ch)) {
    readNumber(s);
    if (s.peek() === '~') {
      s.next();
      if (!readNumber(s)) fail('a step address without a number');
    }
    return true;
  }
  if (second && (ch === '+' || ch === '~')) {
    s.next();
    if (!readNumber(s)) fail('an address offset without a number');
    return true;
  }
  if (ch === '$') {
    s.next();
    return true;
  }
  if (ch === '/' || ch === '\\') {
    s.next();
    const delimiter = ch === '/' ? '/' : s.next();
    if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') fail('a bad regex delimiter');
    delimited(s, delimiter, 'address regex');
    while (s.peek() === 'I' || s.peek() === 'M') s.next();
    return true;
  }
  return false;
}

/** What may follow a command: blanks, then the end, a newline, `;`, a `#` comment or a `}`. */
function endOfCommand(s: SedScanner, command: string): void {
  s.skipBlanks();
  const ch = s.peek();
  if (ch === undefined || ch === '\n' || ch === ';') {
    s.next();
    return;
  }
  if (ch === '#' || ch === '}') return;
  fail(`extra characters after the command ${command}`);
}

/** A label for `:`, `b`, `t`, `T` (and `v`'s version): ended as early as sed could end it. */
function label(s: SedScanner): string {
  s.skipBlanks();
  let text = '';
  while (!s.atEnd() && !/[\s;}#]/.test(s.peek() ?? '')) text += s.next() ?? '';
  return text;
}

/** The text of a, i, c: GNU's one-line form (`a text`) or `a\` followed by lines; ends at an unescaped newline. */
function text(s: SedScanner): void {
  s.skipBlanks();
  if (s.atEnd()) fail('a, i or c without text');
  if (s.peek() === '\\') {
    s.next();
    if (s.peek() === '\n') s.next();
  }
  for (;;) {
    const ch = s.next();
    if (ch === undefined || ch === '\n') return;
    if (ch === '\\') s.next();
  }
}

function substitute(s: SedScanner): SedScriptProblem {
  const delimiter = s.next();
  if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') fail('a bad delimiter for s');
  delimited(s, delimiter, 's regex');
  delimited(s, delimiter, 's replacement');
  for (;;) {
    const ch = s.peek();
    if (ch === undefined || ch === '\n' || ch === ';') {
      s.next();
      return undefined;
    }
    if (ch === '#' || ch === '}') return undefined;
    if (ch === 'w') return 'the w flag of the sed command s writes a file';
    if (ch === 'e') return 'the e flag of the sed command s runs the pattern space as a shell command';
    if ('gpiImM '.includes(ch) || ch === '\t' || /[0-9]/.test(ch)) {
      s.next();
      continue;
    }
    fail(`an unknown flag ${JSON.stringify(ch)} of s`);
  }
}

function transliterate(s: SedScanner): void {
  const delimiter = s.next();
  if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') fail('a bad delimiter for y');
  delimited(s, delimiter, 'y source');
  delimited(s, delimiter, 'y target');
  endOfCommand(s, 'y');
}

function command(s: SedScanner): SedScriptProblem {
  const hasAddress = address(s, false);
  s.skipBlanks();
  if (hasAddress && s.peek() === ',') {
    s.next();
    s.skipBlanks();
    if (!address(s, true)) fail('a missing second address');
    s.skipBlanks();
  }
  while (s.peek() === '!') {
    s.next();
    s.skipBlanks();
  }
  const name = s.next();
  if (name === undefined) fail('an address without a command');
  const refused = REFUSED_COMMANDS[name];
  if (refused !== undefined) return refused;
  if (name === '{') {
    s.depth += 1;
    return undefined;
  }
  if (name === '}') {
    if (hasAddress) fail('an address on }');
    s.depth -= 1;
    if (s.depth < 0) fail('an unexpected }');
    endOfCommand(s, '}');
    return undefined;
  }
  if (SIMPLE.includes(name)) endOfCommand(s, name);
  else if ('lqQ'.includes(name)) {
    s.skipBlanks();
    readNumber(s);
    endOfCommand(s, name);
  } else if ('aic'.includes(name)) text(s);
  else if (name === ':') {
    if (hasAddress) fail('an address on a label');
    if (label(s) === '') fail('a label without a name');
    endOfCommand(s, ':');
  } else if ('btTv'.includes(name)) {
    label(s);
    endOfCommand(s, name);
  } else if (name === 's') return substitute(s);
  else if (name === 'y') transliterate(s);
  else fail(`an unknown command ${JSON.stringify(name)}`);
  return undefined;
}

/**
 * Checks a whole script (the `-e` pieces joined by newlines, as sed joins
 * them). Returns why it is refused: a command that writes, reads a named file
 * or runs a program, or a script this parser cannot read.
 */
export function checkSedScript(script: string): SedScriptProblem {
  const s = new SedScanner(script);
  try {
    while (!s.atEnd()) {
      const ch = s.peek();
      if (ch === ' ' || ch === '\t' || ch === '\n' || ch === ';') {
        s.next();
        continue;
      }
      if (ch === '#') {
        while (!s.atEnd() && s.peek() !== '\n') s.next();
        continue;
      }
      const problem = command(s);
      if (problem !== undefined) return problem;
    }
    if (s.depth !== 0) fail('an unmatched {');
    return undefined;
  } catch (error) {
    if (error instanceof AssentError) return `the sed script cannot be read: ${error.message}`;
    throw error;
  }
}

/** A script starting with `#n` and a newline makes sed quiet, as -n does. */
export function scriptIsQuiet(script: string): boolean {
  return script === '#n' || script.startsWith('#n\n');
}
