// R-SH-6: the models match the real programs on this machine. For every
// installed GNU program the shortest prefix the model resolves for each long
// option, and one character less, are given to the real program and its
// getopt_long answer (ambiguous, unrecognised, or which option) is compared;
// git's parse-options is sampled the same way; sed --sandbox checks that a
// script the model accepts has no w/r/e command in sed's own reading; and
// the abbreviations of issue 18 are shown to really write or run. Everything
// runs in a temporary directory with stdin from /dev/null.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROGRAM_MODELS } from '../../../../src/core/policy/programs/index.js';
import { resolveLong } from '../../../../src/core/policy/programs/optionParser.js';
import type { ProgramModel } from '../../../../src/core/policy/programs/programModel.js';
import { checkSedScript } from '../../../../src/core/policy/programs/sedScript.js';
import { judge } from './programTable.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-models-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function installed(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
}

function env(): NodeJS.ProcessEnv {
  return { PATH: process.env['PATH'], LC_ALL: 'C', HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_EDITOR: 'false', GIT_PAGER: 'cat', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' };
}

/** Runs a program and returns its standard error (git gets 3 s, the others 1 s: `tail --follow` waits for ever). */
function stderrOf(program: string, args: string[], cwd = dir): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn('timeout', [program === 'git' ? '3' : '1', program, ...args], { cwd, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', () => resolve(err));
  });
}

async function inBatches<T, R>(items: readonly T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return results;
}

type RealAnswer = { kind: 'ambiguous'; names: string[] } | { kind: 'unknown' } | { kind: 'option'; name?: string };

/** What glibc's getopt_long said of `--prefix`. */
async function getoptAnswer(program: string, prefix: string): Promise<RealAnswer> {
  const withValue = await stderrOf(program, [`--${prefix}=x`]);
  const ambiguous = /is ambiguous; possibilities:(.*)/.exec(withValue);
  if (ambiguous !== null) return { kind: 'ambiguous', names: [...(ambiguous[1] ?? '').matchAll(/'--([^']+)'/g)].map((m) => m[1] ?? '') };
  if (/unrecognized option/.test(withValue)) return { kind: 'unknown' };
  const noValue = /option '--([^']+)' doesn't allow an argument/.exec(withValue);
  if (noValue !== null) return { kind: 'option', name: noValue[1] ?? '' };
  const required = /option '--([^']+)' requires an argument/.exec(await stderrOf(program, [`--${prefix}`]));
  return required !== null ? { kind: 'option', name: required[1] ?? '' } : { kind: 'option' };
}

/** For each long option: the shortest prefix the model resolves to it, and that prefix less one character. */
function samplePrefixes(model: ProgramModel): string[] {
  const prefixes = new Set<string>();
  for (const spec of model.options) {
    for (const long of spec.long) {
      for (let k = 1; k <= long.length; k += 1) {
        const found = resolveLong(long.slice(0, k), model.options, model.syntax);
        if (found.kind === 'option' && found.spec === spec) {
          prefixes.add(long.slice(0, k));
          if (k > 1) prefixes.add(long.slice(0, k - 1));
          break;
        }
      }
    }
  }
  return [...prefixes];
}

const GNU_PROGRAMS = ['ls', 'cat', 'head', 'tail', 'wc', 'file', 'stat', 'grep', 'sort', 'uniq', 'diff', 'cmp', 'du', 'basename', 'dirname', 'realpath', 'date', 'whoami', 'uname', 'sed', 'mkdir', 'touch', 'cp', 'mv', 'timeout', 'nice', 'nohup', 'stdbuf',
  'cut', 'tr', 'nl', 'paste', 'rev', 'tac', 'numfmt', 'base64', 'fold', 'expand', 'unexpand', 'comm', 'join', 'od', 'md5sum', 'sha1sum', 'sha224sum',
  'sha256sum', 'sha384sum', 'sha512sum', 'b2sum', 'cksum', 'seq',
  'id', 'df', 'pgrep', 'nproc', 'uptime', 'printenv',
  'egrep', 'fgrep',
];
// hostname is left out: a value its parser takes as --file would set this machine's host name.

describe('R-SH-6 the GNU models resolve long options as the installed programs do', () => {
  it.each(GNU_PROGRAMS)('%s', async (program) => {
    if (!installed(program)) return;
    const model = PROGRAM_MODELS.find((m) => m.name === program) as ProgramModel;
    const prefixes = samplePrefixes(model);
    const answers = await inBatches(prefixes, 6, (prefix) => getoptAnswer(program, prefix));
    const mismatches: string[] = [];
    prefixes.forEach((prefix, i) => {
      const real = answers[i] as RealAnswer;
      const ours = resolveLong(prefix, model.options, model.syntax);
      const specOf = (name: string) => model.options.find((s) => s.long.includes(name));
      const ok =
        real.kind === 'unknown'
          ? ours.kind === 'unknown'
          : real.kind === 'ambiguous'
            ? ours.kind === 'ambiguous' && new Set(real.names.map(specOf)).size === new Set(ours.candidates.map((c) => specOf(c.slice(2)))).size && real.names.every((n) => specOf(n) !== undefined)
            : ours.kind === 'option' && (real.name === undefined || ours.spec.long.includes(real.name));
      if (!ok) mismatches.push(`${program} --${prefix}: real ${JSON.stringify(real)}, model ${ours.kind === 'option' ? ours.spec.long.join('|') : ours.kind}`);
    });
    expect(mismatches).toEqual([]);
  });
});

describe('R-SH-6 git parse-options agrees with the git models', () => {
  const SUBCOMMANDS: [string, string[], string[]][] = [
    ['git status', ['status'], []],
    ['git add', ['add', '--dry-run'], []],
    ['git commit', ['commit', '--dry-run'], []],
    ['git branch', ['branch'], ['--list']],
    ['git switch', ['switch'], []],
    ['git restore', ['restore'], []],
    ['git stash push', ['stash', 'push'], []],
    ['git diff', ['diff', '--no-index'], ['a', 'b']],
  ];

  it.each(SUBCOMMANDS)('%s', async (name, before, after) => {
    if (!installed('git')) return;
    const repo = join(dir, `repo-${name.replace(/ /g, '-')}`);
    execFileSync('git', ['init', '-q', repo], { env: env() });
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: repo, env: env() });
    writeFileSync(join(repo, 'a'), 'a\n');
    writeFileSync(join(repo, 'b'), 'b\n');
    const model = PROGRAM_MODELS.find((m) => m.name === name) as ProgramModel;
    // Where the model resolves a prefix to one option, git must resolve it to that option too (or refuse it).
    const prefixes = samplePrefixes(model).filter((p) => resolveLong(p, model.options, model.syntax).kind === 'option');
    const answers = await inBatches(prefixes, 6, async (prefix) => {
      const err = await stderrOf('git', [...before, `--${prefix}=x`, ...after], repo);
      const named = /option `([^']+)' (takes no value|requires a value)/.exec(err);
      if (/ambiguous option/.test(err)) return { kind: 'ambiguous' } as const;
      return named !== null ? ({ kind: 'option', name: named[1] ?? '' } as const) : ({ kind: 'other' } as const);
    });
    const mismatches = prefixes.filter((prefix, i) => {
      const real = answers[i];
      const ours = resolveLong(prefix, model.options, model.syntax);
      if (real?.kind === 'ambiguous') return true;
      if (real?.kind !== 'option' || ours.kind !== 'option') return false;
      // git names `--verify` as the unset `no-no-verify`: the same option as the model's.
      const realName = real.name.replace(/^no-no-/, '');
      return !ours.spec.long.some((l) => [l, `no-${l}`, l.replace(/^no-/, '')].includes(realName));
    });
    expect(mismatches).toEqual([]);
  });
});

describe('R-POL-8 sed --sandbox agrees that an accepted script has no w, r or e', () => {
  const FRAGMENTS = ['p', 'w x', 'r x', 'e', 'W x', 'R x', ':a', 'b a', 'ba', 's/a/b/', 's/a/b/w x', 's/a/b/e', 's/a/b/gp', 'y/a/b/', '{', '}', ';', '\n', 'a w x', 'a\\', 'i\\\nw x', '1', '$!', '/w/', '#w x', 'q', 'l 3', 'N'];

  it('for every script of one or two fragments', () => {
    if (!installed('sed')) return;
    const scripts = [...FRAGMENTS, ...FRAGMENTS.flatMap((a) => FRAGMENTS.map((b) => a + b))];
    const wrong: string[] = [];
    for (const script of scripts) {
      if (checkSedScript(script) !== undefined) continue;
      const run = spawnSync('sed', ['--sandbox', '-n', '-e', script], { cwd: dir, input: '', env: env(), timeout: 3000 });
      // Other errors (a jump to a missing label) make sed run nothing; only the sandbox's refusal means a w, r or e.
      if (run.status !== 0 && /sandbox/.test(run.stderr.toString())) wrong.push(`${JSON.stringify(script)}: ${run.stderr.toString().trim()}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('issue 18: the abbreviations really write or run, and the models refuse them', () => {
  it('sort --outp=FILE writes FILE', () => {
    if (!installed('sort')) return;
    const out = join(dir, 'sorted');
    spawnSync('sort', [`--outp=${out}`], { cwd: dir, input: '' });
    expect(existsSync(out)).toBe(true);
    expect(judge(`sort --outp=${out}`).option).toBe('--output');
  });

  it('sort -S 16k --compress-prog=PROGRAM runs PROGRAM', () => {
    if (!installed('sort')) return;
    const marker = join(dir, 'compressor-ran');
    const program = join(dir, 'compress.sh');
    writeFileSync(program, `#!/bin/sh\ntouch '${marker}'\nexec cat\n`);
    chmodSync(program, 0o755);
    const input = Array.from({ length: 8000 }, (_, i) => `${(i * 7919) % 8000} line\n`).join('');
    spawnSync('sort', ['-S', '16k', '-T', dir, `--compress-prog=${program}`], { cwd: dir, input, maxBuffer: 1 << 24 });
    expect(existsSync(marker)).toBe(true);
    expect(judge(`sort -S 16k --compress-prog=${program}`).option).toBe('--compress-program');
  });

  it('sed --in-pl=SUFFIX edits in place', () => {
    if (!installed('sed')) return;
    const file = join(dir, 'edit.txt');
    writeFileSync(file, 'x\n');
    spawnSync('sed', ['--in-pl=.bak', 's/x/y/', file], { cwd: dir });
    expect(existsSync(`${file}.bak`)).toBe(true);
    expect(judge(`sed -n --in-pl=.bak p ${file}`).option).toBe('--in-place');
  });

  it('git diff --no-index takes abbreviations (--outpu… is ambiguous there, --output= writes)', async () => {
    if (!installed('git')) return;
    writeFileSync(join(dir, 'a'), 'a\n');
    writeFileSync(join(dir, 'b'), 'b\n');
    expect(await stderrOf('git', ['diff', '--no-index', '--stat-c=1', 'a', 'b'])).not.toMatch(/unknown|ambiguous|invalid/);
    spawnSync('git', ['diff', '--no-index', `--output=${join(dir, 'patch')}`, 'a', 'b'], { cwd: dir, env: env() });
    expect(existsSync(join(dir, 'patch'))).toBe(true);
    expect(judge('git diff --no-index --output=patch a b').option).toBe('--output');
    expect(await stderrOf('git', ['log', '--outp=x'])).toMatch(/unrecognized argument|not a git repository/);
  });
});
