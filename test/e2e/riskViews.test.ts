// R-POL-10 (issue 20 item 4): the terminal views show an agent action's risk
// level and its reasons first — `assent watch` and the foreground daemon's own
// view (`assent daemon run` in a terminal), in a real PTY, with the level again
// on the line where the code is typed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import { PtySession } from '../helpers/pty.js';

const homes: TempHome[] = [];
const sessions: PtySession[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) session.kill();
  await Promise.all(homes.splice(0).map((home) => home.cleanup()));
});

function tempHome(): TempHome {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false }), { mode: 0o600 });
  return home;
}

/** Files `sudo rm -rf /var/lib/x` from a hook, waits for the view to show it level first, and denies it there. */
async function expectRiskShownAndDeny(home: TempHome, session: PtySession): Promise<void> {
  const waiting = runHook(['claude-code'], shellEvent('claude-code', 'sudo rm -rf /var/lib/x', { session_id: 'risk-view', cwd: '/work/project' }), home.env);
  await session.waitFor(/risk {6}high: privilege escalation \(sudo\), recursive delete outside cwd \(rm -r\), destructive \(rm\), shell/, 15_000);
  await session.waitFor(/risk high — \[[a-z]{5}\] type [a-z]{4} \+ Enter/);
  // The risk line comes before the command it is about.
  expect(session.screen.indexOf('risk      high')).toBeLessThan(session.screen.indexOf('command   sudo rm -rf /var/lib/x'));
  session.type('n');
  expect(answerOf((await waiting).stdout).decision).toBe('deny');
}

describe('R-POL-10 the risk level in the terminal views', () => {
  it('R-POL-10 `assent watch` shows a filed shell approval with its risk level and reasons first', async () => {
    const home = tempHome();
    await home.startDaemon();
    const session = new PtySession(['watch'], { outFile: join(home.home, 'watch.out'), env: { ASSENT_HOME: home.home } });
    sessions.push(session);
    await session.waitFor(/Waiting for requests/);
    await expectRiskShownAndDeny(home, session);
  });

  it('R-POL-10 the foreground daemon (`assent daemon run` in a terminal) shows the same risk line', async () => {
    const home = tempHome();
    const outFile = join(home.paths.home, '..', 'daemon.out');
    const session = new PtySession(['daemon', 'run'], { outFile, env: { ASSENT_HOME: home.home } });
    sessions.push(session);
    await session.waitFor(/Waiting for requests/);
    await expectRiskShownAndDeny(home, session);
    session.type('q');
    expect((await session.finish(outFile)).exitCode).toBe(0);
  });
});
