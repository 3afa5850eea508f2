// Wrappers (R-SH-1): commands that run another command — `sudo`, `env`,
// `xargs`, `find -exec`, `bash -c`, `eval`… Given a simple command's words this
// says what it runs, so both layers are judged. Pure; the parser calls it.
import { commandBaseName, type ShellAssignment, type ShellWord } from './shellCommand.js';

/** What a wrapper runs. */
export interface Unwrapped {
  /** The wrapper's name as it should appear in previews (`sudo`, `find -exec`, `bash -c`). */
  via: string;
  /** A command the wrapper runs with these words (its own arguments), if any. */
  inner?: {
    words: ShellWord[];
    assignments: ShellAssignment[];
    /** Why the inner command is not statically known (`xargs` adds arguments read from stdin…). */
    unknown: string[];
    chdir?: ShellWord;
  };
  /** A string the wrapper hands to a shell: parsed again (depth + 1). */
  reparse?: ShellWord;
  /** Why what the wrapper runs cannot be known (a `-c` string that is not a literal, an option not understood). */
  unknown: string[];
}

interface OptionSpec {
  /** Single-letter options without an argument. */
  flags: string;
  /** Single-letter options that take an argument (`-u root`, `-uroot`). */
  withArg: string;
  /** Long options without an argument (`--preserve-env` is written here as `preserve-env`). */
  long?: readonly string[];
  /** Long options that take an argument (`--user root`, `--user=root`). */
  longWithArg?: readonly string[];
}

interface ScannedOptions {
  /** Index of the first word after the options. */
  next: number;
  /** Options seen, as `-x` or `--name`, each with its argument when it has one. */
  seen: { name: string; arg?: ShellWord }[];
  unknown?: string;
}

/** Reads `-abc`, `-u ARG`, `--name[=ARG]` and `--` from `start`; stops at the first operand. */
function scanOptions(words: readonly ShellWord[], start: number, spec: OptionSpec, wrapper: string): ScannedOptions {
  const seen: ScannedOptions['seen'] = [];
  let i = start;
  while (i < words.length) {
    const word = words[i] as ShellWord;
    if (!word.static) return { next: i, seen, unknown: `an argument of ${wrapper} is not statically known (${word.why ?? word.text})` };
    const text = word.text;
    if (text === '--') return { next: i + 1, seen };
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const name = eq < 0 ? text.slice(2) : text.slice(2, eq);
      if (spec.longWithArg?.includes(name) === true) {
        if (eq >= 0) seen.push({ name: `--${name}`, arg: { text: text.slice(eq + 1), static: true } });
        else {
          const arg = words[i + 1];
          if (arg === undefined) return { next: i + 1, seen, unknown: `${wrapper} --${name} has no argument` };
          seen.push({ name: `--${name}`, arg });
          i += 1;
        }
      } else if (spec.long?.includes(name) === true && eq < 0) seen.push({ name: `--${name}` });
      else return { next: i, seen, unknown: `${wrapper} option --${name} is not one assent knows, so what it runs is not known` };
      i += 1;
      continue;
    }
    if (text.length < 2 || !text.startsWith('-')) return { next: i, seen };
    let consumedNext = false;
    for (let k = 1; k < text.length; k += 1) {
      const letter = text[k] as string;
      if (spec.flags.includes(letter)) {
        seen.push({ name: `-${letter}` });
        continue;
      }
      if (spec.withArg.includes(letter)) {
        const rest = text.slice(k + 1);
        if (rest !== '') seen.push({ name: `-${letter}`, arg: { text: rest, static: true } });
        else {
          const arg = words[i + 1];
          if (arg === undefined) return { next: i + 1, seen, unknown: `${wrapper} -${letter} has no argument` };
          seen.push({ name: `-${letter}`, arg });
          consumedNext = true;
        }
        break;
      }
      return { next: i, seen, unknown: `${wrapper} option -${letter} is not one assent knows, so what it runs is not known` };
    }
    i += consumedNext ? 2 : 1;
  }
  return { next: i, seen };
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** `NAME=value` words (as `env` and `sudo` take them) from `start`; returns them and the index after. */
function scanAssignments(words: readonly ShellWord[], start: number): { assignments: ShellAssignment[]; next: number } {
  const assignments: ShellAssignment[] = [];
  let i = start;
  for (; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    const match = ASSIGNMENT.exec(word.text);
    if (match === null) break;
    const value: ShellWord = word.static ? { text: match[2] ?? '', static: true } : { text: match[2] ?? '', static: false, why: word.why ?? 'not a literal' };
    assignments.push({ name: match[1] ?? '', value });
  }
  return { assignments, next: i };
}

function has(scan: ScannedOptions, ...names: string[]): boolean {
  return scan.seen.some((option) => names.includes(option.name));
}

function argOf(scan: ScannedOptions, ...names: string[]): ShellWord | undefined {
  return scan.seen.find((option) => names.includes(option.name))?.arg;
}

function innerFrom(
  via: string,
  words: readonly ShellWord[],
  start: number,
  extra: { assignments?: ShellAssignment[]; unknown?: string[]; chdir?: ShellWord } = {},
): Unwrapped {
  const rest = words.slice(start);
  if (rest.length === 0) return { via, unknown: [] };
  const inner: NonNullable<Unwrapped['inner']> = { words: rest, assignments: extra.assignments ?? [], unknown: extra.unknown ?? [] };
  if (extra.chdir !== undefined) inner.chdir = extra.chdir;
  return { via, inner, unknown: [] };
}

function failed(via: string, reason: string): Unwrapped {
  return { via, unknown: [reason] };
}

const SUDO: OptionSpec = {
  flags: 'AbEHiKklnPSsVvBNe',
  withArg: 'CDghpRrTtUu',
  long: ['askpass', 'background', 'preserve-env', 'set-home', 'login', 'remove-timestamp', 'reset-timestamp', 'list', 'non-interactive', 'preserve-groups', 'stdin', 'shell', 'version', 'validate', 'bell', 'edit'],
  longWithArg: ['close-from', 'chdir', 'group', 'host', 'prompt', 'chroot', 'role', 'type', 'command-timeout', 'other-user', 'user'],
};

function unwrapSudo(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, SUDO, 'sudo');
  if (scan.unknown !== undefined) return failed('sudo', scan.unknown);
  if (has(scan, '-l', '--list', '-v', '--validate', '-k', '-K', '--reset-timestamp', '--remove-timestamp', '-V', '--version')) return { via: 'sudo', unknown: [] };
  if (has(scan, '-e', '--edit')) return failed('sudo', 'sudo -e edits files as another user');
  const { assignments, next } = scanAssignments(words, scan.next);
  const chdir = argOf(scan, '-D', '--chdir');
  if (next >= words.length && has(scan, '-i', '--login', '-s', '--shell')) return failed('sudo', 'sudo -i/-s without a command opens an interactive shell');
  const unknown = has(scan, '-s', '--shell', '-i', '--login') ? ['sudo -s/-i runs the command through a shell'] : [];
  return innerFrom('sudo', words, next, { assignments, unknown, ...(chdir === undefined ? {} : { chdir }) });
}

const ENV: OptionSpec = {
  flags: 'i0v',
  withArg: 'uCS',
  long: ['ignore-environment', 'null', 'debug'],
  longWithArg: ['unset', 'chdir', 'split-string', 'default-signal', 'ignore-signal', 'block-signal'],
};

function unwrapEnv(words: readonly ShellWord[]): Unwrapped {
  let start = 1;
  while (words[start]?.static === true && words[start]?.text === '-') start += 1; // `env -` is `env -i`
  const scan = scanOptions(words, start, ENV, 'env');
  if (scan.unknown !== undefined) return failed('env', scan.unknown);
  const { assignments, next } = scanAssignments(words, scan.next);
  const chdir = argOf(scan, '-C', '--chdir');
  const split = argOf(scan, '-S', '--split-string');
  if (split !== undefined) {
    // `env -S 'cmd args'` splits the string into words: judged as a command line of its own.
    if (!split.static) return failed('env', 'the string given to env -S is not a literal');
    const text = [split.text, ...words.slice(next).map((w) => w.text)].join(' ');
    return { via: 'env -S', reparse: { text, static: words.slice(next).every((w) => w.static) }, unknown: [] };
  }
  return innerFrom('env', words, next, { assignments, ...(chdir === undefined ? {} : { chdir }) });
}

function unwrapCommandBuiltin(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, { flags: 'pvV', withArg: '' }, 'command');
  if (scan.unknown !== undefined) return failed('command', scan.unknown);
  if (has(scan, '-v', '-V')) return { via: 'command', unknown: [] }; // only prints what the name is
  return innerFrom('command', words, scan.next);
}

function unwrapExec(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, { flags: 'cl', withArg: 'a' }, 'exec');
  if (scan.unknown !== undefined) return failed('exec', scan.unknown);
  return innerFrom('exec', words, scan.next);
}

function unwrapSimple(name: string, spec: OptionSpec) {
  return (words: readonly ShellWord[]): Unwrapped => {
    const scan = scanOptions(words, 1, spec, name);
    if (scan.unknown !== undefined) return failed(name, scan.unknown);
    return innerFrom(name, words, scan.next);
  };
}

function unwrapNice(words: readonly ShellWord[]): Unwrapped {
  let start = 1;
  if (words[1]?.static === true && /^-[0-9]+$/.test(words[1].text)) start = 2; // legacy `nice -10 cmd`
  const scan = scanOptions(words, start, { flags: '', withArg: 'n', longWithArg: ['adjustment'] }, 'nice');
  if (scan.unknown !== undefined) return failed('nice', scan.unknown);
  return innerFrom('nice', words, scan.next);
}

function unwrapTimeout(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, { flags: 'v', withArg: 'ks', long: ['preserve-status', 'foreground', 'verbose'], longWithArg: ['kill-after', 'signal'] }, 'timeout');
  if (scan.unknown !== undefined) return failed('timeout', scan.unknown);
  if (scan.next >= words.length) return { via: 'timeout', unknown: [] };
  return innerFrom('timeout', words, scan.next + 1); // the duration comes first
}

function unwrapTime(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, { flags: 'apqv', withArg: 'fo', long: ['append', 'portability', 'quiet', 'verbose'], longWithArg: ['format', 'output'] }, 'time');
  if (scan.unknown !== undefined) return failed('time', scan.unknown);
  return innerFrom('time', words, scan.next);
}

const XARGS: OptionSpec = {
  flags: '0rtpxo',
  withArg: 'adEeIiLlnPs',
  long: ['null', 'no-run-if-empty', 'verbose', 'interactive', 'exit', 'open-tty', 'show-limits'],
  longWithArg: ['arg-file', 'delimiter', 'eof', 'replace', 'max-lines', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
};

function unwrapXargs(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, XARGS, 'xargs');
  if (scan.unknown !== undefined) return failed('xargs', scan.unknown);
  const reason = 'xargs adds arguments it reads from its input at run time';
  if (scan.next >= words.length) return { via: 'xargs', inner: { words: [{ text: 'echo', static: true }], assignments: [], unknown: [reason] }, unknown: [] };
  return innerFrom('xargs', words, scan.next, { unknown: [reason] });
}

function unwrapBusybox(words: readonly ShellWord[]): Unwrapped {
  const applet = words[1];
  if (applet === undefined || (applet.static && applet.text.startsWith('-'))) return { via: 'busybox', unknown: [] };
  return innerFrom('busybox', words, 1);
}

function unwrapStdbuf(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(words, 1, { flags: '', withArg: 'ioe', longWithArg: ['input', 'output', 'error'] }, 'stdbuf');
  if (scan.unknown !== undefined) return failed('stdbuf', scan.unknown);
  return innerFrom('stdbuf', words, scan.next);
}

function unwrapWatch(words: readonly ShellWord[]): Unwrapped {
  const scan = scanOptions(
    words,
    1,
    {
      flags: 'bcCeftgpwrx',
      withArg: 'nqd',
      long: ['beep', 'color', 'no-color', 'errexit', 'chgexit', 'no-title', 'precise', 'no-wrap', 'exec', 'no-rerun'],
      longWithArg: ['interval', 'differences', 'equexit', 'shotsdir'],
    },
    'watch',
  );
  if (scan.unknown !== undefined) return failed('watch', scan.unknown);
  if (has(scan, '-x', '--exec')) return innerFrom('watch', words, scan.next);
  // Without -x, watch hands its arguments, joined by spaces, to `sh -c`.
  const rest = words.slice(scan.next);
  if (rest.length === 0) return { via: 'watch', unknown: [] };
  if (!rest.every((w) => w.static)) return failed('watch', 'the command given to watch is not a literal');
  return { via: 'watch', reparse: { text: rest.map((w) => w.text).join(' '), static: true }, unknown: [] };
}

const FIND_EXEC = ['-exec', '-execdir', '-ok', '-okdir'];

/** `find … -exec cmd {} ;` runs `cmd` once per file found: each such command is not statically known. */
export function findExecCommands(words: readonly ShellWord[]): { via: string; words: ShellWord[] }[] {
  const found: { via: string; words: ShellWord[] }[] = [];
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    if (!word.static || !FIND_EXEC.includes(word.text)) continue;
    let end = i + 1;
    while (end < words.length && !((words[end] as ShellWord).static && [';', '+'].includes((words[end] as ShellWord).text))) end += 1;
    found.push({ via: `find ${word.text}`, words: words.slice(i + 1, end) });
    i = end;
  }
  return found;
}

const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'yash'];

function unwrapShell(name: string, words: readonly ShellWord[]): Unwrapped {
  let commandString = false;
  let i = 1;
  for (; i < words.length; i += 1) {
    const word = words[i] as ShellWord;
    if (!word.static) return failed(name, `an argument of ${name} is not statically known (${word.why ?? word.text})`);
    const text = word.text;
    if (text === '--' || text === '-') {
      i += 1;
      break;
    }
    if (/^[-+]o$/.test(text) || text === '--rcfile' || text === '--init-file') {
      i += 1; // takes an argument
      continue;
    }
    if (text.startsWith('--')) continue;
    if (/^[-+][A-Za-z]+$/.test(text)) {
      if (text.startsWith('-') && text.includes('c')) commandString = true;
      continue;
    }
    break;
  }
  const via = `${name} -c`;
  if (commandString) {
    const script = words[i];
    if (script === undefined) return failed(name, `${name} -c has no command string`);
    if (!script.static) return failed(via, `the string given to ${name} -c is not a literal (${script.why ?? script.text})`);
    return { via, reparse: script, unknown: [] };
  }
  if (i >= words.length) return failed(name, `${name} without a script reads commands from its input at run time`);
  return { via: name, unknown: [] }; // runs a script file; a rule must name it
}

/** `coproc [NAME=value…] cmd`: a simple command run as a coprocess; its prefix assignments are assignments, not its name. */
function unwrapCoproc(words: readonly ShellWord[]): Unwrapped {
  const { assignments, next } = scanAssignments(words, 1);
  return innerFrom('coproc', words, next, { assignments });
}

function unwrapEval(words: readonly ShellWord[]): Unwrapped {
  const rest = words.slice(1);
  if (rest.length === 0) return { via: 'eval', unknown: [] };
  const dynamic = rest.find((w) => !w.static);
  if (dynamic !== undefined) return failed('eval', `the string given to eval is not a literal (${dynamic.why ?? dynamic.text})`);
  return { via: 'eval', reparse: { text: rest.map((w) => w.text).join(' '), static: true }, unknown: [] };
}

const WRAPPERS: ReadonlyMap<string, (words: readonly ShellWord[]) => Unwrapped> = new Map(Object.entries({
  sudo: unwrapSudo,
  doas: unwrapSimple('doas', { flags: 'nsL', withArg: 'uC' }),
  env: unwrapEnv,
  command: unwrapCommandBuiltin,
  builtin: unwrapSimple('builtin', { flags: '', withArg: '' }),
  exec: unwrapExec,
  nohup: unwrapSimple('nohup', { flags: '', withArg: '' }),
  nice: unwrapNice,
  time: unwrapTime,
  timeout: unwrapTimeout,
  xargs: unwrapXargs,
  busybox: unwrapBusybox,
  stdbuf: unwrapStdbuf,
  watch: unwrapWatch,
  coproc: unwrapCoproc,
  eval: unwrapEval,
}));

/**
 * What a simple command runs besides itself, when it is a wrapper: the inner
 * command (for `sudo`, `env`, `timeout`…), a string to parse again (`bash -c`,
 * `eval`, `watch`), or why that cannot be known. Undefined for a plain command.
 * `find -exec` is separate ({@link findExecCommands}): it may run several.
 */
export function unwrapCommand(words: readonly ShellWord[]): Unwrapped | undefined {
  const name = commandBaseName(words[0]);
  if (name === undefined) return undefined;
  const wrapper = WRAPPERS.get(name);
  if (wrapper !== undefined) return wrapper(words);
  if (SHELLS.includes(name)) return unwrapShell(name, words);
  return undefined;
}
