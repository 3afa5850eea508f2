// Issue 20 item 4 in team mode: the terminal views on one host show a shell
// approval another host filed with its risk level and reasons and the name of
// the host that filed it, as the page does — `assent pending` and `assent watch`
// on host B (watch in a real PTY) for a call waiting on host A.
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Cleanups } from '../helpers/fsStack.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { PtySession } from '../helpers/pty.js';
import { pendingOn, startTeam, teamServer } from '../helpers/team.js';

const fileCleanups: Cleanups = [];
const cleanups: Cleanups = [];
let server: PostgresServer;

beforeAll(async () => {
  server = await teamServer(fileCleanups);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

describe('issue 20: risk and host in the terminal views, team mode', () => {
  it('`assent pending` and `assent watch` on host B show host A\'s shell approval with its risk level, reasons and host name', async () => {
    const { hosts } = await startTeam(cleanups, server, ['laptop-a', 'laptop-b'], { policy: { commands: { default: 'prompt', rules: [] } } });
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const watch = new PtySession(['watch'], { outFile: join(b.home.home, 'watch.out'), env: { ASSENT_HOME: b.home.home } });
    cleanups.push(() => watch.kill());
    await watch.waitFor(/Waiting for requests/);
    const waiting = runHook(['claude-code'], shellEvent('claude-code', 'make deploy', { cwd: a.home.home }), a.home.env);
    const [filed] = await pendingOn(b);
    const listed = await b.home.runCli(['pending']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/ {2}risk {6}elevated: runs project code/);
    expect(listed.stdout).toContain('  host      laptop-a\n');
    expect(listed.stdout.indexOf('  risk')).toBeLessThan(listed.stdout.indexOf('  command'));
    await watch.waitFor(/host {6}laptop-a/, 15_000);
    expect(watch.screen).toMatch(/risk {6}elevated: runs project code/);
    expect((await b.home.runCli(['deny', filed?.id ?? ''])).code).toBe(0);
    expect(answerOf((await waiting).stdout).decision).toBe('deny');
  }, 60_000);

  it('during a team-database outage an agent\'s call is refused naming the team database, not the daemon', async () => {
    const { hosts } = await startTeam(cleanups, server, ['laptop-a'], { policy: { commands: { default: 'prompt', rules: [] } } });
    const [a] = hosts as [(typeof hosts)[0]];
    await server.stop();
    try {
      const refused = answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'make deploy'), a.home.env)).stdout);
      expect(refused.decision).toBe('deny');
      expect(refused.reason).toContain('unavailable');
      expect(refused.reason).toContain('The team database that holds assent\'s approvals cannot be reached');
      expect(refused.reason).not.toContain('The assent daemon could not decide');
    } finally {
      await server.start();
    }
  }, 60_000);
});
