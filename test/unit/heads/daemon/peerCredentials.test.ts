// The peer lookup behind a decision's `peer` record (hardening 1): `ss` output is
// only a hint (a peer controls its socket's bound name and its process name, both
// printed raw), so the peer inode is read from the daemon's own line alone and
// every pid is confirmed against /proc before it is recorded.
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { candidatePids, createPeerLookup, peerInodeFromSs } from '../../../../src/heads/daemon/peerCredentials.js';

const DAEMON_PID = 4000;
const DAEMON_FD = 20;
const OUR_INODE = '31876';
const PEER_INODE = '30666';

/** What `ss -x -p -n -H` prints for one accepted connection and its peer (iproute2 6.1). */
const GENUINE = [
  `u_str ESTAB 0      0                /home/me/.assent/daemon.sock ${OUR_INODE} * ${PEER_INODE} users:(("node",pid=${DAEMON_PID},fd=${DAEMON_FD}))        `,
  `u_str ESTAB 0      0                                           * ${PEER_INODE} * ${OUR_INODE} users:(("python3",pid=5000,fd=3))`,
  'u_str ESTAB 0      0                                           * 11111 * 22222 users:(("systemd",pid=1,fd=9))',
].join('\n');

const fakeSocket = (fd: number): Socket => ({ _handle: { fd } }) as unknown as Socket;

/** A /proc with a few processes, each a map of fd → link target, and a uid. */
function fakeProc(processes: Record<number, { fds: Record<string, string>; uid: number }>) {
  return {
    readDir: (path: string): string[] => {
      const pid = Number(/^\/proc\/(\d+)\/fd$/.exec(path)?.[1]);
      const entry = processes[pid];
      if (entry === undefined) throw new Error('ENOENT');
      return Object.keys(entry.fds);
    },
    readLink: (path: string): string => {
      if (path === `/proc/self/fd/${DAEMON_FD}`) return `socket:[${OUR_INODE}]`;
      const match = /^\/proc\/(\d+)\/fd\/(\d+)$/.exec(path);
      const target = match === null ? undefined : processes[Number(match[1])]?.fds[match[2] as string];
      if (target === undefined) throw new Error('ENOENT');
      return target;
    },
    readText: (path: string): string => {
      const pid = Number(/^\/proc\/(\d+)\/status$/.exec(path)?.[1]);
      const entry = processes[pid];
      if (entry === undefined) throw new Error('ENOENT');
      return `Name:\tx\nUid:\t${entry.uid}\t${entry.uid}\t${entry.uid}\t${entry.uid}\n`;
    },
  };
}

describe('peer inode from ss (hardening 1)', () => {
  it('R-D-4b reads the peer inode from the daemon\'s own line: our inode, our pid and fd', () => {
    expect(peerInodeFromSs(GENUINE, { inode: OUR_INODE, pid: DAEMON_PID, fd: DAEMON_FD })).toEqual({ inode: PEER_INODE });
  });

  it('R-D-4b a socket path with spaces and digits still gives the right peer inode', () => {
    const line = `u_str ESTAB 0 0 /tmp/my 123 home/daemon.sock ${OUR_INODE} * ${PEER_INODE} users:(("node",pid=${DAEMON_PID},fd=${DAEMON_FD}))`;
    expect(peerInodeFromSs(line, { inode: OUR_INODE, pid: DAEMON_PID, fd: DAEMON_FD })).toEqual({ inode: PEER_INODE });
  });

  it('R-D-4b a peer that forges our line inside its own bound socket name makes the answer ambiguous, never wrong', () => {
    // ss prints bound names raw: a newline in a name starts what looks like a line of its own.
    const forged = `u_str ESTAB 0 0 /tmp/x\nu_str ESTAB 0 0 /home/me/.assent/daemon.sock ${OUR_INODE} * 11111 users:(("node",pid=${DAEMON_PID},fd=${DAEMON_FD}))\n 777 * 888 users:(("evil",pid=6000,fd=4))`;
    expect(peerInodeFromSs(`${GENUINE}\n${forged}`, { inode: OUR_INODE, pid: DAEMON_PID, fd: DAEMON_FD })).toEqual({
      reason: expect.stringContaining('ambiguous') as string,
    });
  });

  it('R-D-4b no line of ours: a reason, no inode', () => {
    expect(peerInodeFromSs(GENUINE, { inode: '99999', pid: DAEMON_PID, fd: DAEMON_FD })).toEqual({ reason: 'ss does not list this connection' });
  });

  it('candidate pids are every pid on lines naming the inode, forged ones included (they are checked later)', () => {
    const injected = `${GENUINE}\nu_str ESTAB 0 0 * 1234 * ${PEER_INODE} users:(("",pid=1,fd=9),(",pid=6000,fd=3))`;
    expect(candidatePids(injected, PEER_INODE).sort()).toEqual([1, 4000, 5000, 6000].sort());
  });
});

describe('createPeerLookup (hardening 1)', () => {
  it('R-D-4b records the pid and effective uid of the one process that holds the peer socket', async () => {
    const proc = fakeProc({ 5000: { fds: { '3': `socket:[${PEER_INODE}]`, '4': 'pipe:[1]' }, uid: 1000 }, [DAEMON_PID]: { fds: { '20': `socket:[${OUR_INODE}]` }, uid: 1000 } });
    const lookup = createPeerLookup({ platform: 'linux', pid: DAEMON_PID, runSs: async () => GENUINE, ...proc });
    expect(await lookup(fakeSocket(DAEMON_FD))).toEqual({ source: 'ss+proc', pid: 5000, uid: 1000 });
  });

  it('R-D-4b a pid injected through a process name is dropped: only processes whose own fds hold the peer socket count', async () => {
    // A comm of `",pid=1,fd=9),(` makes ss print a pid that is not the holder.
    const output = GENUINE.replace('users:(("python3",pid=5000,fd=3))', 'users:(("",pid=1,fd=9),(",pid=5000,fd=3))');
    const proc = fakeProc({ 1: { fds: { '9': 'socket:[11111]' }, uid: 0 }, 5000: { fds: { '3': `socket:[${PEER_INODE}]` }, uid: 1000 } });
    const lookup = createPeerLookup({ platform: 'linux', pid: DAEMON_PID, runSs: async () => output, ...proc });
    expect(await lookup(fakeSocket(DAEMON_FD))).toEqual({ source: 'ss+proc', pid: 5000, uid: 1000 });
  });

  it('R-D-4b a socket shared by several processes (inherited or passed) records all of them', async () => {
    const output = GENUINE.replace('users:(("python3",pid=5000,fd=3))', 'users:(("bash",pid=5001,fd=5),("python3",pid=5000,fd=3))');
    const proc = fakeProc({ 5000: { fds: { '3': `socket:[${PEER_INODE}]` }, uid: 1000 }, 5001: { fds: { '5': `socket:[${PEER_INODE}]` }, uid: 1000 } });
    const lookup = createPeerLookup({ platform: 'linux', pid: DAEMON_PID, runSs: async () => output, ...proc });
    expect(await lookup(fakeSocket(DAEMON_FD))).toEqual({ source: 'ss+proc', pids: [5000, 5001], uid: 1000 });
  });

  it('R-D-4b a holder the daemon cannot see (root or another user) is unavailable, with the reason', async () => {
    const output = GENUINE.replace('users:(("python3",pid=5000,fd=3))', '');
    const lookup = createPeerLookup({ platform: 'linux', pid: DAEMON_PID, runSs: async () => output, ...fakeProc({}) });
    expect(await lookup(fakeSocket(DAEMON_FD))).toMatchObject({ source: 'unavailable', reason: expect.stringContaining('no process visible') as string });
  });

  it('R-D-4b without ss, or off Linux, the peer is unavailable and says why; it never throws', async () => {
    const proc = fakeProc({});
    const noSs = createPeerLookup({ platform: 'linux', pid: DAEMON_PID, runSs: () => Promise.reject(new Error('ss (iproute2) is not installed')), ...proc });
    expect(await noSs(fakeSocket(DAEMON_FD))).toEqual({ source: 'unavailable', reason: 'ss failed: ss (iproute2) is not installed' });
    const mac = createPeerLookup({ platform: 'darwin', runSs: async () => GENUINE, ...proc });
    expect(await mac(fakeSocket(DAEMON_FD))).toMatchObject({ source: 'unavailable', reason: expect.stringContaining('SO_PEERCRED') as string });
    const noFd = createPeerLookup({ platform: 'linux', runSs: async () => GENUINE, ...proc });
    expect(await noFd({} as Socket)).toMatchObject({ source: 'unavailable' });
  });
});
