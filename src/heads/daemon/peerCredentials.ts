// Who is at the other end of a daemon socket connection, as the kernel knows it.
// Node has no SO_PEERCRED API, so on Linux the peer is found in two steps that
// need no native addon: `ss` (iproute2, via the kernel's sock_diag interface)
// names the peer socket's inode, and /proc confirms which processes hold it.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { DecisionPeer } from '../../service/approvalService.js';

/** Where `ss` is looked for; never PATH, so the daemon's environment cannot choose the binary. */
export const SS_PATHS: readonly string[] = ['/usr/bin/ss', '/bin/ss', '/usr/sbin/ss', '/sbin/ss'];
/** Longest time one `ss` run may take before the peer counts as unavailable. */
export const PEER_LOOKUP_TIMEOUT_MS = 2000;
/** Most pids read from `ss` output and checked in /proc for one lookup. */
const MAX_CANDIDATES = 64;

/** Looks up the peer of one accepted connection. Never rejects: a failure is `{source: 'unavailable', reason}`. */
export type PeerLookup = (socket: Socket) => Promise<DecisionPeer>;

export interface LinuxPeerLookupOptions {
  platform?: NodeJS.Platform;
  /** Runs `ss -x -p -n -H` and returns its stdout. */
  runSs?: () => Promise<string>;
  /** The target of a /proc symlink, e.g. `socket:[1234]` for `/proc/self/fd/7`. */
  readLink?: (path: string) => string;
  readDir?: (path: string) => string[];
  readText?: (path: string) => string;
  /** This process's pid, as it appears in `ss` output. */
  pid?: number;
}

function unavailable(reason: string): DecisionPeer {
  return { source: 'unavailable', reason };
}

function defaultRunSs(): Promise<string> {
  const binary = SS_PATHS.find((path) => existsSync(path));
  if (binary === undefined) return Promise.reject(new Error('ss (iproute2) is not installed'));
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      ['-x', '-p', '-n', '-H'],
      { timeout: PEER_LOOKUP_TIMEOUT_MS, maxBuffer: 32 * 1024 * 1024, env: { LC_ALL: 'C' }, encoding: 'utf8' },
      (error, stdout) => (error === null ? resolve(stdout) : reject(error)),
    );
  });
}

/** The fd of an accepted socket: not a documented Node API, but present on Unix handles for years. */
function fdOf(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && Number.isInteger(fd) && fd >= 0 ? fd : undefined;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The peer inode from `ss` output, read only from this daemon's own line: the
 * line whose local port is our inode and whose process column is exactly our pid
 * and fd. A peer can put newlines and forged text in its own socket's bound name,
 * so a second line that looks like ours makes the answer ambiguous, never wrong.
 */
export function peerInodeFromSs(output: string, own: { inode: string; pid: number; fd: number }): { inode: string } | { reason: string } {
  const ours = new RegExp(
    `^u_str\\s.*\\s${escapeRegExp(own.inode)}\\s+(?:.*\\s)?(\\d+)\\s+users:\\(\\("[^"\\n]*",pid=${own.pid},fd=${own.fd}\\)\\)\\s*$`,
  );
  const found: string[] = [];
  for (const line of output.split('\n')) {
    const match = ours.exec(line);
    if (match !== null) found.push(match[1] as string);
  }
  if (found.length === 0) return { reason: 'ss does not list this connection' };
  if (found.length > 1) return { reason: 'ss output is ambiguous for this connection (a socket name imitates it)' };
  return { inode: found[0] as string };
}

/** Pids that `ss` names on lines mentioning the inode: hints only, each is checked in /proc. */
export function candidatePids(output: string, inode: string): number[] {
  const token = new RegExp(`(^|\\s)${escapeRegExp(inode)}(\\s|$)`);
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!token.test(line)) continue;
    for (const match of line.matchAll(/pid=(\d+)/g)) {
      pids.add(Number(match[1]));
      if (pids.size >= MAX_CANDIDATES) return [...pids];
    }
  }
  return [...pids];
}

/**
 * The Linux lookup: our socket's inode from /proc/self/fd, the peer inode from
 * `ss`, then every candidate pid is kept only if one of its own fds in
 * /proc/<pid>/fd is that peer socket (kernel truth, not ss's text), and its
 * effective uid is read from /proc/<pid>/status. Elsewhere: unavailable.
 */
export function createPeerLookup(options: LinuxPeerLookupOptions = {}): PeerLookup {
  const platform = options.platform ?? process.platform;
  const runSs = options.runSs ?? defaultRunSs;
  const readLink = options.readLink ?? ((path: string) => readlinkSync(path));
  const readDir = options.readDir ?? ((path: string) => readdirSync(path));
  const readText = options.readText ?? ((path: string) => readFileSync(path, 'utf8'));
  const ownPid = options.pid ?? process.pid;

  const holds = (pid: number, target: string): boolean => {
    let fds: string[];
    try {
      fds = readDir(`/proc/${pid}/fd`);
    } catch {
      return false;
    }
    for (const fd of fds) {
      try {
        if (readLink(`/proc/${pid}/fd/${fd}`) === target) return true;
      } catch {
        // Closed meanwhile.
      }
    }
    return false;
  };

  const effectiveUid = (pid: number): number | undefined => {
    try {
      const line = readText(`/proc/${pid}/status`)
        .split('\n')
        .find((l) => l.startsWith('Uid:'));
      const euid = line?.split(/\s+/)[2];
      return euid === undefined || !/^\d+$/.test(euid) ? undefined : Number(euid);
    } catch {
      return undefined;
    }
  };

  return async (socket) => {
    if (platform !== 'linux') return unavailable(`no peer lookup on ${platform}: Node has no SO_PEERCRED and assent uses no native addon`);
    const fd = fdOf(socket);
    if (fd === undefined) return unavailable('the connection has no file descriptor to look up');
    let inode: string;
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readLink(`/proc/self/fd/${fd}`));
      if (match === null) return unavailable('the connection is not a socket in /proc/self/fd');
      inode = match[1] as string;
    } catch (error) {
      return unavailable(`cannot read /proc/self/fd: ${(error as Error).message}`);
    }
    let output: string;
    try {
      output = await runSs();
    } catch (error) {
      return unavailable(`ss failed: ${(error as Error).message.split('\n')[0] ?? 'unknown error'}`);
    }
    const peer = peerInodeFromSs(output, { inode, pid: ownPid, fd });
    if ('reason' in peer) return unavailable(peer.reason);
    const target = `socket:[${peer.inode}]`;
    const pids = candidatePids(output, peer.inode)
      .filter((pid) => holds(pid, target))
      .sort((a, b) => a - b);
    if (pids.length === 0) return unavailable('no process visible to the daemon holds the peer socket (another user or root, or it exited)');
    const uids = new Set(pids.map(effectiveUid));
    const result: DecisionPeer = { source: 'ss+proc' };
    if (pids.length === 1) result.pid = pids[0] as number;
    else result.pids = pids;
    const [uid] = [...uids];
    if (uids.size === 1 && uid !== undefined) result.uid = uid;
    return result;
  };
}
