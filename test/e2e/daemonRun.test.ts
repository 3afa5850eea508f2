// R-D-1: `assent daemon run` in a real terminal serves the socket and shows the
// live queue inline; leaving the view stops the daemon gracefully.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome } from '../helpers/daemon.js';
import type { TempHome } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';

const homes: TempHome[] = [];
const sessions: PtySession[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) session.kill();
  await Promise.all(homes.splice(0).map((home) => home.cleanup()));
});

describe('assent daemon run in a terminal', () => {
  it('R-D-1 serves clients, shows the inline queue, and `q` stops it with exit 0 and no socket left', async () => {
    const t = makeTempHome();
    homes.push(t);
    const outFile = join(t.paths.home, '..', 'out.txt');
    const session = new PtySession(['daemon', 'run'], { outFile, env: { ASSENT_HOME: t.home } });
    sessions.push(session);
    await session.waitFor(/listening on .*daemon\.sock/);
    await session.waitFor(/Waiting for requests/);
    const status = await t.runCli(['daemon', 'status', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } });
    expect(status.code).toBe(0);
    // The inline queue is one of the daemon's own clients.
    expect((JSON.parse(status.stdout) as { data: { connections: number } }).data.connections).toBeGreaterThanOrEqual(2);
    session.type('q');
    const { exitCode } = await session.finish(outFile);
    expect(exitCode).toBe(0);
    expect(existsSync(t.paths.socket)).toBe(false);
    expect(existsSync(t.paths.pid)).toBe(false);
  });

  it('R-D-1 shows a new request inline with its escaped preview and takes the answer in the same terminal', async () => {
    const t = makeTempHome();
    homes.push(t);
    mkdirSync(t.home, { mode: 0o700 });
    writeFileSync(t.paths.config, JSON.stringify({ policy: { default: 'prompt', destructive: 'prompt' } }), { mode: 0o600 });
    const outFile = join(t.paths.home, '..', 'out.txt');
    const session = new PtySession(['daemon', 'run'], { outFile, env: { ASSENT_HOME: t.home } });
    sessions.push(session);
    await session.waitFor(/Waiting for requests/);
    const client = await DaemonClient.connect({ socketPath: t.paths.socket });
    try {
      const call = client.call<{ decision: string; consent?: { channel: string } }>('calls.authorize', {
        sessionId: 's1',
        server: 'fs',
        tool: 'write_file',
        args: { path: '/srv/data/x', note: '\u001b[2Jcaf\u00e9' },
      });
      const [, code] = await session.waitFor(/type ([a-z]{4}) \+ Enter/);
      expect(session.screen).toContain('fs/write_file');
      expect(session.screen).toContain('\\u001b[2J');
      session.type(`${code}\r`);
      const result = await call;
      // The inline queue decides over the socket: stamped `cli`, its `watch` kept only as claimedChannel (hardening 1).
      expect(result).toMatchObject({ decision: 'allow', consent: { channel: 'cli' } });
    } finally {
      client.close();
    }
    session.type('q');
    expect((await session.finish(outFile)).exitCode).toBe(0);
  });
});
