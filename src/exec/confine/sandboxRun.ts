// Whether bubblewrap works on this machine, and running one command in a
// profile (sandboxProfile.ts) with the caller's stdio, to its exit code.
import { spawn, spawnSync } from 'node:child_process';
import type { SpawnSyncReturns } from 'node:child_process';
import { accessSync, constants as fsConstants, lstatSync, realpathSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { Duplex, Stream } from 'node:stream';
import { REWRITING_AGENTS, type AgentName } from '../../core/agent/agentAction.js';
import { AssentError } from '../../core/base/errors.js';
import { DATA_FD_BASE, type SandboxProfile } from './sandboxProfile.js';

export type SandboxStatus = { available: true; bwrap: string; version: string; bash: string } | { available: false; reason: string };

export interface SandboxStatusOptions {
  /** Where bwrap and bash are trusted to be (default {@link SYSTEM_DIRS}); tests name a stand-in's directory. Never read from the environment. */
  trustedDirs?: readonly string[];
  /** Whose PATH is searched for bwrap; default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  spawnSync?: (command: string, args: readonly string[], options: { env: Record<string, string>; encoding: 'utf8'; timeout: number }) => SpawnSyncReturns<string>;
}

/** --disable-userns came with 0.8.0: without it the command could open a user namespace of its own. */
const MIN_VERSION = [0, 8, 0] as const;
/** The same namespaces and options every confined run gets. */
const TRIAL_ARGS = ['--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--new-session', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
const INSTALL = 'install bubblewrap 0.8.0 or later (apt install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)';

const statusCache = new Map<string, SandboxStatus>();

function executable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first `name` on PATH; relative entries (`.`, `node_modules/.bin`) are skipped: they are the project's. */
function onPath(name: string, path: string, trusted?: readonly string[]): string | undefined {
  for (const dir of path.split(':')) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (executable(candidate) && (trusted === undefined || inSystemDir(candidate, trusted))) return candidate;
  }
  return undefined;
}

/**
 * Where a bwrap (and bash) is trusted to be the real one: the system's own
 * directories. A `bwrap` found anywhere else on the agent's PATH — the project,
 * a home bin directory — could be a script the agent wrote that runs the
 * command unconfined, so it is passed over.
 */
export const SYSTEM_DIRS: readonly string[] = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/local/sbin'];

function inSystemDir(path: string, trusted: readonly string[]): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return false;
  }
  return trusted.includes(dirname(real));
}

function newer(version: readonly number[], minimum: readonly number[]): boolean {
  for (let i = 0; i < minimum.length; i += 1) {
    const a = version[i] ?? 0;
    const b = minimum[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** Why the trial sandbox failed, with the fix: most often the kernel refuses user namespaces to unprivileged users. */
function trialFailure(stderr: string, status: number | null): string {
  const said = stderr.trim().split('\n').slice(-1)[0] ?? '';
  if (/namespace|uid map|setting up uid|No space left|Operation not permitted|Permission denied/i.test(said)) {
    return `user namespaces are refused (bwrap: ${said}): allow them with sysctl kernel.unprivileged_userns_clone=1 (Debian), sysctl kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 23.10 and later) or sysctl user.max_user_namespaces=15000`;
  }
  return `a trial sandbox (bwrap ${TRIAL_ARGS.join(' ')} -- true) failed with exit ${status ?? 'by a signal'}${said === '' ? '' : `: ${said}`}`;
}

/** The programs a confined run starts: bwrap, and the bash its guardian and the command run in. */
export interface SandboxPrograms {
  bwrap: string;
  bash: string;
}

export type LocatedSandbox = ({ available: true } & SandboxPrograms) | { available: false; reason: string };

/**
 * bwrap and bash as a confined run finds them, from the file system alone
 * (no spawn): what a run needs before it starts, where {@link sandboxStatus}
 * also proves that the sandbox works.
 */
export function locateSandbox(env: Readonly<Record<string, string | undefined>> = process.env, trusted: readonly string[] = SYSTEM_DIRS): LocatedSandbox {
  const path = env['PATH'] ?? '';
  const bwrap = onPath('bwrap', path, trusted);
  if (bwrap === undefined) {
    const elsewhere = onPath('bwrap', path);
    if (elsewhere !== undefined) return { available: false, reason: `the only bwrap on PATH is ${elsewhere}, outside the system's directories (${trusted.join(', ')}): a bwrap there could run the command unconfined, so it is not used; ${INSTALL}` };
    return { available: false, reason: `bwrap (bubblewrap) is not on PATH (${path === '' ? 'PATH is empty' : path}): ${INSTALL}` };
  }
  const bash = ['/bin/bash', '/usr/bin/bash'].find(executable) ?? onPath('bash', path, trusted);
  if (bash === undefined) return { available: false, reason: 'bash is not installed (the sandbox runs commands with bash -c): install bash' };
  return { available: true, bwrap, bash };
}

function probe(env: Readonly<Record<string, string | undefined>>, run: NonNullable<SandboxStatusOptions['spawnSync']>, trusted: readonly string[]): SandboxStatus {
  const path = env['PATH'] ?? '';
  const located = locateSandbox(env, trusted);
  if (!located.available) return located;
  const { bwrap, bash } = located;
  const childEnv = { PATH: path };
  const versionRun = run(bwrap, ['--version'], { env: childEnv, encoding: 'utf8', timeout: 5000 });
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(versionRun.stdout ?? '');
  if (versionRun.status !== 0 || version === null) return { available: false, reason: `${bwrap} --version did not print a version (${(versionRun.stderr ?? '').trim() || `exit ${versionRun.status}`}): ${INSTALL}` };
  const numbers = version.slice(1, 4).map(Number);
  if (!newer(numbers, MIN_VERSION)) return { available: false, reason: `${bwrap} is bubblewrap ${version[0]}, older than ${MIN_VERSION.join('.')} (needed for --disable-userns): ${INSTALL}` };
  const trial = run(bwrap, [...TRIAL_ARGS, '--', 'true'], { env: childEnv, encoding: 'utf8', timeout: 10_000 });
  if (trial.status !== 0) return { available: false, reason: trialFailure(trial.stderr ?? '', trial.status) };
  return { available: true, bwrap, version: version[0], bash };
}

/**
 * Whether a confined command can run here: bwrap on PATH, recent enough, and
 * a trial sandbox with every namespace succeeds. Cached per process and PATH
 * (two short spawns the first time).
 */
export function sandboxStatus(options: SandboxStatusOptions = {}): SandboxStatus {
  const env = options.env ?? process.env;
  const trusted = options.trustedDirs ?? SYSTEM_DIRS;
  const key = `${env['PATH'] ?? ''}\u0000${trusted.join(':')}`;
  const cached = statusCache.get(key);
  if (cached !== undefined && options.spawnSync === undefined) return cached;
  const status = probe(env, options.spawnSync ?? ((command, args, spawnOptions) => spawnSync(command, args, spawnOptions)), trusted);
  if (options.spawnSync === undefined) statusCache.set(key, status);
  return status;
}

/** What `daemon status` and `doctor` say of confined runs (R-SH-14): on, with the sandbox and the agents that can run them; or off, and why. */
export type ConfinementStatus =
  | { available: true; bwrap: string; version: string; agents: readonly AgentName[] }
  | { available: false; reason: string; effect: string };

export function confinementStatus(status: SandboxStatus): ConfinementStatus {
  if (status.available) return { available: true, bwrap: status.bwrap, version: status.version, agents: REWRITING_AGENTS };
  return { available: false, reason: status.reason, effect: 'commands of policy.commands.confine ask a person instead of running confined' };
}

/**
 * The guardian: bash in a session of its own between the runner and bwrap. It
 * outlives a runner killed with SIGKILL: fd 3 is the runner's lifeline, and
 * when it closes the guardian kills bwrap (and with it the sandbox's PID
 * namespace). fd 4 is its line to the runner: once the sandbox has ended it
 * says `done CODE`, the runner removes the placeholders bwrap created in the
 * person's repository and answers `ok`; with no answer (the runner is gone)
 * the guardian removes them itself. It also closes every descriptor the runner
 * inherited beyond these, opens the empty inputs of --ro-bind-data, and undoes
 * the SIGINT/SIGQUIT ignoring bash gives background jobs. (The closing loop
 * has no redirection of its own: bash would keep the saved stderr on a
 * descriptor above 9, and the loop would close it.)
 *
 * Arguments: N, N placeholders, the first data fd, the data fd count, then bwrap's argv.
 */
const GUARDIAN = `
n=$1; shift; placeholders=("\${@:1:n}"); shift "$n"
base=$1; count=$2; shift 2
for f in /proc/self/fd/*; do fd=\${f##*/}; if [[ $fd =~ ^[0-9]+$ ]] && (( fd > 4 )); then eval "exec $fd<&-"; fi; done
exec 5<&0
(
  trap - INT QUIT
  for ((i = base; i < base + count; i++)); do eval "exec $i</dev/null"; done
  exec "$@" <&5 3<&- 4<&- 5<&-
) &
child=$!
exec 5<&-
( read -r -u 3 _; kill -KILL "$child" ) 4<&- 2>/dev/null &
watcher=$!
disown "$watcher"
exec 3<&-
wait "$child"; code=$?
kill -KILL "$watcher" 2>/dev/null
trap '' PIPE
if printf 'done %s\n' "$code" >&4 2>/dev/null && read -r -u 4 reply && [[ $reply == ok ]]; then exit "$code"; fi
files=(); dirs=()
for p in "\${placeholders[@]}"; do
  if [[ -L $p ]]; then :; elif [[ -d $p ]]; then dirs+=("$p"); elif [[ -f $p && ! -s $p ]]; then files+=("$p"); fi
done
(( \${#files[@]} )) && rm -f -- "\${files[@]}"
(( \${#dirs[@]} )) && rmdir -- "\${dirs[@]}" 2>/dev/null
exit "$code"
`;

/** What bwrap created as mount points: an empty directory or an empty file, never anything the person put there meanwhile. */
function removePlaceholders(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      const stats = lstatSync(path, { throwIfNoEntry: false });
      if (stats === undefined || stats.isSymbolicLink()) continue;
      if (stats.isDirectory()) rmdirSync(path);
      else if (stats.isFile() && stats.size === 0) unlinkSync(path);
    } catch {
      // Not empty (the person wrote there meanwhile), or gone: it stays as it is.
    }
  }
}

export type ConfinedStdio = readonly ['inherit' | 'ignore' | number | Stream, 'inherit' | 'ignore' | number | Stream, 'inherit' | 'ignore' | number | Stream];

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs `bash -c commandText` inside the profile's sandbox, the caller's stdio
 * passed through, and resolves to its exit code (a signal n → 128 + n). A
 * SIGINT, SIGTERM or SIGHUP of the runner ends the sandbox, and the runner's
 * code is then 128 + that signal. Throws `unavailable` when bwrap is not
 * there. `status` may be {@link locateSandbox}'s, which proves nothing: a
 * bwrap that cannot build the sandbox (too old for `--disable-userns`, user
 * namespaces refused) exits non-zero before the command starts, and the
 * caller asks {@link sandboxStatus} why.
 */
export function runConfined(
  profile: SandboxProfile,
  commandText: string,
  stdio: ConfinedStdio = ['inherit', 'inherit', 'inherit'],
  status: LocatedSandbox = sandboxStatus(),
): Promise<number> {
  if (!status.available) return Promise.reject(new AssentError('unavailable', `the sandbox is not available: ${status.reason}`));
  const argv = [
    '-c', GUARDIAN, 'assent-confine',
    String(profile.placeholders.length), ...profile.placeholders,
    String(DATA_FD_BASE), String(profile.dataFds),
    status.bwrap, ...profile.args, '--', 'bash', '-c', commandText,
  ];
  return new Promise<number>((resolve, reject) => {
    const child = spawn(status.bash, argv, { env: { ...profile.env }, stdio: [stdio[0], stdio[1], stdio[2], 'pipe', 'pipe'], detached: true });
    const lifeline = child.stdio[3];
    // Both extra descriptors are sockets: the control line is read and written.
    const control = child.stdio[4] as Duplex | null;
    lifeline?.on('error', () => undefined);
    control?.on('error', () => undefined);
    let heard = '';
    control?.setEncoding('utf8').on('data', (text: string) => {
      heard += text;
      if (!heard.includes('\n')) return;
      removePlaceholders(profile.placeholders);
      control.write('ok\n');
    });
    let stoppedBy: NodeJS.Signals | undefined;
    const endSandbox = (signal: NodeJS.Signals): void => {
      stoppedBy ??= signal;
      lifeline?.destroy();
    };
    for (const signal of FORWARDED_SIGNALS) process.on(signal, endSandbox);
    const settle = (): void => {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, endSandbox);
      lifeline?.destroy();
      control?.destroy();
    };
    child.once('error', (error) => {
      settle();
      reject(new AssentError('unavailable', `the sandbox could not start (${status.bash}: ${error.message})`, { cause: error }));
    });
    child.once('exit', (code, signal) => {
      settle();
      const ended = stoppedBy ?? (code === null ? signal : null);
      resolve(ended === null ? (code ?? 1) : 128 + osConstants.signals[ended]);
    });
  });
}
