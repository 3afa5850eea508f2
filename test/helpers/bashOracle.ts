// Bash itself as the oracle (issue 18, SPEC §14 "shell soundness"): real bash runs
// a command line in a throw-away sandbox whose PATH holds only logging shims, and
// what it executed, wrote and read is set against the policy's decision for it.
// Where it can, every run happens in a private mount namespace in which no system
// program directory is visible, so not even a generator mistake reaches a real program.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActionVerdict } from '../../src/core/policy/actionPlan.js';
import type { AgentPolicyConfig, AgentPolicySnapshot } from '../../src/core/policy/agentPolicyConfig.js';
import type { PathVars } from '../../src/core/policy/pathPolicy.js';
import type { ParsedShell } from '../../src/core/policy/shellCommand.js';
import type { ShellParser } from '../../src/shell/shellParser.js';
import { checkRun, type Finding } from './bashOracleCheck.js';
import { armCredentials, atimeWorks, changedPaths, newSandbox, PASS_THROUGH, restoreSandbox, snapshot, takeLog, type Execution, type OracleSandbox } from './bashOracleSandbox.js';

export type { Execution } from './bashOracleSandbox.js';

/** bash gets 3 s (then KILL 1 s later); the oracle kills the run's whole process group after this. */
const HARD_DEADLINE_MS = 5_000;
const OUTPUT_CAP = 64 * 1024;
const NOT_ENTERED = 'bash oracle: could not enter the sandbox';

/** What one bash run did. */
export interface BashRun {
  executions: Execution[];
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  /** Paths under the sandbox whose entry appeared, vanished or changed (type, size, mtime, mode, link text). */
  changed: string[];
  /** Credential files whose atime moved: bash or a real program read them. */
  atimeReads: string[];
  /** Changed files whose content holds a credential's canary: a credential's content was copied there. */
  canaryFiles: string[];
  /** Wall time from spawning bash to its last descendant closing the sentinel. */
  ms: number;
}

/** How the policy side is reached: the parser and the daemon's judge, from src/ in tests and from dist/ in the bench. */
export interface OracleJudge {
  parse(command: string): ParsedShell;
  /** The decision of the default policy for `command` in `cwd`, with HOME = `home` (assent's state in `home/.assent`). */
  judge(command: string, cwd: string, home: string): ActionVerdict;
}

/** What the default policy's judge is made of; the test passes src/'s modules, the bench dist/'s. */
export interface PolicyModules {
  parser: ShellParser;
  policy: AgentPolicyConfig;
  compileAgentPolicy(policy: AgentPolicyConfig, vars: PathVars): AgentPolicySnapshot;
  hostPathVars(env: { HOME?: string }, assentHome: string): PathVars;
  judgeShell(parser: ShellParser, snapshot: AgentPolicySnapshot, command: string, cwd: string): ActionVerdict;
}

/** The decision as the daemon makes it (bench/shell.bench.mjs, test/helpers/shellFixture.ts): one compiled snapshot per HOME. */
export function defaultPolicyJudge(m: PolicyModules): OracleJudge {
  const snapshots = new Map<string, AgentPolicySnapshot>();
  return {
    parse: (command) => m.parser.parse(command),
    judge(command, cwd, home) {
      let snapshot = snapshots.get(home);
      if (snapshot === undefined) {
        snapshot = m.compileAgentPolicy(m.policy, m.hostPathVars({ HOME: home }, join(home, '.assent')));
        snapshots.set(home, snapshot);
      }
      return m.judgeShell(m.parser, snapshot, command, cwd);
    },
  };
}

export interface OracleResult {
  command: string;
  verdict: ActionVerdict;
  run: BashRun;
  findings: Finding[];
}

interface Host {
  root: string;
  /** Copies of the programs the pass-through shims hand over to (and `mount`): reachable only by these paths. */
  real: string;
  /** The process holding the mount namespace every run enters, when there is one. */
  holder?: { pid: number; nsenter: string; child: ChildProcess };
  atime: boolean;
}

// ---- the host -----------------------------------------------------------------------

function which(name: string): string | undefined {
  for (const dir of ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin']) if (existsSync(join(dir, name))) return realpathSync(join(dir, name));
  return undefined;
}

/**
 * Starts a process in a new user and mount namespace that mounts an empty tmpfs
 * over every system program directory, makes the whole file system read-only but
 * the workers' sandboxes, and then waits; each run enters it with nsenter (an
 * `unshare` and six `mount`s per run would cost ~25 ms each time).
 */
async function startHolder(real: string, writable: readonly string[]): Promise<Host['holder']> {
  const unshare = which('unshare');
  const nsenter = which('nsenter');
  if (unshare === undefined || nsenter === undefined) return undefined;
  const mount = `'${real}/mount'`;
  const setup = [
    ...['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/sbin', '/usr/bin', '/bin'].map((d) => `if [ -d ${d} ] && [ ! -L ${d} ]; then ${mount} -t tmpfs -o size=4k,mode=555 oracle ${d} || exit 125; fi`),
    ...writable.map((dir) => `${mount} --bind '${dir}' '${dir}' || exit 125`),
    `${mount} -o remount,bind,ro / || exit 125`,
    '[ ! -e /usr/bin/ls ] || exit 125',
    'echo ready',
    'read x',
  ].join('; ');
  const child = spawn(unshare, ['-r', '-m', '--', `${real}/sh`, '-c', setup], { stdio: ['pipe', 'pipe', 'ignore'], env: { PATH: '/nonexistent' } });
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 5_000);
    child.stdout.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(chunk.toString().startsWith('ready'));
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  if (!ready || child.pid === undefined) {
    child.kill('SIGKILL');
    return undefined;
  }
  return { pid: child.pid, nsenter, child };
}

function stopHolder(host: Host): void {
  if (host.holder === undefined) return;
  host.holder.child.stdin?.end();
  host.holder.child.kill('SIGKILL');
}

/** Kills every process whose cwd or executable lies under `root` (a background job that outlived its run); returns their pids. */
export function stragglers(root: string, kill: boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const pid = Number(entry);
    const inside = ['cwd', 'exe'].some((link) => {
      try {
        return readlinkSync(`/proc/${pid}/${link}`).startsWith(`${root}/`);
      } catch {
        return false; // not ours to read, or gone
      }
    });
    if (!inside || pid === process.pid) continue;
    found.push(pid);
    if (kill) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  return found;
}

// ---- one run ---------------------------------------------------------------------------

/**
 * The runner each worker keeps (in the namespace when there is one): for each
 * request it runs `env -i HOME PATH timeout -k 1 3 bash --norc --noprofile -c
 * COMMAND` in the sandbox's cwd under limits, in a process group of its own,
 * and says `DONE` once every process holding the sentinel FIFO (fd 3, which
 * every descendant inherits) has exited, background jobs included. A node
 * `spawn` per command would fork the whole test process each time (~15 ms).
 * SIGPIPE is ignored (and so for everything bash runs): whether a pipeline's
 * writer outlives its reader would otherwise depend on timing, and with it
 * which branch of an `if` runs; a seed must replay the same executions.
 */
const RUNNER = `set -m
ctl=$1 cwd=$2 home=$3 shims=$4 real=$5 marker=$6
while IFS= read -r id; do
  cmd=$(<"$ctl/cmd"); cmd=\${cmd%x}
  ( exec 3>"$ctl/fifo" >"$ctl/out" 2>"$ctl/err" </dev/null
    cd -- "$cwd" && [ "$(pwd -P)" = "$cwd" ] || { echo "$marker" >&2; exit 125; }
    ulimit -f 20000; ulimit -t 10; ulimit -v 2000000; ulimit -n 256
    trap '' PIPE
    exec "$real/env" -i HOME="$home" PATH="$shims" "$real/timeout" -k 1 3 "$real/bash" --norc --noprofile -c "$cmd" ) &
  pid=$!
  echo "PID $id $pid"
  exec 4<"$ctl/fifo"
  while read -r -u 4 _; do :; done
  exec 4<&-
  wait "$pid"; code=$?
  echo "DONE $id $code"
done`;

interface Runner {
  child: ChildProcess;
  /** The next line it prints. */
  line(): Promise<string>;
  requests: number;
}

function startRunner(host: Host, sandbox: OracleSandbox): Runner {
  const spawnSyncFifo = spawnSync('mkfifo', [join(sandbox.ctl, 'fifo')]);
  if (spawnSyncFifo.status !== 0) throw new TypeError('the bash oracle needs mkfifo');
  const run = [`${host.real}/bash`, '--norc', '--noprofile', '-c', RUNNER, 'runner', sandbox.ctl, sandbox.cwd, sandbox.home, sandbox.shims, host.real, NOT_ENTERED];
  const [file, ...args] = host.holder === undefined ? run : [host.holder.nsenter, '-t', String(host.holder.pid), '-U', '-m', '--preserve-credentials', `--wd=${sandbox.dir}`, '--', ...run];
  const child = spawn(file as string, args, { cwd: sandbox.dir, env: { PATH: '/nonexistent' }, stdio: ['pipe', 'pipe', 'ignore'] });
  const lines: string[] = [];
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  let buffered = '';
  let ended: Error | undefined;
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const waiter = waiting.shift();
      if (waiter === undefined) lines.push(line);
      else waiter.resolve(line);
    }
  });
  child.on('exit', () => {
    ended = new TypeError(`the bash oracle's runner for ${sandbox.dir} ended`);
    for (const waiter of waiting.splice(0)) waiter.reject(ended);
  });
  return {
    child,
    requests: 0,
    line: () => {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (ended !== undefined) return Promise.reject(ended);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
  };
}

function readAtimes(sandbox: OracleSandbox): string[] {
  return sandbox.credentialFiles.filter((cred) => {
    try {
      const st = statSync(cred);
      return st.atimeMs > st.mtimeMs;
    } catch {
      return false; // gone: the tree diff reports it
    }
  });
}

function readCapped(path: string): string {
  try {
    return readFileSync(path, 'utf8').slice(0, OUTPUT_CAP);
  } catch {
    return '';
  }
}

/** Runs one command line with real bash in the sandbox; resolves when bash and everything it left running are done. */
async function runBash(host: Host, sandbox: OracleSandbox, runner: Runner, command: string): Promise<BashRun> {
  armCredentials(sandbox);
  writeFileSync(join(sandbox.ctl, 'cmd'), `${command}x`);
  const id = (runner.requests += 1);
  const started = performance.now();
  runner.child.stdin?.write(`${id}\n`);
  const [, pidOf, pidText] = (await runner.line()).split(' ');
  if (Number(pidOf) !== id) throw new TypeError(`the bash oracle's runner answered run ${pidOf} for run ${id}`);
  const pid = Number(pidText);
  let killed = false;
  // bash has 3 s (then KILL); past the deadline the whole group goes, then whatever still runs in the sandbox.
  const deadline = setTimeout(() => {
    killed = true;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, HARD_DEADLINE_MS);
  const stuck = setTimeout(() => stragglers(join(sandbox.dir, 'box'), true), HARD_DEADLINE_MS + 2_000);
  const [, doneOf, codeText] = (await runner.line()).split(' ');
  clearTimeout(deadline);
  clearTimeout(stuck);
  if (Number(doneOf) !== id) throw new TypeError(`the bash oracle's runner finished run ${doneOf} for run ${id}`);
  const ms = performance.now() - started;
  const exitCode = Number(codeText);
  const stdout = readCapped(join(sandbox.ctl, 'out'));
  const stderr = readCapped(join(sandbox.ctl, 'err'));
  if (stderr.startsWith(NOT_ENTERED)) throw new TypeError(`the oracle could not start bash in ${sandbox.cwd}`);
  const changed = changedPaths(sandbox.pristine, snapshot(sandbox.dir, sandbox.log));
  const canaryFiles = changed.filter((path) => {
    if (sandbox.credentialFiles.includes(path)) return false;
    try {
      return statSync(path).isFile() && readFileSync(path, 'utf8').includes(sandbox.canary);
    } catch {
      return false;
    }
  });
  const timedOut = killed || exitCode === 124 || exitCode === 137;
  return { executions: takeLog(sandbox.log), stdout, stderr, exitCode, timedOut, changed, atimeReads: host.atime ? readAtimes(sandbox) : [], canaryFiles, ms };
}

// ---- the oracle ----------------------------------------------------------------------------

export interface OracleOptions {
  judge: OracleJudge;
  /** Commands run in parallel, each worker in its own sandbox (2–4 on this 2-core machine). */
  workers?: number;
  /** Set false to run without the mount namespace even where one is available (to compare). */
  namespace?: boolean;
}

export interface BashOracle extends AsyncDisposable {
  root: string;
  /** True when bash runs in a mount namespace in which no system program directory is visible. */
  namespace: boolean;
  /** True when a read moves a file's atime here, so bash's own reads of credentials show. */
  atime: boolean;
  /** Judges and runs each command in the pool; results in input order. `onResult` sees each as it lands. */
  check(commands: readonly string[], onResult?: (result: OracleResult, index: number) => void): Promise<OracleResult[]>;
}

/** Sets up the real programs the shims hand over to, the namespace, and one sandbox per worker. */
export async function createBashOracle(options: OracleOptions): Promise<BashOracle> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-oracle-')));
  const host: Host = { root, real: join(root, 'real'), atime: false };
  const dirs = Array.from({ length: Math.max(1, options.workers ?? 3) }, (_, i) => join(root, `w${i}`));
  try {
    const real = host.real;
    mkdirSync(real);
    for (const name of [...PASS_THROUGH, 'mount']) {
      const found = which(name);
      if (found === undefined) throw new TypeError(`the bash oracle needs ${name}, which is not installed`);
      copyFileSync(found, join(real, name));
      chmodSync(join(real, name), 0o755);
    }
    host.atime = atimeWorks(root);
    for (const dir of dirs) mkdirSync(dir);
    if (options.namespace !== false) host.holder = await startHolder(real, dirs);
  } catch (error) {
    stopHolder(host);
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const sandboxes = dirs.map((dir, i) => newSandbox(dir, host.real, i));
  const runners = new Map(sandboxes.map((sandbox) => [sandbox, startRunner(host, sandbox)]));
  const stop = (): void => {
    for (const runner of runners.values()) {
      runner.child.stdin?.end();
      runner.child.kill('SIGKILL');
    }
    stopHolder(host);
  };

  const one = async (sandbox: OracleSandbox, command: string): Promise<OracleResult> => {
    if (/(^|[\s'"`=(<>|;&{}])\/(?!dev\/null)/.test(command)) throw new TypeError(`the generator wrote an absolute path, which the oracle never runs: ${command}`);
    const verdict = options.judge.judge(command, sandbox.cwd, sandbox.home);
    const parsed = options.judge.parse(command);
    const run = await runBash(host, sandbox, runners.get(sandbox) as Runner, command);
    const findings = checkRun({ command, parsed, verdict, run, sandbox });
    restoreSandbox(sandbox, run.changed);
    return { command, verdict, run, findings };
  };

  return {
    root,
    namespace: host.holder !== undefined,
    atime: host.atime,
    async check(commands, onResult) {
      const results: OracleResult[] = new Array<OracleResult>(commands.length);
      let next = 0;
      let failed = false;
      // One worker's error stops the others taking more, and surfaces once they are all idle.
      const settled = await Promise.allSettled(
        sandboxes.map(async (sandbox) => {
          while (next < commands.length && !failed) {
            const index = next;
            next += 1;
            try {
              const result = await one(sandbox, commands[index] as string);
              results[index] = result;
              onResult?.(result, index);
            } catch (error) {
              failed = true;
              throw error;
            }
          }
        }),
      );
      const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (rejected !== undefined) throw rejected.reason;
      return results;
    },
    [Symbol.asyncDispose]: () => {
      stop();
      stragglers(root, true);
      rmSync(root, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/** A result as text for a failure message or the findings file, the sandbox's paths shortened to `~` and `<sandbox>`. */
export function describeResult(result: OracleResult, sandboxRoot: string): string {
  const escaped = sandboxRoot.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const short = (text: string): string => text.replace(new RegExp(`${escaped}/w[0-9]+/box/home`, 'g'), '~').replace(new RegExp(`${escaped}/w[0-9]+`, 'g'), '<sandbox>');
  const lines = [`command: ${JSON.stringify(result.command)}`, `decision: ${result.verdict.decision}`];
  for (const part of result.verdict.parts) lines.push(`  part ${part.kind} ${part.decision}: ${short(part.text)}${part.reason === undefined ? '' : `  — ${short(part.reason)}`}`);
  for (const e of result.run.executions) lines.push(`  bash executed: ${short(e.path)} ${JSON.stringify(e.args.map(short))} in ${short(e.pwd)}${e.fds.length > 0 ? ` with fds on ${e.fds.map(short).join(', ')}` : ''}`);
  if (result.run.changed.length > 0) lines.push(`  changed: ${result.run.changed.map(short).join(', ')}`);
  if (result.run.atimeReads.length > 0) lines.push(`  read (atime): ${result.run.atimeReads.map(short).join(', ')}`);
  if (result.run.timedOut) lines.push('  (timed out)');
  for (const f of result.findings) lines.push(`  FINDING ${f.kind}: ${short(f.detail)}`);
  return lines.join('\n');
}
