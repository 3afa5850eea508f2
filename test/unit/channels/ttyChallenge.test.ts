import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { confirmDeadlineFromEnv, TerminalConfirmation } from '../../../src/channels/ttyChallenge.js';
import type { ChallengeTimers } from '../../../src/channels/ttyChallenge.js';

/** Timers a test fires by hand. */
class ManualTimers implements ChallengeTimers {
  private next = 1;
  readonly pending = new Map<number, { fn: () => void; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { fn, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Fires every pending timer whose delay equals `ms`. */
  fire(ms: number): void {
    for (const [id, t] of [...this.pending]) {
      if (t.ms === ms) {
        this.pending.delete(id);
        t.fn();
      }
    }
  }
}

function harness() {
  const input = Object.assign(new EventEmitter(), {
    isTTY: true,
    raw: false,
    setRawMode(mode: boolean) {
      this.raw = mode;
    },
    resume() {},
    pause() {},
  });
  let written = '';
  const output = {
    isTTY: true,
    write(text: string, cb?: (e?: Error | null) => void) {
      written += text;
      cb?.(null);
      return true;
    },
  };
  const signals = new EventEmitter();
  const timers = new ManualTimers();
  const terminal = new TerminalConfirmation({ input, output, signals, timers, deadlineMs: 60_000, settleMs: 150, drainMs: 1000 });
  const type = (text: string | number[]) => input.emit('data', Buffer.from(typeof text === 'string' ? Buffer.from(text, 'latin1') : text));
  const flush = () => new Promise((r) => setImmediate(r));
  return { input, output, signals, timers, terminal, type, flush, screen: () => written };
}

describe('R-TTY-5 one answer', () => {
  it('R-TTY-5 RUN <challenge> + Enter, nothing after, confirms after the settle window', async () => {
    const h = harness();
    const answer = h.terminal.ask('preview\n', 'deadbeef');
    await h.flush();
    expect(h.input.raw).toBe(true);
    h.type('RUN deadbeef\r');
    h.timers.fire(150);
    expect(await answer).toEqual({ confirmed: true });
  });

  it('R-TTY-5 CR LF counts as one line ending', async () => {
    const h = harness();
    const answer = h.terminal.ask('p', 'deadbeef');
    await h.flush();
    h.type('RUN deadbeef\r\n');
    h.timers.fire(150);
    expect(await answer).toEqual({ confirmed: true });
  });

  const refusals: Array<[string, string | number[], string, string]> = [
    ['other text', 'RUN deadbeee\r', 'confirmation-denied', 'wrong-answer'],
    ['lowercase run', 'run deadbeef\r', 'confirmation-denied', 'wrong-answer'],
    ['an extra line', 'RUN deadbeef\r\nls\r', 'confirmation-denied', 'extra-line'],
    ['a second line ending', 'RUN deadbeef\r\r', 'confirmation-denied', 'extra-line'],
    ['129 bytes', 'a'.repeat(129), 'confirmation-denied', 'too-long'],
    ['ESC', 'RUN dead\u001b', 'confirmation-denied', 'escape'],
    ['a backspace', 'RUN deadbeeff\u007f\r', 'confirmation-denied', 'control-byte'],
    ['a non-ASCII byte', [0x52, 0x55, 0x4e, 0x20, 0xc3, 0xa9], 'confirmation-denied', 'control-byte'],
    ['Ctrl+C', '\u0003', 'action-cancelled', 'ctrl-c'],
    ['Ctrl+D', '\u0004', 'confirmation-unavailable', 'eof'],
  ];
  for (const [name, input, reason, cause] of refusals) {
    it(`R-TTY-5 refuses ${name}`, async () => {
      const h = harness();
      const answer = h.terminal.ask('p', 'deadbeef');
      await h.flush();
      h.type(input);
      h.timers.fire(150);
      expect(await answer).toEqual({ confirmed: false, reason, cause });
    });
  }

  it('R-TTY-5 refuses when the deadline passes', async () => {
    const h = harness();
    const answer = h.terminal.ask('p', 'deadbeef');
    await h.flush();
    h.type('RUN dead');
    h.timers.fire(60_000);
    expect(await answer).toMatchObject({ confirmed: false, cause: 'deadline' });
  });

  it('R-TTY-4 refuses when the preview does not drain within 1 s', async () => {
    const h = harness();
    h.output.write = () => true; // never calls back
    const answer = h.terminal.ask('p', 'deadbeef');
    await h.flush();
    h.timers.fire(1000);
    expect(await answer).toMatchObject({ confirmed: false, reason: 'confirmation-unavailable', cause: 'drain-timeout' });
  });

  it('R-TTY-5 refuses on SIGINT, SIGTERM and input end or error', async () => {
    for (const trigger of [
      (h: ReturnType<typeof harness>) => h.signals.emit('SIGINT'),
      (h: ReturnType<typeof harness>) => h.signals.emit('SIGTERM'),
      (h: ReturnType<typeof harness>) => h.input.emit('end'),
      (h: ReturnType<typeof harness>) => h.input.emit('error', new Error('EIO')),
    ]) {
      const h = harness();
      const answer = h.terminal.ask('p', 'deadbeef');
      await h.flush();
      trigger(h);
      expect((await answer).confirmed).toBe(false);
    }
  });

  it('R-TTY-9 after confirming, Ctrl+C or a signal still aborts the cancel signal; other bytes do not', async () => {
    const h = harness();
    const answer = h.terminal.ask('p', 'deadbeef');
    await h.flush();
    h.type('RUN deadbeef\r');
    h.timers.fire(150);
    await answer;
    h.type('zz\r');
    expect(h.terminal.cancelled.aborted).toBe(false);
    h.type('\u0003');
    expect(h.terminal.cancelled.aborted).toBe(true);
  });

  it('close restores cooked mode and detaches from signals', async () => {
    const h = harness();
    void h.terminal.ask('p', 'deadbeef');
    await h.flush();
    h.terminal.close();
    expect(h.input.raw).toBe(false);
    expect(h.signals.listenerCount('SIGINT')).toBe(0);
    expect(h.input.listenerCount('data')).toBe(0);
  });
});

describe('R-TTY-5 deadline override', () => {
  it('only shortens the shipped 60 s', () => {
    expect(confirmDeadlineFromEnv({})).toBe(60_000);
    expect(confirmDeadlineFromEnv({ ASSENT_TEST_CONFIRM_DEADLINE_MS: '500' })).toBe(500);
    expect(confirmDeadlineFromEnv({ ASSENT_TEST_CONFIRM_DEADLINE_MS: '600000' })).toBe(60_000);
    expect(confirmDeadlineFromEnv({ ASSENT_TEST_CONFIRM_DEADLINE_MS: '0' })).toBe(60_000);
    expect(confirmDeadlineFromEnv({ ASSENT_TEST_CONFIRM_DEADLINE_MS: '1e9' })).toBe(60_000);
  });
});
