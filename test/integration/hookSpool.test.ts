// R-AUD-1 with no daemon: a hook call that no daemon decided is refused, and
// still gets its audit line. The built hook entry, with no daemon and
// auto-spawn off, denies the call and spools its record (a new 0600 file under
// <ASSENT_HOME>/spool); the next daemon reads it into the chain at start with the
// time it was refused, naming the agent, and removes the file. A spool folder
// open to others is not written to, and the hook says so.
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/base/canonical.js';
import { auditLines, makeTempHome, type TempHome } from '../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';

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

describe('R-AUD-1 a hook call refused with no daemon is audited by the next one', () => {
  it('is denied, spooled 0600 with the time it was refused, then read into the chain at the next start, naming the agent; the file is removed', async () => {
    const home = freshHome();
    const marker = join(home.home, '..', 'marker');
    const command = `touch ${marker}`;
    const before = Date.now();
    const refused = await runHook(['claude-code'], shellEvent('claude-code', command), { ...home.env, ASSENT_NO_AUTOSPAWN: '1' });
    const after = Date.now();
    expect(refused.code).toBe(2);
    expect(answerOf(refused.stdout)).toMatchObject({ decision: 'deny', reason: expect.stringContaining('unavailable') });
    expect(refused.stderr).not.toContain('could not be spooled');
    expect(existsSync(marker)).toBe(false);

    const spool = join(home.home, 'spool');
    const files = readdirSync(spool).filter((name) => name.endsWith('.jsonl'));
    expect(files).toEqual([expect.stringMatching(/^hook-\d+-[0-9a-f]{16}\.jsonl$/)]);
    expect(statSync(join(spool, files[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(spool).mode & 0o777).toBe(0o700);

    await home.startDaemon();
    const refusals = (): Record<string, unknown>[] => auditLines(home).filter((line) => line['deniedReason'] === 'unavailable');
    await expect.poll(() => refusals().length, { timeout: 10_000 }).toBe(1);
    const lines = refusals();
    expect(lines[0]).toMatchObject({
      agent: 'claude-code',
      server: 'claude',
      tool: 'Bash',
      outcome: 'denied',
      argsSha256: digestOf({ command, description: 'run it' }),
      risk: 'elevated',
    });
    const ts = Date.parse(String(lines[0]!['ts']));
    expect(ts).toBeGreaterThanOrEqual(before - 5);
    expect(ts).toBeLessThanOrEqual(after + 5);
    expect(readdirSync(spool).filter((name) => name.startsWith('hook-'))).toEqual([]);
    const verify = await home.runCli(['audit', 'verify']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('a spool folder open to others is not written to: the call is still denied, and the hook says the refusal was not spooled', async () => {
    const home = freshHome();
    const spool = join(home.home, 'spool');
    mkdirSync(spool, { mode: 0o700 });
    chmodSync(spool, 0o777);
    const refused = await runHook(['claude-code'], shellEvent('claude-code', 'true'), { ...home.env, ASSENT_NO_AUTOSPAWN: '1' });
    expect(refused.code).toBe(2);
    expect(answerOf(refused.stdout).decision).toBe('deny');
    expect(refused.stderr).toContain(`this refusal could not be spooled for the audit (the spool folder ${spool} is not a directory private to this user)`);
    expect(readdirSync(spool)).toEqual([]);
  });
});
