// Orchestration of `action confirm` with a fake terminal, clock and spawn: the
// ordering rules of R-TTY-2, R-TTY-7 and R-TTY-8 that a PTY cannot time.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import type { ExecAction } from '../../../src/core/exec/action.js';
import { confirmActionFlow, runActionFlow } from '../../../src/exec/actionFlow.js';
import { readLimitedFile } from '../../../src/exec/readLimitedFile.js';
import type { SpawnFn } from '../../../src/exec/runChild.js';

let dir: string;
let paths: { policy: string; request: string };
const action: ExecAction = { executable: '/bin/true', cwd: '/', args: ['PRIVATE_ARG'], env: {} };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-flow-'));
  paths = { policy: join(dir, 'p.json'), request: join(dir, 'r.json') };
  writeFileSync(paths.request, JSON.stringify({ schemaVersion: 1, action }));
  writeFileSync(paths.policy, JSON.stringify({ schemaVersion: 2, defaultDecision: 'ask', rules: [] }));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A terminal that answers the challenge it is shown with `answer(challenge)`. */
function fakeTerminal(answer: (challenge: string) => string) {
  const input = Object.assign(new EventEmitter(), { isTTY: true, setRawMode: () => undefined, resume: () => undefined, pause: () => undefined });
  let screen = '';
  const output = {
    isTTY: true,
    write(text: string, cb?: (e?: Error | null) => void) {
      screen += text;
      cb?.(null);
      const match = /"RUN ([0-9a-f]{8})"/.exec(text);
      if (match) setImmediate(() => input.emit('data', Buffer.from(answer(match[1] as string))));
      return true;
    },
  };
  return { input, output, signals: new EventEmitter(), screen: () => screen };
}

/** A spawn that records calls and yields a child exiting 0 at once. */
function countingSpawn(fail = false) {
  const calls: string[] = [];
  const spawn: SpawnFn = (command) => {
    calls.push(command);
    if (fail) throw Object.assign(new Error('spawn EACCES'), { code: 'EACCES' });
    const child = new EventEmitter() as ChildProcess & EventEmitter;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    Object.assign(child, { stdout, stderr, kill: () => true });
    setImmediate(() => {
      child.emit('spawn');
      stdout.end();
      stderr.end();
      child.emit('exit', 0, null);
    });
    return child;
  };
  return { spawn, calls };
}

describe('R-TTY-8 the grant at launch', () => {
  it('R-TTY-8 a confirmed answer launches exactly once', async () => {
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn();
    const report = await confirmActionFlow(paths, { clock: new FakeClock(), ...t, spawn: s.spawn });
    expect(report).toMatchObject({ decision: 'allow', reason: 'child-exited', authorization: 'operator-confirmed', policyDecision: 'ask' });
    expect(s.calls).toEqual(['/bin/true']);
    expect(JSON.stringify(report)).not.toContain('PRIVATE');
  });

  it('R-TTY-6 a grant older than 5 s at launch authorizes nothing: launch-failed, no spawn', async () => {
    const clock = new FakeClock();
    let reads = 0;
    const slowReread = async (path: string, file: 'policy' | 'request') => {
      reads += 1;
      if (reads > 2) clock.advance(2_600); // two re-reads: 5.2 s after the answer
      return readLimitedFile(path, file);
    };
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn();
    const report = await confirmActionFlow(paths, { clock, ...t, spawn: s.spawn, readFile: slowReread });
    expect(report).toMatchObject({ decision: 'deny', reason: 'launch-failed', execution: { state: 'not-started' } });
    expect(s.calls).toEqual([]);
  });

  it('R-TTY-8 a failed spawn reports spawn-failed after spending the one attempt', async () => {
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn(true);
    const report = await confirmActionFlow(paths, { clock: new FakeClock(), ...t, spawn: s.spawn });
    expect(report).toMatchObject({ decision: 'allow', reason: 'spawn-failed', execution: { state: 'spawn-failed' } });
    expect(s.calls).toHaveLength(1);
  });

  it('R-TTY-2 deny shows no prompt and never spawns', async () => {
    writeFileSync(paths.policy, JSON.stringify({ schemaVersion: 2, defaultDecision: 'deny', rules: [] }));
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn();
    const report = await confirmActionFlow(paths, { clock: new FakeClock(), ...t, spawn: s.spawn });
    expect(report.reason).toBe('policy-deny');
    expect(t.screen()).not.toContain('RUN ');
    expect(s.calls).toEqual([]);
  });

  it('R-TTY-1 without terminals nothing is read or written', async () => {
    const t = fakeTerminal(() => '');
    t.input.isTTY = false;
    let reads = 0;
    const report = await confirmActionFlow(paths, {
      clock: new FakeClock(),
      ...t,
      readFile: async (p, f) => {
        reads += 1;
        return readLimitedFile(p, f);
      },
    });
    expect(report.reason).toBe('terminal-required');
    expect(reads).toBe(0);
    expect(t.screen()).toBe('');
  });
});

describe('R-EXEC-6 run flow', () => {
  it('ask never spawns in run mode', async () => {
    const s = countingSpawn();
    const report = await runActionFlow(paths, { signals: new EventEmitter(), spawn: s.spawn });
    expect(report.reason).toBe('policy-ask');
    expect(s.calls).toEqual([]);
  });
});
