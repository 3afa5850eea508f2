// Issue 37 item 6: every message the daemon prints when it cannot start gives
// the cause once and the fix once, in one line, with no doubled full stop. The
// built `assent daemon run` is started into each fault a new user meets: another
// daemon already serving the socket, a state directory open to others, a socket
// path too long for a Unix socket, and a config.json that does not validate
// with no confirmed configuration to fall back on. (The web listener's taken
// port is test/unit/heads/cli/webNotServed.test.ts and test/e2e/webListener.test.ts.)
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';

const homes: TempHome[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await home.cleanup();
});

function freshHome(): TempHome {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  return home;
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

/** The one line the daemon printed, checked for the shape every start-up error has. */
function startError(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines, stderr).toHaveLength(1);
  const line = lines[0]!;
  expect(line.startsWith('assent: '), line).toBe(true);
  expect(line, 'a doubled full stop').not.toMatch(/\.\.(?!\.)/);
  return line;
}

describe('the daemon cannot start: the cause once and the fix once (issue 37 item 6)', () => {
  it('another daemon already serves the socket: exit 65, names its pid and socket once, says to use it or stop it once', async () => {
    const home = freshHome();
    await home.startDaemon();
    const pid = (await home.runCli(['daemon', 'status', '--json'])).stdout;
    const second = await home.runCli(['daemon', 'run']);
    expect(second.code).toBe(65);
    const line = startError(second.stderr);
    expect(occurrences(line, home.paths.socket)).toBe(1);
    expect(occurrences(line, String((JSON.parse(pid) as { data: { pid: number } }).data.pid))).toBe(1);
    expect(occurrences(line, '`assent daemon stop`')).toBe(1);
  });

  it('a state directory open to others: exit 65, names the directory and its mode once, says where to keep state instead once', async () => {
    const home = freshHome();
    chmodSync(home.home, 0o777);
    const run = await home.runCli(['daemon', 'run']);
    chmodSync(home.home, 0o700);
    expect(run.code).toBe(65);
    const line = startError(run.stderr);
    expect(occurrences(line, `state directory ${home.home} `)).toBe(1);
    expect(occurrences(line, 'mode 777')).toBe(1);
    expect(occurrences(line, 'set ASSENT_HOME to a private directory')).toBe(1);
  });

  it('a socket path too long for a Unix socket: non-zero, names its length and the limit once, says how to shorten it once', async () => {
    const home = freshHome();
    const socket = `/tmp/${'x'.repeat(120)}/s.sock`;
    const run = await home.runCli(['daemon', 'run'], { env: { ...home.env, ASSENT_SOCKET: socket } });
    expect(run.code).not.toBe(0);
    const line = startError(run.stderr);
    expect(occurrences(line, socket)).toBe(1);
    expect(occurrences(line, 'byte limit')).toBe(1);
    expect(occurrences(line, 'set ASSENT_SOCKET to a shorter path')).toBe(1);
  });

  it('a config.json that does not validate, with no confirmed configuration: non-zero, names the file and the first error once, says how to see them all once', async () => {
    const home = freshHome();
    writeFileSync(home.paths.config, JSON.stringify({ policy: { default: 'maybe' } }), { mode: 0o600 });
    const run = await home.runCli(['daemon', 'run']);
    expect(run.code).not.toBe(0);
    const line = startError(run.stderr);
    expect(occurrences(line, home.paths.config)).toBe(2); // the file, and the command that checks it
    expect(occurrences(line, 'policy.default')).toBe(1);
    expect(occurrences(line, '`assent config check --file')).toBe(1);
  });
});
