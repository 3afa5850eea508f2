// `assent action run` against the built binary, no terminal (R-EXEC-1..6).
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ExecAction } from '../../src/core/exec/action.js';
import { CLI_ENTRY } from '../helpers/pty.js';
import { EXECUTION_KEYS, makeActionDir, onlyReport, REPORT_KEYS, runPiped, sentinelAction, writePolicy, writeRequest } from './actionFixtures.js';
import type { ActionDir } from './actionFixtures.js';

const dirs: ActionDir[] = [];

function dir(): ActionDir {
  const d = makeActionDir();
  dirs.push(d);
  return d;
}

function allowOnly(d: ActionDir, action: ExecAction): void {
  writeRequest(d, action);
  writePolicy(d, 'deny', [{ action, decision: 'allow' }]);
}

beforeAll(() => {
  if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` before the e2e tests');
});

afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

describe('R-EXEC-6 action run decisions and exit codes', () => {
  it('R-EXEC-6 an allow rule runs once without any prompt and exits 0', async () => {
    const d = dir();
    allowOnly(d, sentinelAction(d));
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    const report = onlyReport(r.stdout);
    expect(report).toMatchObject({ decision: 'allow', reason: 'child-exited', execution: { state: 'exited', exitCode: 0, outputComplete: true } });
    expect(Object.keys(report).sort()).toEqual(REPORT_KEYS);
    expect(Object.keys(report.execution).sort()).toEqual(EXECUTION_KEYS);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(d.sentinelLines()).toBe(1);
  });

  it('R-EXEC-6 ask is refused with policy-ask, exit 2, nothing run', async () => {
    const d = dir();
    const action = sentinelAction(d);
    writeRequest(d, action);
    writePolicy(d, 'deny', [{ action, decision: 'ask' }]);
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    expect(onlyReport(r.stdout)).toMatchObject({ decision: 'deny', reason: 'policy-ask', execution: { state: 'not-started' } });
    expect(r.code).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-EXEC-6 deny (rule or default) is refused with policy-deny, exit 2', async () => {
    const d = dir();
    const action = sentinelAction(d);
    writeRequest(d, action);
    writePolicy(d, 'deny');
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    expect(onlyReport(r.stdout)).toMatchObject({ decision: 'deny', reason: 'policy-deny' });
    expect(r.code).toBe(2);
    expect(d.sentinelLines()).toBe(0);
  });

  it('R-EXEC-6 a child exiting non-zero is reported and exits 2', async () => {
    const d = dir();
    allowOnly(d, { executable: '/bin/sh', cwd: d.dir, args: ['-c', 'exit 3'], env: {} });
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    expect(onlyReport(r.stdout)).toMatchObject({ decision: 'allow', reason: 'child-exited', execution: { state: 'exited', exitCode: 3 } });
    expect(r.code).toBe(2);
  });

  it('R-EXEC-5 a missing executable is spawn-failed, exit 2', async () => {
    const d = dir();
    allowOnly(d, { executable: join(d.dir, 'no-such-program'), cwd: d.dir, args: [], env: {} });
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    expect(onlyReport(r.stdout)).toMatchObject({ decision: 'allow', reason: 'spawn-failed', execution: { state: 'spawn-failed' } });
    expect(r.code).toBe(2);
  });

  it('R-EXEC-6 bad arguments exit 1 with expected-action-exec-arguments on stdout', async () => {
    const d = dir();
    for (const args of [['action', 'run', d.policy], ['action', 'confirm'], ['--action-exec-confirm', 'a', 'b', 'c'], ['action', 'run', '--force', 'a', 'b'], ['action']]) {
      const r = await runPiped(args);
      expect(r.stdout).toBe('{"error":"expected-action-exec-arguments"}\n');
      expect(r.code).toBe(1);
    }
  });

  it('R-EXEC-2 the child environment is not inherited: defaults plus the request env only', async () => {
    const d = dir();
    const out = join(d.dir, 'env.txt');
    allowOnly(d, { executable: '/bin/sh', cwd: d.dir, args: ['-c', `env > '${out}'`], env: { ONLY_THIS: '1' } });
    const r = await runPiped(['action', 'run', d.policy, d.request], { env: { LEAKY_PARENT_VAR: 'leak' } });
    expect(r.code).toBe(0);
    const { readFileSync } = await import('node:fs');
    const names = readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('=')[0])
      .filter((n) => n !== 'PWD' && n !== 'SHLVL' && n !== '_'); // set by sh itself
    expect(names.sort()).toEqual(['LANG', 'ONLY_THIS', 'PATH']);
  });
});

describe('R-EXEC-3 limits', () => {
  it('R-EXEC-3 a child that sleeps 10 s ends with runtime-timeout and termination confirmed', async () => {
    const d = dir();
    allowOnly(d, { executable: '/bin/sleep', cwd: d.dir, args: ['10'], env: {} });
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    expect(onlyReport(r.stdout)).toMatchObject({
      decision: 'allow',
      reason: 'runtime-timeout',
      execution: { state: 'interrupted', termination: 'confirmed', outputComplete: false },
    });
    expect(r.code).toBe(2);
    // It was stopped by the 5 s limit, not by the sleep ending on its own.
    expect(r.elapsedMs).toBeGreaterThanOrEqual(4_500);
    expect(r.elapsedMs).toBeLessThan(9_500);
  });

  it('R-EXEC-3 a child that writes 1 MiB ends with output-limit and outputComplete false', async () => {
    const d = dir();
    allowOnly(d, { executable: '/usr/bin/head', cwd: d.dir, args: ['-c', '1048576', '/dev/zero'], env: {} });
    const r = await runPiped(['action', 'run', d.policy, d.request]);
    const report = onlyReport(r.stdout);
    expect(report).toMatchObject({ decision: 'allow', reason: 'output-limit', execution: { outputComplete: false } });
    expect(report.execution.stdoutBytes).toBeGreaterThan(64 * 1024);
    expect(report.execution.stdoutBytes).toBeLessThan(1024 * 1024);
    expect(r.code).toBe(2);
  });
});

describe('R-EXEC-1 every file violation is refused with a stable reason and no child', () => {
  function validAction(d: ActionDir): ExecAction {
    return sentinelAction(d);
  }
  const requestText = (action: unknown, extra = ''): string => `{"schemaVersion":1,${extra}"action":${JSON.stringify(action)}}`;

  const violations: Array<{ name: string; reason: string; make: (d: ActionDir) => void }> = [
    {
      name: 'a symlinked request file',
      reason: 'symlink',
      make: (d) => {
        const real = join(d.dir, 'real.json');
        writeFileSync(real, requestText(validAction(d)));
        symlinkSync(real, d.request);
      },
    },
    { name: 'a 65 KiB request', reason: 'too-large', make: (d) => writeFileSync(d.request, requestText(validAction(d)).padEnd(65 * 1024, ' ')) },
    {
      name: 'invalid UTF-8',
      reason: 'invalid-utf8',
      make: (d) => {
        const text = Buffer.from(requestText({ ...validAction(d), args: ['-c', 'true', 'XX'] }), 'utf8');
        const at = text.indexOf('XX');
        text[at] = 0xff;
        writeFileSync(d.request, text);
      },
    },
    { name: 'depth 9', reason: 'too-deep', make: (d) => writeFileSync(d.request, requestText(validAction(d), '"x":[[[[[[[[]]]]]]]],')) },
    {
      name: '2049 nodes',
      reason: 'too-many-nodes',
      make: (d) => writeFileSync(d.request, requestText(validAction(d), `"x":[${Array(2046).fill('0').join(',')}],`)),
    },
    {
      name: 'two equivalent rules',
      reason: 'duplicate-rule',
      make: (d) => {
        const action = validAction(d);
        writeRequest(d, action);
        const reordered = { env: {}, args: action.args, cwd: action.cwd, executable: action.executable };
        writePolicy(d, 'deny', [
          { action, decision: 'allow' },
          { action: reordered, decision: 'deny' },
        ]);
      },
    },
    { name: 'a relative cwd', reason: 'relative-cwd', make: (d) => writeFileSync(d.request, requestText({ ...validAction(d), cwd: 'tmp' })) },
    {
      name: 'a lowercase env name',
      reason: 'invalid-env-name',
      make: (d) => writeFileSync(d.request, requestText({ ...validAction(d), env: { path: '/bin' } })),
    },
    {
      name: 'a duplicate env name ignoring case',
      reason: 'duplicate-env-name',
      make: (d) => writeFileSync(d.request, requestText({ ...validAction(d), env: { FOO: '1', Foo: '2' } })),
    },
    {
      name: '129 args',
      reason: 'too-many-args',
      make: (d) => writeFileSync(d.request, requestText({ ...validAction(d), args: ['-c', `echo x >> '${d.sentinel}'`, ...Array(127).fill('a')] })),
    },
    {
      name: 'the same env name twice in the JSON text',
      reason: 'duplicate-env-name',
      make: (d) => writeFileSync(d.request, requestText(validAction(d)).replace('"env":{}', '"env":{"FOO":"1","FOO":"2"}')),
    },
    { name: 'an unknown key', reason: 'unknown-key', make: (d) => writeFileSync(d.request, requestText(validAction(d), '"extra":1,')) },
  ];

  for (const { name, reason, make } of violations) {
    it(`R-EXEC-1 refuses ${name} (${reason}) with policy-deny, exit 2 and no child`, async () => {
      const d = dir();
      // A policy that would allow the valid action, so only the violation stops it.
      const action = validAction(d);
      writePolicy(d, 'deny', [{ action, decision: 'allow' }]);
      make(d);
      const r = await runPiped(['action', 'run', d.policy, d.request]);
      expect(onlyReport(r.stdout)).toMatchObject({ decision: 'deny', reason: 'policy-deny', execution: { state: 'not-started' } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`(${reason})`);
      expect(d.sentinelLines()).toBe(0);
    });
  }
});
