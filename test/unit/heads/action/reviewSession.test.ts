// The broker's per-connection confirmation with a fake terminal, clock and
// spawn: one binding captured at open and borrowed by every call, a fresh
// challenge per call, deny without a prompt, and a cancel that runs nothing.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src/core/base/clock.js';
import type { ExecAction } from '../../../../src/core/exec/action.js';
import type { SpawnFn } from '../../../../src/exec/runChild.js';
import { BrokerSignals } from '../../../../src/heads/action/reviewBroker.js';
import { ReviewSession } from '../../../../src/heads/action/reviewSession.js';

let dir: string;
let paths: { policy: string; request: string };
const action: ExecAction = { executable: '/bin/true', cwd: '/', args: ['PRIVATE_ARG'], env: {} };

function writePolicy(decision: 'ask' | 'deny' | 'allow'): void {
  const rules = decision === 'ask' ? [] : [{ action, decision }];
  writeFileSync(paths.policy, JSON.stringify({ schemaVersion: 2, defaultDecision: 'ask', rules }));
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-review-'));
  paths = { policy: join(dir, 'p.json'), request: join(dir, 'r.json') };
  writeFileSync(paths.request, JSON.stringify({ schemaVersion: 1, action }));
  writePolicy('ask');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A terminal that answers each challenge it is shown with `answer(challenge)`; undefined leaves it unanswered. */
function fakeTerminal(answer: (challenge: string) => string | undefined) {
  const input = Object.assign(new EventEmitter(), { isTTY: true, setRawMode: () => undefined, resume: () => undefined, pause: () => undefined });
  let screen = '';
  const challenges: string[] = [];
  const output = {
    isTTY: true,
    write(text: string, cb?: (e?: Error | null) => void) {
      screen += text;
      cb?.(null);
      const match = /"RUN ([0-9a-f]{8})"/.exec(text);
      if (match) {
        challenges.push(match[1] as string);
        const reply = answer(match[1] as string);
        if (reply !== undefined) setImmediate(() => input.emit('data', Buffer.from(reply)));
      }
      return true;
    },
  };
  return { input, output, screen: () => screen, challenges };
}

function countingSpawn() {
  const calls: string[] = [];
  const spawn: SpawnFn = (command) => {
    calls.push(command);
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

function session(t: ReturnType<typeof fakeTerminal>, spawn: SpawnFn, signals = new BrokerSignals()): ReviewSession {
  return new ReviewSession({ paths, clock: new FakeClock(), input: t.input, output: t.output, signals, spawn, deadlineMs: 60_000 });
}

describe('ReviewSession', () => {
  it('SPEC §6 every call needs its own fresh challenge and launches once per confirmation', async () => {
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn();
    const review = session(t, s.spawn);
    expect(await review.open()).toBeUndefined();
    const first = await review.confirmCall();
    const second = await review.confirmCall();
    expect(first).toMatchObject({ decision: 'allow', authorization: 'operator-confirmed', policyDecision: 'ask', reason: 'child-exited' });
    expect(second).toMatchObject({ decision: 'allow', reason: 'child-exited' });
    expect(s.calls).toEqual(['/bin/true', '/bin/true']);
    expect(t.challenges).toHaveLength(2);
    expect(t.challenges[0]).not.toBe(t.challenges[1]);
    review.close();
  });

  it('SPEC §6 a stale answer (the previous challenge) refuses that call only', async () => {
    let previous = '';
    const t = fakeTerminal((c) => {
      const reply = previous === '' ? `RUN ${c}\r` : `RUN ${previous}\r`;
      previous = c;
      return reply;
    });
    const s = countingSpawn();
    const review = session(t, s.spawn);
    await review.open();
    expect(await review.confirmCall()).toMatchObject({ decision: 'allow' });
    expect(await review.confirmCall()).toMatchObject({ decision: 'deny', reason: 'confirmation-denied' });
    expect(s.calls).toHaveLength(1);
  });

  it('SPEC §6 the binding is captured at open and borrowed: a change before the first call is not recaptured', async () => {
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn();
    const review = session(t, s.spawn);
    await review.open();
    writePolicy('allow'); // different bytes, still a valid policy: a recapture would accept it
    expect(await review.confirmCall()).toMatchObject({ decision: 'deny', reason: 'configuration-changed' });
    writePolicy('ask'); // restored: the revoked binding stays revoked
    expect(await review.confirmCall()).toMatchObject({ decision: 'deny', reason: 'configuration-changed' });
    expect(t.challenges).toHaveLength(0);
    expect(s.calls).toHaveLength(0);
  });

  it('R-TTY-2 deny answers without any prompt and never spawns', async () => {
    writePolicy('deny');
    const t = fakeTerminal((c) => `RUN ${c}\r`);
    const s = countingSpawn();
    const review = session(t, s.spawn);
    await review.open();
    expect(await review.confirmCall()).toMatchObject({ decision: 'deny', reason: 'policy-deny' });
    expect(t.challenges).toHaveLength(0);
    expect(s.calls).toHaveLength(0);
  });

  it('R-TTY-9 the broker ending (SIGTERM on its signal source) refuses an open confirmation and runs nothing', async () => {
    const t = fakeTerminal(() => undefined);
    const s = countingSpawn();
    const signals = new BrokerSignals();
    const review = session(t, s.spawn, signals);
    await review.open();
    const pending = review.confirmCall();
    while (t.challenges.length === 0) await new Promise((r) => setImmediate(r));
    signals.emit('SIGTERM');
    expect(await pending).toMatchObject({ decision: 'deny', reason: 'action-cancelled' });
    expect(s.calls).toHaveLength(0);
  });

  it('a call the client withdraws (notifications/cancelled) closes its open prompt and runs nothing', async () => {
    const t = fakeTerminal(() => undefined);
    const s = countingSpawn();
    const review = session(t, s.spawn);
    await review.open();
    const controller = new AbortController();
    const pending = review.confirmCall(controller.signal);
    while (t.challenges.length === 0) await new Promise((r) => setImmediate(r));
    controller.abort();
    expect(await pending).toMatchObject({ decision: 'deny', reason: 'action-cancelled' });
    expect(t.screen()).toContain('withdrew call 1');
    // Already withdrawn before its turn: no prompt at all.
    expect(await review.confirmCall(AbortSignal.abort())).toMatchObject({ reason: 'action-cancelled' });
    expect(t.challenges).toHaveLength(1);
    expect(s.calls).toHaveLength(0);
  });

  it('an invalid request refuses at open with policy-deny', async () => {
    writeFileSync(paths.request, JSON.stringify({ schemaVersion: 1, action: { ...action, extra: true } }));
    const t = fakeTerminal(() => undefined);
    const review = session(t, countingSpawn().spawn);
    expect(await review.open()).toMatchObject({ decision: 'deny', reason: 'policy-deny' });
  });
});
