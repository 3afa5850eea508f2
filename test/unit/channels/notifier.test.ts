// OS notifications for new approvals (R-D-10), coalesced (hardening 3): a burst
// of requests spawns a bounded number of notifier processes, at most one at a
// time and one per window, whose text names the count and the newest ids and
// never an argument. Spawn, timers and the clock are fakes driven by hand.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOsNotifier, type SpawnLike } from '../../../src/channels/notifier.js';
import { FakeClock } from '../../../src/core/base/clock.js';
import type { DaemonContext } from '../../../src/heads/daemon/daemonMain.js';
import { ensureStateDir, resolveStatePaths } from '../../../src/state/statePaths.js';
import { createApprovalRuntime } from '../../../src/heads/daemon/daemonRuntime.js';
import { createLogger } from '../../../src/service/logger.js';
import { ManualTime } from '../../helpers/manualTime.js';

class FakeChild extends EventEmitter {
  killed: string | undefined;
  unref(): void {}
  kill(signal: string): boolean {
    this.killed = signal;
    return true;
  }
}

function fakeSpawn(): { spawn: SpawnLike; calls: { file: string; args: string[]; child: FakeChild }[] } {
  const calls: { file: string; args: string[]; child: FakeChild }[] = [];
  const spawn = ((file: string, args: string[]) => {
    const child = new FakeChild();
    calls.push({ file, args, child });
    return child;
  }) as unknown as SpawnLike;
  return { spawn, calls };
}

function notifierWith(time: ManualTime, spawn: SpawnLike, platform: NodeJS.Platform = 'linux') {
  return createOsNotifier({ platform, spawn, timers: time, monotonic: () => time.now, env: {} });
}

describe('issue 20: a failed OS notification says why', () => {
  it('a missing notify-send, a failing exit and an unknown platform each leave their reason in lastFailure', () => {
    const time = new ManualTime();
    const { spawn, calls } = fakeSpawn();
    const notifier = notifierWith(time, spawn);
    notifier.notify({ title: 't', body: 'b' });
    calls[0]?.child.emit('error', Object.assign(new Error('spawn notify-send ENOENT'), { code: 'ENOENT' }));
    expect(notifier.failures).toBe(1);
    expect(notifier.lastFailure).toBe('notify-send is not installed (not found on PATH)');
    time.advance(2000);
    notifier.notify({ title: 't', body: 'b' });
    calls[1]?.child.emit('exit', 1);
    expect(notifier.lastFailure).toBe('notify-send exited with 1');
    const unknown = notifierWith(time, spawn, 'aix');
    unknown.notify({ title: 't', body: 'b' });
    expect(unknown.lastFailure).toBe('no desktop notifier is known for aix');
  });
});

describe('R-D-10 coalesced OS notifications (hardening 3)', () => {
  it('R-D-10 (hardening 3) 2,000 approval requests in a burst spawn 2 notifier processes; the summary names the count and the newest ids, the last one included, in bounded text', () => {
    const time = new ManualTime();
    const { spawn, calls } = fakeSpawn();
    const notifier = notifierWith(time, spawn);
    for (let i = 0; i < 2000; i += 1) {
      notifier.notify({ title: `assent: approval id${i}`, body: `fs/write_file is waiting for your decision. Run: assent approve id${i}`, approvalId: `id${i}` });
    }
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args).toEqual(['--app-name=assent', 'assent: approval id0', 'fs/write_file is waiting for your decision. Run: assent approve id0']);
    calls[0]?.child.emit('exit', 0);
    expect(calls).toHaveLength(1); // one per 2 s window
    time.advance(2000);
    expect(calls).toHaveLength(2);
    const summary = calls[1]?.args.join('\n') ?? '';
    expect(summary).toContain('1999 more approvals waiting');
    expect(summary).toContain('id1999');
    expect(summary).toContain('1994 more');
    expect(summary.length).toBeLessThan(300);
    calls[1]?.child.emit('exit', 0);
    time.advance(60_000);
    expect(calls).toHaveLength(2);
    expect({ sent: notifier.sent, failures: notifier.failures }).toEqual({ sent: 2, failures: 0 });
  });

  it('R-D-10 (hardening 3) at most one notifier process runs at a time: a slow one holds back the next until it exits', () => {
    const time = new ManualTime();
    const { spawn, calls } = fakeSpawn();
    const notifier = notifierWith(time, spawn);
    notifier.notify({ title: 't', body: 'b', approvalId: 'first' });
    notifier.notify({ title: 't', body: 'b', approvalId: 'second' });
    time.advance(3000);
    expect(calls).toHaveLength(1);
    calls[0]?.child.emit('exit', 0);
    expect(calls).toHaveLength(2);
    // A lone request after a quiet window is announced as it was.
    expect(calls[1]?.args).toEqual(['--app-name=assent', 't', 'b']);
  });

  it('R-D-10 (hardening 3) a notifier process that never exits is killed after its timeout, counted as a failure, and notifications go on', () => {
    const time = new ManualTime();
    const { spawn, calls } = fakeSpawn();
    const notifier = createOsNotifier({ platform: 'linux', spawn, timers: time, monotonic: () => time.now, env: {}, timeoutMs: 5000 });
    notifier.notify({ title: 'assent: approval stuck', body: 'b', approvalId: 'stuck' });
    notifier.notify({ title: 'assent: approval next', body: 'b', approvalId: 'next' });
    time.advance(5999);
    expect(calls).toHaveLength(1);
    time.advance(2000);
    expect(calls[0]?.child.killed).toBe('SIGKILL');
    expect(notifier.failures).toBe(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args.join(' ')).toContain('next');
    calls[0]?.child.emit('exit', null); // a late exit of the killed child counts nothing more
    expect(notifier.failures).toBe(1);
  });

  it('R-D-10 failures are counted: a non-zero exit, a spawn error, a throwing spawn, an unsupported platform; nothing throws', () => {
    const time = new ManualTime();
    const { spawn, calls } = fakeSpawn();
    const notifier = notifierWith(time, spawn);
    notifier.notify({ title: 't', body: 'b' });
    calls[0]?.child.emit('exit', 3);
    time.advance(2000);
    notifier.notify({ title: 't', body: 'b' });
    calls[1]?.child.emit('error', new Error('ENOENT'));
    calls[1]?.child.emit('exit', -2);
    expect({ sent: notifier.sent, failures: notifier.failures }).toEqual({ sent: 0, failures: 2 });

    const throwing = notifierWith(time, (() => {
      throw new Error('EAGAIN');
    }) as unknown as SpawnLike);
    expect(() => throwing.notify({ title: 't', body: 'b' })).not.toThrow();
    expect(throwing.failures).toBe(1);

    const unsupported = notifierWith(time, spawn, 'aix');
    unsupported.notify({ title: 't', body: 'b' });
    expect(unsupported.failures).toBe(1);
    expect(calls).toHaveLength(2);
  });
});

describe('R-D-10 the daemon runtime feeds the coalescing notifier (hardening 3)', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  it('R-D-10 (hardening 3) 40 approvals filed at once spawn 2 processes naming the newest id, never an argument', async () => {
    const root = mkdtempSync(join(tmpdir(), 'as-notify-'));
    roots.push(root);
    const paths = resolveStatePaths({ ASSENT_HOME: join(root, 'h') });
    ensureStateDir(paths);
    writeFileSync(paths.config, JSON.stringify({ notifications: true, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } }), { mode: 0o600 });
    const hooks: (() => Promise<void> | void)[] = [];
    const ctx: DaemonContext = {
      paths,
      logger: createLogger({ write: () => undefined }),
      startedAt: 0,
      principal: 'owner:test',
      onShutdown: (hook) => hooks.push(hook),
      requestShutdown: () => undefined,
      status: {},
      connections: () => 0,
    };
    const time = new ManualTime();
    const { spawn, calls } = fakeSpawn();
    const runtime = createApprovalRuntime(ctx, { clock: new FakeClock(), notifier: notifierWith(time, spawn) });
    const filed: string[] = [];
    runtime.bus.subscribe((event) => {
      if (event.kind === 'approval_requested') filed.push((event.data['approval'] as { id: string }).id);
    });
    try {
      for (let i = 0; i < 40; i += 1) {
        void runtime.service.authorize({ sessionId: 's', server: 'fs', tool: 'write_file', args: { content: `SECRET-ARG-${i}` } }).catch(() => undefined);
      }
      await expect.poll(() => filed.length).toBe(40);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.args.join('\n')).toContain(filed[0]);
      expect(calls[0]?.args.join('\n')).toContain('fs/write_file');
      calls[0]?.child.emit('exit', 0);
      time.advance(2000);
      expect(calls).toHaveLength(2);
      const summary = calls[1]?.args.join('\n') ?? '';
      expect(summary).toContain('39 more approvals waiting');
      expect(summary).toContain(filed[39]);
      expect(calls.map((call) => call.args.join('\n')).join('\n')).not.toContain('SECRET-ARG');
    } finally {
      for (const hook of hooks) await hook();
    }
  });
});
