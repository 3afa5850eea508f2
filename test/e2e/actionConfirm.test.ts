// `assent action confirm` in a real pseudo-terminal (R-TTY-1..10), against the
// built binary. stdin and stderr are the PTY; stdout goes to a file.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, PtySession } from '../helpers/pty.js';
import type { PtyRunOptions } from '../helpers/pty.js';
import {
  EXECUTION_KEYS,
  makeActionDir,
  onlyReport,
  REPORT_KEYS,
  runPiped,
  sentinelAction,
  writePolicy,
  writeRequest,
} from './actionFixtures.js';
import type { ActionDir } from './actionFixtures.js';
import { existsSync } from 'node:fs';

const sessions: PtySession[] = [];
const dirs: ActionDir[] = [];

function setup(decision: 'ask' | 'deny' | 'allow' = 'ask', extraArgs: string[] = []): ActionDir {
  const d = makeActionDir();
  dirs.push(d);
  const action = sentinelAction(d, extraArgs);
  writeRequest(d, action);
  if (decision === 'deny') writePolicy(d, 'ask', [{ action, decision: 'deny' }]);
  else if (decision === 'allow') writePolicy(d, 'deny', [{ action, decision: 'allow' }]);
  else writePolicy(d, 'deny', [{ action, decision: 'ask' }]);
  return d;
}

function confirm(d: ActionDir, options: Partial<PtyRunOptions> = {}, alias = false): PtySession {
  const args = alias ? ['--action-exec-confirm', d.policy, d.request] : ['action', 'confirm', d.policy, d.request];
  const session = new PtySession(args, { outFile: d.out, ...options });
  sessions.push(session);
  return session;
}

beforeAll(() => {
  if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` before the e2e tests');
});

afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
  for (const d of dirs.splice(0)) d.cleanup();
});

describe('R-TTY-5/R-TTY-10 the affirmative answer', () => {
  it('R-TTY-10 typing RUN <challenge> runs the child exactly once and reports operator-confirmed', async () => {
    const d = setup('ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    s.type(`RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    const report = onlyReport(stdout);
    expect(report).toMatchObject({
      schemaVersion: 1,
      mode: 'action-exec',
      decision: 'allow',
      authorization: 'operator-confirmed',
      policyDecision: 'ask',
      reason: 'child-exited',
      execution: { state: 'exited', exitCode: 0, termination: 'not-requested', outputComplete: true },
      control: 'direct-child-only',
      descendantControl: 'unsupported',
    });
    expect(Object.keys(report).sort()).toEqual([...REPORT_KEYS, 'authorization', 'policyDecision'].sort());
    expect(Object.keys(report.execution).sort()).toEqual(EXECUTION_KEYS);
    expect(exitCode).toBe(0);
    expect(d.sentinelLines()).toBe(1);
  });

  it('R-TTY-10 an allow decision still asks in confirm mode and reports policyDecision allow (alias spelling)', async () => {
    const d = setup('allow');
    const s = confirm(d, {}, true);
    const challenge = await s.challenge();
    s.type(`RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'allow', authorization: 'operator-confirmed', policyDecision: 'allow' });
    expect(exitCode).toBe(0);
    expect(d.sentinelLines()).toBe(1);
  });

  it('R-TTY-5 the prompt shows the shipped 60 s deadline', async () => {
    const d = setup('ask');
    const s = confirm(d);
    await s.challenge();
    expect(s.screen).toContain('within 60 s');
    s.type('\x03');
    await s.finish(d.out);
  });
});

describe('R-TTY-5 every other answer refuses with exit 2 and no child', () => {
  const cases: Array<{ name: string; input: (c: string) => string; reason: string }> = [
    { name: 'a wrong challenge', input: () => 'RUN 00000000\r', reason: 'confirmation-denied' },
    { name: 'the right line followed by an extra line', input: (c) => `RUN ${c}\rls\r`, reason: 'confirmation-denied' },
    { name: '129 bytes of input', input: () => 'a'.repeat(129), reason: 'confirmation-denied' },
    { name: 'Ctrl+C before answering', input: () => '\x03', reason: 'action-cancelled' },
    { name: 'EOF (Ctrl+D)', input: () => '\x04', reason: 'confirmation-unavailable' },
    { name: 'ESC', input: (c) => `RUN ${c}\x1b\r`, reason: 'confirmation-denied' },
  ];
  for (const { name, input, reason } of cases) {
    it(`R-TTY-5 refuses ${name}`, async () => {
      const d = setup('ask');
      const s = confirm(d);
      const challenge = await s.challenge();
      s.type(input(challenge));
      const { exitCode, stdout } = await s.finish(d.out);
      expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason, execution: { state: 'not-started' } });
      expect(exitCode).toBe(2);
      expect(d.sentinelLines()).toBe(0);
    });
  }

  it('R-TTY-5 the right challenge after 129 bytes still refuses (the limit counts every byte)', async () => {
    const d = setup('ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    s.type(`${'x'.repeat(120)}RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout).reason).toBe('confirmation-denied');
    expect(exitCode).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-TTY-5 refuses when the (shortened) deadline passes', async () => {
    const d = setup('ask');
    const s = confirm(d, { env: { ASSENT_TEST_CONFIRM_DEADLINE_MS: '700' } });
    await s.challenge();
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason: 'confirmation-unavailable' });
    expect(exitCode).toBe(2);
    expect(s.screen).toContain('deadline passed');
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-TTY-9 SIGTERM before answering refuses and starts nothing', async () => {
    const d = setup('ask');
    const s = confirm(d);
    await s.challenge();
    process.kill(s.pid, 'SIGTERM');
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout).reason).toBe('action-cancelled');
    expect(exitCode).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });
});

describe('R-TTY-7 the files are re-read after the answer', () => {
  it('R-TTY-7 a request changed after the preview gives configuration-changed and no child', async () => {
    const d = setup('ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    writeFileSync(d.request, `${readFileSync(d.request, 'utf8')} `);
    s.type(`RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason: 'configuration-changed' });
    expect(exitCode).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-TTY-7 a policy changed and restored to the original bytes before the answer still gives configuration-changed', async () => {
    const d = setup('ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    const original = readFileSync(d.policy);
    writeFileSync(d.policy, original.toString('utf8').replace('"ask"}]', '"allow"}]'));
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(d.policy, original);
    expect(readFileSync(d.policy).equals(original)).toBe(true);
    s.type(`RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason: 'configuration-changed' });
    expect(exitCode).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-TTY-7 a request deleted before the answer gives configuration-unavailable', async () => {
    const d = setup('ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    writeFileSync(d.request + '.gone', '');
    const { rmSync } = await import('node:fs');
    rmSync(d.request);
    s.type(`RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout).reason).toBe('configuration-unavailable');
    expect(exitCode).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });
});

describe('R-TTY-2/R-TTY-4 refusals before any prompt', () => {
  it('R-TTY-4 an action whose preview would exceed 16 KiB is refused before any prompt', async () => {
    const d = setup('ask', Array.from({ length: 100 }, () => '\u00e9'.repeat(40)));
    const s = confirm(d);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason: 'preparation-failed' });
    expect(exitCode).toBe(2);
    expect(s.screen).not.toContain('RUN ');
    expect(s.screen).toContain('never truncated');
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-TTY-2 a deny policy decision never shows a prompt', async () => {
    const d = setup('deny');
    const s = confirm(d);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason: 'policy-deny' });
    expect(exitCode).toBe(2);
    expect(s.screen).not.toContain('RUN ');
    expect(d.sentinelLines()).toBe(0);
  });
});

describe('R-TTY-1 a live terminal is required', () => {
  it('R-TTY-1 piped stdin gives terminal-required, exit 2 and empty stderr', async () => {
    const d = setup('ask');
    const result = await runPiped(['--action-exec-confirm', d.policy, d.request], { input: 'RUN 00000000\n' });
    expect(onlyReport(result.stdout)).toMatchObject({ decision: 'deny', reason: 'terminal-required' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('');
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-TTY-1 redirected stderr (stdin still a terminal) gives terminal-required, exit 2 and empty stderr', async () => {
    const d = setup('ask');
    const s = confirm(d, { errFile: d.err }, true);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({ decision: 'deny', reason: 'terminal-required' });
    expect(exitCode).toBe(2);
    expect(readFileSync(d.err, 'utf8')).toBe('');
    expect(s.screen).not.toContain('RUN ');
    expect(d.sentinelLines()).toBe(0);
  });
});

describe('R-TTY-3 the preview is escaped and complete', () => {
  it('R-TTY-3 ESC [2J, U+202E and U+00E9 appear escaped and the screen is not cleared', async () => {
    const d = setup('ask', ['\u001b[2J', 'a\u202eb', 'caf\u00e9']);
    const s = confirm(d);
    await s.challenge();
    expect(s.screen).toContain('\\u001b[2J');
    expect(s.screen).toContain('\\u202e');
    expect(s.screen).toContain('\\u00e9');
    expect(s.screen).not.toContain('\u001b[2J');
    expect(s.screen).not.toContain('\u202e');
    expect(s.screen).not.toContain('\u00e9');
    // The effective environment, defaults included, is shown.
    expect(s.screen).toContain('"PATH": "/usr/bin:/bin"');
    s.type('\x03');
    await s.finish(d.out);
    expect(d.sentinelLines()).toBe(0);
  });
});

describe('R-EXEC-4 no private value reaches the report or the diagnostics', () => {
  it('R-EXEC-4 PRIVATE markers in args, env, cwd and child output appear in no report', async () => {
    const d = setup('ask');
    const { mkdirSync } = await import('node:fs');
    const cwd = `${d.dir}/PRIVATE_CWD_3141`;
    mkdirSync(cwd);
    const action = {
      executable: '/bin/sh',
      cwd,
      args: ['-c', `echo PRIVATE_OUT_2718; echo PRIVATE_ERR_1618 >&2; echo x >> '${d.sentinel}'`, 'PRIVATE_ARG_1414'],
      env: { SECRET_TOKEN: 'PRIVATE_ENV_1732' },
    };
    writeRequest(d, action);
    writePolicy(d, 'ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    expect(s.screen).toContain('PRIVATE_ENV_1732'); // the reviewer sees it (R-TTY-10) ...
    s.type(`RUN ${challenge}\r`);
    const { exitCode, stdout } = await s.finish(d.out);
    expect(exitCode).toBe(0);
    expect(d.sentinelLines()).toBe(1);
    expect(stdout).not.toMatch(/PRIVATE|sentinel|assent-action-/); // ... the report never does
    expect(s.screen.slice(s.screen.indexOf(`RUN ${challenge}`) + 12)).not.toContain('PRIVATE');
    const report = onlyReport(stdout);
    expect(report.execution.stdoutBytes).toBe('PRIVATE_OUT_2718\n'.length);
    expect(report.execution.stderrBytes).toBe('PRIVATE_ERR_1618\n'.length);

    const run = await runPiped(['action', 'run', d.policy, d.request]);
    expect(run.stdout + run.stderr).not.toContain('PRIVATE');
    writePolicy(d, 'deny', [{ action, decision: 'allow' }]);
    const allowed = await runPiped(['action', 'run', d.policy, d.request]);
    expect(onlyReport(allowed.stdout).reason).toBe('child-exited');
    expect(allowed.stdout + allowed.stderr).not.toContain('PRIVATE');
  });
});

describe('R-TTY-9 cancel stays connected through execution', () => {
  it('R-TTY-9 Ctrl+C after launch stops the child and waits for the confirmed termination', async () => {
    const d = setup('ask');
    const started = `${d.dir}/started`;
    writeRequest(d, { executable: '/bin/sh', cwd: d.dir, args: ['-c', `echo x >> '${started}'; exec sleep 10`], env: {} });
    writePolicy(d, 'ask');
    const s = confirm(d);
    const challenge = await s.challenge();
    s.type(`RUN ${challenge}\r`);
    for (let i = 0; i < 200 && !existsSync(started); i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(started)).toBe(true);
    s.type('\x03');
    const { exitCode, stdout } = await s.finish(d.out);
    expect(onlyReport(stdout)).toMatchObject({
      decision: 'allow',
      authorization: 'operator-confirmed',
      reason: 'action-cancelled',
      execution: { state: 'interrupted', termination: 'confirmed' },
    });
    expect(exitCode).toBe(2);
  });
});
