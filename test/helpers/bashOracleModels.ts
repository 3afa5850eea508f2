// What the shims stand in for: the paths a program would read or write and the
// programs it would run, given its argv as bash passed it. The shims do nothing, so
// for the programs the default policy may allow, the oracle has to know this itself.
// Deliberately small and independent of src/core/policy/programs: GNU option parsing
// (long options by unambiguous prefix, bundled short options) and each operand's role.

export interface ProgramEffects {
  /** Paths read (relative to the program's cwd). */
  reads: string[];
  /** Paths written, created or removed. */
  writes: string[];
  /** Directories read recursively; `hidden` false when the program skips dot entries. */
  trees: { dir: string; hidden: boolean }[];
  /** Why the program would run another program. */
  runs: string[];
}

interface Spec {
  /** Short options that take a value. */
  shortValue: string;
  /** Long option names; a trailing `=` takes a value, `?` an optional one (`--in-place[=SUFFIX]`). */
  long: readonly string[];
  /** Stops at the first operand (POSIX), rather than permuting as GNU does. */
  posix?: boolean;
}

interface Scanned {
  /** Options as `-x` or `--name` (full name), with their value. */
  options: { name: string; value?: string }[];
  operands: string[];
}

function longName(written: string, spec: Spec): { name: string; takes: '' | '=' | '?' } | undefined {
  const names = spec.long.map((l) => ({ name: l.replace(/[=?]$/, ''), takes: (/[=?]$/.exec(l)?.[0] ?? '') as '' | '=' | '?' }));
  const exact = names.find((n) => n.name === written);
  if (exact !== undefined) return exact;
  const prefixed = names.filter((n) => n.name.startsWith(written));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** getopt_long as GNU programs call it. An unknown option is kept by its written name. */
function scan(args: readonly string[], spec: Spec): Scanned {
  const out: Scanned = { options: [], operands: [] };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const written = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const found = longName(written, spec);
      const name = `--${found?.name ?? written}`;
      if (eq >= 0) out.options.push({ name, value: arg.slice(eq + 1) });
      else if (found?.takes === '=' && i + 1 < args.length) out.options.push({ name, value: args[(i += 1)] as string });
      else out.options.push({ name });
      continue;
    }
    if (arg.length > 1 && arg.startsWith('-')) {
      for (let k = 1; k < arg.length; k += 1) {
        const letter = arg[k] as string;
        if (!spec.shortValue.includes(letter)) {
          out.options.push({ name: `-${letter}` });
          continue;
        }
        const rest = arg.slice(k + 1);
        if (rest !== '') out.options.push({ name: `-${letter}`, value: rest });
        else if (i + 1 < args.length) out.options.push({ name: `-${letter}`, value: args[(i += 1)] as string });
        else out.options.push({ name: `-${letter}` });
        break;
      }
      continue;
    }
    out.operands.push(arg);
    if (spec.posix === true) {
      out.operands.push(...args.slice(i + 1));
      break;
    }
  }
  return out;
}

const has = (s: Scanned, ...names: string[]): boolean => s.options.some((o) => names.includes(o.name));
const values = (s: Scanned, ...names: string[]): string[] => s.options.filter((o) => names.includes(o.name) && o.value !== undefined).map((o) => o.value as string);

const none = (): ProgramEffects => ({ reads: [], writes: [], trees: [], runs: [] });

const GREP: Spec = {
  shortValue: 'efmABCdD',
  long: ['regexp=', 'file=', 'max-count=', 'after-context=', 'before-context=', 'context=', 'directories=', 'devices=', 'include=', 'exclude=', 'exclude-from=', 'exclude-dir=', 'label=', 'color?', 'colour?', 'binary-files=', 'recursive', 'dereference-recursive', 'ignore-case', 'invert-match', 'line-number', 'count', 'files-with-matches', 'word-regexp', 'extended-regexp', 'fixed-strings', 'null'],
};
const RG: Spec = {
  shortValue: 'efgmABCtTjMErd',
  long: ['regexp=', 'file=', 'glob=', 'max-count=', 'after-context=', 'before-context=', 'context=', 'type=', 'type-not=', 'threads=', 'max-columns=', 'encoding=', 'replace=', 'max-depth=', 'pre=', 'pre-glob=', 'hidden', 'no-ignore', 'search-zip', 'follow', 'ignore-case', 'files', 'type-list', 'json'],
};
const SED: Spec = { shortValue: 'efl', long: ['expression=', 'file=', 'line-length=', 'in-place?', 'quiet', 'silent', 'null-data', 'zero-terminated', 'regexp-extended', 'separate', 'sandbox', 'unbuffered', 'debug', 'posix', 'follow-symlinks'] };
const SORT: Spec = {
  shortValue: 'koStT',
  long: ['ignore-leading-blanks', 'dictionary-order', 'ignore-case', 'general-numeric-sort', 'ignore-nonprinting', 'month-sort', 'human-numeric-sort', 'numeric-sort', 'random-sort', 'random-source=', 'reverse', 'sort=', 'version-sort', 'batch-size=', 'check?', 'compress-program=', 'debug', 'files0-from=', 'key=', 'merge', 'output=', 'stable', 'buffer-size=', 'field-separator=', 'temporary-directory=', 'unique', 'zero-terminated', 'parallel='],
};
const CP: Spec = { shortValue: 'tS', long: ['target-directory=', 'suffix=', 'recursive', 'archive', 'no-target-directory', 'parents', 'backup?', 'reflink?', 'sparse=', 'preserve?', 'force', 'interactive'] };
const GIT_SUB: Spec = { shortValue: 'mFoCcSLUO', long: ['output=', 'message=', 'file=', 'no-index', 'ext-diff', 'textconv', 'exec=', 'upload-pack=', 'receive-pack=', 'patch', 'stat', 'oneline', 'format=', 'pretty?'] };

/** A sed script's commands that write (`w`), read (`r`) or run (`e`, `s///e`), by a simple reading of the script. */
function sedScript(script: string, effects: ProgramEffects): void {
  for (const raw of script.split(/[;\n]/)) {
    const cmd = raw.trim().replace(/^[0-9$,/\\^.*!~+ -]*/, '');
    const file = /^[wWrR]\s*(.+)$/.exec(cmd);
    if (file !== null) (/^[wW]/.test(cmd) ? effects.writes : effects.reads).push((file[1] as string).trim());
    if (/^e(\s|$)/.test(cmd)) effects.runs.push('the sed script has an e command');
    const sub = /^s(.)(?:(?!\1).)*\1(?:(?!\1).)*\1([a-zA-Z0-9]*)(?:\s*(.*))?$/.exec(cmd);
    if (sub !== null && (sub[2] ?? '').includes('e')) effects.runs.push('a sed s command has the e flag');
    if (sub !== null && (sub[2] ?? '').includes('w')) effects.writes.push((sub[3] ?? '').trim());
  }
}

function grepLike(args: readonly string[], rg: boolean): ProgramEffects {
  const s = scan(args, rg ? RG : GREP);
  const effects = none();
  const explicit = has(s, '-e', '--regexp', '-f', '--file');
  effects.reads.push(...values(s, '-f', '--file', '--exclude-from'));
  const paths = explicit ? s.operands : s.operands.slice(1);
  const recursive = rg || has(s, '-r', '-R', '--recursive', '--dereference-recursive') || values(s, '-d', '--directories').includes('recurse');
  if (rg && has(s, '--pre')) effects.runs.push('rg --pre runs a program on every file');
  const u = s.options.filter((o) => o.name === '-u').length;
  const hidden = !rg || has(s, '--hidden', '-.') || u >= 2;
  if (recursive) for (const dir of paths.length > 0 ? paths : ['.']) effects.trees.push({ dir, hidden });
  effects.reads.push(...paths);
  return effects;
}

function git(args: readonly string[]): ProgramEffects {
  const effects = none();
  let i = 0;
  // Global options before the subcommand: -c and friends make git run what a configuration names.
  for (; i < args.length && (args[i] as string).startsWith('-'); i += 1) {
    const arg = args[i] as string;
    if (arg === '-c' || arg === '--config-env' || arg.startsWith('--config-env=') || arg.startsWith('--exec-path') || /^-c./.test(arg)) effects.runs.push(`git ${arg} sets configuration that may run a program`);
    if (arg === '-c' || arg === '-C' || arg === '--config-env' || arg === '--git-dir' || arg === '--work-tree') i += 1;
  }
  const s = scan(args.slice(i + 1), GIT_SUB);
  effects.writes.push(...values(s, '--output', '-o'));
  if (has(s, '--exec', '--upload-pack', '--receive-pack', '--ext-diff')) effects.runs.push('a git option runs a program');
  for (const operand of s.operands) {
    const colon = operand.indexOf(':');
    effects.reads.push(colon >= 0 ? operand.slice(colon + 1) : operand);
  }
  effects.reads.push(...values(s, '-F', '--file'));
  return effects;
}

/** The effects of one execution of `program` with `args`; programs not described here read every word that is not an option. */
export function programEffects(program: string, args: readonly string[]): ProgramEffects {
  const effects = none();
  switch (program) {
    // Text only; and wrappers, whose command is an execution of its own.
    case 'echo':
    case 'printf':
    case 'which':
    case 'basename':
    case 'dirname':
    case 'whoami':
    case 'uname':
    case 'pwd':
    case 'true':
    case 'false':
    case 'sleep':
    case 'id':
    case 'timeout':
    case 'nice':
    case 'nohup':
    case 'stdbuf':
    case 'env':
    case 'xargs':
    case 'sudo':
      return effects;
    case 'grep':
      return grepLike(args, false);
    case 'rg':
      return grepLike(args, true);
    case 'git':
      return git(args);
    case 'sed': {
      const s = scan(args, SED);
      const scripts = values(s, '-e', '--expression');
      const files = scripts.length > 0 || has(s, '-f', '--file') ? s.operands : s.operands.slice(1);
      if (scripts.length === 0 && !has(s, '-f', '--file') && s.operands[0] !== undefined) scripts.push(s.operands[0]);
      for (const script of scripts) sedScript(script, effects);
      effects.reads.push(...files, ...values(s, '-f', '--file'));
      if (has(s, '-i', '--in-place')) effects.writes.push(...files);
      return effects;
    }
    case 'sort': {
      const s = scan(args, SORT);
      effects.writes.push(...values(s, '-o', '--output'));
      if (has(s, '--compress-program')) effects.runs.push('sort --compress-program runs a program');
      effects.reads.push(...s.operands, ...values(s, '--files0-from', '--random-source'));
      return effects;
    }
    case 'cp':
    case 'mv':
    case 'ln': {
      const s = scan(args, CP);
      const target = values(s, '-t', '--target-directory');
      const dests = target.length > 0 ? target : s.operands.slice(-1);
      const sources = target.length > 0 ? s.operands : s.operands.slice(0, -1);
      for (const dest of dests) {
        effects.writes.push(dest);
        for (const source of sources) effects.writes.push(`${dest}/${source.slice(source.lastIndexOf('/') + 1)}`);
      }
      if (program === 'mv') effects.writes.push(...sources);
      else if (program === 'cp') {
        effects.reads.push(...sources);
        if (has(s, '-r', '-R', '-a', '--recursive', '--archive')) for (const dir of sources) effects.trees.push({ dir, hidden: true });
      }
      return effects;
    }
    case 'mkdir':
    case 'touch':
    case 'rm':
    case 'rmdir':
    case 'tee':
    case 'chmod':
    case 'truncate': {
      const s = scan(args, { shortValue: program === 'touch' ? 'rdt' : program === 'mkdir' ? 'm' : program === 'truncate' ? 'sr' : '', long: ['reference=', 'mode=', 'date=', 'size='] });
      const operands = program === 'chmod' && !has(s, '--reference') ? s.operands.slice(1) : s.operands;
      effects.writes.push(...operands);
      effects.reads.push(...values(s, '-r', '--reference'));
      return effects;
    }
    case 'uniq': {
      const s = scan(args, { shortValue: 'fsw', long: ['skip-fields=', 'skip-chars=', 'check-chars=', 'group?', 'all-repeated?'] });
      if (s.operands[0] !== undefined) effects.reads.push(s.operands[0]);
      if (s.operands[1] !== undefined) effects.writes.push(s.operands[1]);
      return effects;
    }
    case 'tree': {
      const s = scan(args, { shortValue: 'oLPIH', long: ['filelimit=', 'timefmt=', 'charset=', 'fromfile'] });
      effects.writes.push(...values(s, '-o'));
      effects.reads.push(...s.operands);
      return effects;
    }
    case 'find': {
      // Starting points up to the first expression word; the real find runs -exec itself.
      const start = args.findIndex((a) => a.startsWith('-') || a === '(' || a === '!' || a === ',');
      effects.reads.push(...(start < 0 ? args : args.slice(0, start)));
      args.forEach((a, i) => {
        if (/^-f(print0?|printf|ls)$/.test(a) && args[i + 1] !== undefined) effects.writes.push(args[i + 1] as string);
        if (a === '-delete') effects.writes.push(...(start < 0 ? args : args.slice(0, start)));
      });
      return effects;
    }
    case 'date': {
      const s = scan(args, { shortValue: 'dfrI', long: ['date=', 'file=', 'reference=', 'set='] });
      effects.reads.push(...values(s, '-f', '--file', '-r', '--reference'));
      return effects;
    }
    case 'head':
    case 'tail':
    case 'wc':
    case 'cat':
    case 'ls':
    case 'stat':
    case 'file':
    case 'du':
    case 'diff':
    case 'cmp':
    case 'realpath': {
      const s = scan(args, { shortValue: program === 'head' || program === 'tail' ? 'nc' : program === 'stat' ? 'c' : program === 'file' ? 'fmF' : '', long: ['files0-from=', 'lines=', 'bytes=', 'format=', 'printf='] });
      effects.reads.push(...s.operands, ...values(s, '--files0-from', '-f', '-m'));
      return effects;
    }
    case 'assent':
      // assent's read-only subcommands take selectors and ids, never files: they read only assent's own state.
      return effects;
    default: {
      const s = scan(args, { shortValue: '', long: [] });
      effects.reads.push(...s.operands, ...s.options.flatMap((o) => (o.value === undefined ? [] : [o.value])));
      return effects;
    }
  }
}
