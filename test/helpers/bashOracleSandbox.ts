// One worker's sandbox for the bash oracle: a HOME with fake credentials, a project
// with gate files and a dangling symlink, and a shim directory as the only PATH
// entry. It is put back as it was after a run that changed it, so every command is
// judged and run against the same tree.
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxFacts } from './bashOracleCheck.js';

/** The programs on the shims' PATH. Each logs its argv and exits 0; the ones in PASS_THROUGH then run the real program. */
export const SHIM_PROGRAMS: readonly string[] = Object.freeze([
  'ls', 'cat', 'grep', 'rg', 'git', 'sort', 'sed', 'echo', 'printf', 'mkdir', 'touch', 'cp', 'mv', 'rm', 'rmdir', 'ln', 'chmod',
  'curl', 'wget', 'node', 'python3', 'head', 'tail', 'wc', 'file', 'stat', 'which', 'tee', 'uniq', 'diff', 'cmp', 'du', 'tree',
  'date', 'whoami', 'uname', 'basename', 'dirname', 'realpath', 'tar', 'zip', 'rsync', 'make', 'npm', 'sleep', 'true', 'false',
  'test', 'pwd', 'kill', 'id', 'sudo', 'ssh', 'scp', 'awk', 'less', 'vim', 'assent', 'apt',
  'bash', 'sh', 'env', 'xargs', 'timeout', 'nice', 'nohup', 'stdbuf', 'find',
]);

/**
 * Real programs a shim hands over to after logging, so what they run still goes
 * through the shims: each finds its inner command on the inherited PATH.
 * (`env` only without -i/-u, `find` only without -delete: see the shim script.)
 */
export const PASS_THROUGH = ['bash', 'sh', 'env', 'xargs', 'timeout', 'nice', 'nohup', 'stdbuf', 'find'] as const;

type Entry = readonly [path: string, content: string, kind?: 'link' | 'exec' | 'cred'];

/** The sandbox's files under `box/`: credentials carry the canary, links are written as their link text. */
const TREE: readonly Entry[] = [
  ['home/.ssh/id_rsa', 'FAKE KEY', 'cred'],
  ['home/.ssh/config', 'Host x', 'cred'],
  ['home/.aws/credentials', 'aws_secret', 'cred'],
  ['home/.netrc', 'machine x password p', 'cred'],
  ['home/.assent/db.url', 'postgres://u:p@h/db', 'cred'],
  ['home/notes.txt', 'outside the project\n'],
  ['home/other/.env', 'OTHER=1', 'cred'],
  ['home/proj/README.md', '# readme\n'],
  ['home/proj/notes.txt', 'a\nb\n'],
  ['home/proj/list.txt', 'b\na\n'],
  ['home/proj/key.pub', 'ssh-ed25519 AAAA test\n'],
  ['home/proj/package.json', '{"name":"p"}\n'],
  ['home/proj/run.sh', 'rm -rf build\nls\n'],
  ['home/proj/.env', 'API_KEY=1', 'cred'],
  ['home/proj/.env.local', 'API_KEY=2', 'cred'],
  ['home/proj/.env.example', 'API_KEY=\n'],
  ['home/proj/config/.env', 'DB=1', 'cred'],
  ['home/proj/src/a.ts', 'export {};\n'],
  ['home/proj/src/b.ts', 'export {};\n'],
  ['home/proj/src/sub/c.ts', 'export {};\n'],
  ['home/proj/docs/guide.md', '# guide\n'],
  // A cloned project's dangling symlink into ~/.ssh (issue 18).
  ['home/proj/docs/notes.md', '../../.ssh/authorized_keys2', 'link'],
  ['home/proj/link', '../.ssh', 'link'],
  ['home/proj/build/.keep', ''],
  ['home/proj/.git/HEAD', 'ref: refs/heads/main\n'],
  ['home/proj/.git/config', '[core]\n\tbare = false\n'],
  ['home/proj/.git/hooks/.keep', ''],
  ['home/proj/.git/objects/.keep', ''],
  ['home/proj/.git/refs/heads/.keep', ''],
  ['home/proj/.claude/.keep', ''],
  ['home/proj/.gemini/.keep', ''],
  ['home/proj/.codex/.keep', ''],
  // A cloned project's embedded bare repository whose configuration runs a program (issue 18).
  ['home/proj/vendor/lib/HEAD', 'ref: refs/heads/main\n'],
  ['home/proj/vendor/lib/config', '[core]\n\tbare = true\n[diff "x"]\n\ttextconv = rm -rf build\n'],
  ['home/proj/vendor/lib/info/attributes', '* diff=x\n'],
  ['home/proj/vendor/lib/objects/.keep', ''],
  ['home/proj/vendor/lib/refs/heads/.keep', ''],
  // Programs in the project: PATH=bin (or `./bin/ls`) runs these instead of the shims'.
  ['home/proj/bin/ls', '', 'exec'],
  ['home/proj/bin/git', '', 'exec'],
];

/**
 * A worker's sandbox: `dir/box/home` is HOME, `dir/box/home/proj` the agent's
 * cwd, `dir/shims` the PATH, `dir/log` the shims' records and (in `log/ctl`) the
 * runner's command, output and sentinel FIFO; the log is never part of a snapshot.
 */
export interface OracleSandbox extends SandboxFacts {
  dir: string;
  log: string;
  ctl: string;
  /** The directory of the real programs the pass-through shims hand over to. */
  real: string;
  /** The sandbox as it is when no command has changed it. */
  pristine: Tree;
}

/** Every entry: what it is, its size, mtime, mode and link text (never its atime). */
export type Tree = Map<string, string>;

const OLD_ATIME = new Date('2001-01-01T00:00:00Z');
const OLD_MTIME = new Date('2002-01-01T00:00:00Z');

/** A shim: one log file per process (concurrent pipeline stages never interleave), NUL-separated fields. */
function shimScript(sandbox: OracleSandbox, passThrough: string | undefined): string {
  const creds = sandbox.credentialFiles.map((c) => `'${c}'`).join(' ');
  const lines = [
    `#!${sandbox.real}/sh`,
    // Which credential files fds 0-2 are open on, before the log redirection replaces fd 1.
    `fds=''`,
    `for f in 0 1 2; do for c in ${creds}; do if [ /dev/fd/$f -ef "$c" ]; then fds="$fds$c:"; fi; done; done`,
    `l='${sandbox.log}'`,
    `n=0`,
    `while [ -e "$l/$$.$n" ]; do n=$((n+1)); done`,
    `{ printf '%s\\0%s\\0%s\\0' "$0" "$PWD" "$#"; [ $# -eq 0 ] || printf '%s\\0' "$@"; printf '%s' "$fds"; } >"$l/$$.$n"`,
  ];
  // Without its environment (or with PATH unset) env would find its command on the C library's default path.
  if (passThrough === 'env') lines.push(`for a in "$@"; do case $a in -i|-|--ignore-environment|-u*|--unset*|-[!-]*[iu]*) exit 0;; -*) ;; *) break;; esac; done`);
  if (passThrough === 'find') lines.push(`for a in "$@"; do case $a in -delete) exit 0;; esac; done`);
  if (passThrough !== undefined) lines.push(`exec '${sandbox.real}/${passThrough}' "$@"`);
  // Something for a substitution to expand to: the program's name and arguments.
  else lines.push(`printf '%s\\n' "\${0##*/} $*"`, 'exit 0');
  return `${lines.join('\n')}\n`;
}

function buildEntry(sandbox: OracleSandbox, [rel, content, kind]: Entry): void {
  const path = join(sandbox.dir, 'box', rel);
  rmSync(path, { recursive: true, force: true });
  mkdirSync(join(path, '..'), { recursive: true });
  if (kind === 'link') symlinkSync(content, path);
  else if (kind === 'exec') writeFileSync(path, shimScript(sandbox, undefined), { mode: 0o755 });
  else if (kind === 'cred') {
    writeFileSync(path, `${content} ${sandbox.canary}\n`);
    utimesSync(path, OLD_ATIME, OLD_MTIME);
  } else writeFileSync(path, content);
}

function buildShims(sandbox: OracleSandbox): void {
  rmSync(sandbox.shims, { recursive: true, force: true });
  mkdirSync(sandbox.shims, { recursive: true });
  writeFileSync(join(sandbox.shims, '.log'), shimScript(sandbox, undefined), { mode: 0o755 });
  for (const name of PASS_THROUGH) writeFileSync(join(sandbox.shims, `.${name}`), shimScript(sandbox, name), { mode: 0o755 });
  for (const name of SHIM_PROGRAMS) symlinkSync((PASS_THROUGH as readonly string[]).includes(name) ? `.${name}` : '.log', join(sandbox.shims, name));
}

/** `d:`, `f:` or `l:` (then anything else), its mode, size, mtime and link text; undefined when it does not exist. */
function signature(path: string): string | undefined {
  try {
    const st = lstatSync(path, { bigint: true });
    const kind = st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : st.isFile() ? 'f' : 'o';
    return `${kind}:${st.mode}:${st.size}:${st.mtimeNs}:${kind === 'l' ? readlinkSync(path) : ''}`;
  } catch {
    return undefined;
  }
}

/** Every entry under `dir` but `skip`. */
export function snapshot(dir: string, skip: string): Tree {
  const tree: Tree = new Map();
  const walk = (path: string): void => {
    const sig = signature(path);
    if (sig === undefined) return;
    tree.set(path, sig);
    if (sig.startsWith('d:')) for (const name of readdirSync(path)) if (join(path, name) !== skip) walk(join(path, name));
  };
  walk(dir);
  return tree;
}

export function changedPaths(before: Tree, after: Tree): string[] {
  const out: string[] = [];
  for (const [path, sig] of after) if (before.get(path) !== sig) out.push(path);
  for (const path of before.keys()) if (!after.has(path)) out.push(path);
  return out.sort();
}

export function newSandbox(dir: string, real: string, index: number): OracleSandbox {
  const home = join(dir, 'box', 'home');
  const sandbox: OracleSandbox = {
    dir,
    home,
    cwd: join(home, 'proj'),
    shims: join(dir, 'shims'),
    log: join(dir, 'log'),
    ctl: join(dir, 'log', 'ctl'),
    real,
    credentialFiles: TREE.filter((e) => e[2] === 'cred').map((e) => join(dir, 'box', e[0])),
    canary: `CANARY-${index}-${Math.random().toString(36).slice(2, 10)}`,
    pristine: new Map(),
  };
  mkdirSync(sandbox.ctl, { recursive: true });
  buildShims(sandbox);
  for (const entry of TREE) buildEntry(sandbox, entry);
  sandbox.pristine = snapshot(dir, sandbox.log);
  return sandbox;
}

/**
 * Puts back what a run changed: removes what it created, rewrites the entries it
 * changed or removed. A directory's own mtime is left as it is (nothing judges it).
 */
export function restoreSandbox(sandbox: OracleSandbox, changed: readonly string[]): void {
  if (changed.length === 0) return;
  if (changed.some((p) => p === sandbox.shims || p.startsWith(`${sandbox.shims}/`))) buildShims(sandbox);
  for (const path of changed) if (!sandbox.pristine.has(path)) rmSync(path, { recursive: true, force: true });
  const box = join(sandbox.dir, 'box');
  // A directory of the tree gone or turned into something else: build it all again.
  if (changed.some((p) => sandbox.pristine.get(p)?.startsWith('d:') === true && signature(p)?.startsWith('d:') !== true)) {
    rmSync(box, { recursive: true, force: true });
    for (const entry of TREE) buildEntry(sandbox, entry);
  } else {
    for (const entry of TREE) {
      const path = join(box, entry[0]);
      if (signature(path) !== sandbox.pristine.get(path)) buildEntry(sandbox, entry);
    }
  }
  sandbox.pristine = snapshot(sandbox.dir, sandbox.log);
}

/** Resets the credentials' atimes so that a read during the next run shows. */
export function armCredentials(sandbox: OracleSandbox): void {
  for (const cred of sandbox.credentialFiles) {
    try {
      utimesSync(cred, OLD_ATIME, OLD_MTIME);
    } catch {
      // gone: the tree diff reports it, and restoring puts it back
    }
  }
}

/** Whether reading a file moves its atime on the file system of `dir` (relatime: when atime is older than mtime). */
export function atimeWorks(dir: string): boolean {
  const path = join(dir, 'atime-probe');
  writeFileSync(path, 'x');
  utimesSync(path, OLD_ATIME, OLD_MTIME);
  readFileSync(path);
  const st = lstatSync(path);
  rmSync(path);
  return st.atimeMs > st.mtimeMs;
}

/** One program bash (or a program it ran) executed, as its shim logged it. */
export interface Execution {
  /** The path it was executed by (`$0` of the shim: where PATH lookup found it, or the path written). */
  path: string;
  /** Its base name, the program as a person would name it. */
  program: string;
  /** Its working directory. */
  pwd: string;
  args: string[];
  /** Credential files its stdin, stdout or stderr was open on (a redirection bash performed for it). */
  fds: string[];
}

/** Reads and empties the log. */
export function takeLog(log: string): Execution[] {
  const out: Execution[] = [];
  for (const name of readdirSync(log)) {
    // `PID.N` files are records; anything else (the runner's `ctl/`) is not.
    if (!/^[0-9]+\.[0-9]+$/.test(name)) continue;
    const file = join(log, name);
    const fields = readFileSync(file, 'utf8').split('\0');
    unlinkSync(file);
    const [path = '', pwd = '', argc = '0'] = fields;
    const count = Number(argc);
    const args = fields.slice(3, 3 + count);
    const fds = (fields[3 + count] ?? '').split(':').filter((f) => f !== '');
    out.push({ path, program: path.slice(path.lastIndexOf('/') + 1), pwd, args, fds });
  }
  return out;
}
