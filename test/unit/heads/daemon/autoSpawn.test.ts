import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureDaemonRunning, isProcessAlive } from '../../../../src/heads/daemon/autoSpawn.js';
import type { AutoSpawnOptions, SpawnFunction, SpawnPaths } from '../../../../src/heads/daemon/autoSpawn.js';

let dir: string;
let paths: SpawnPaths;
let entry: string;

/** A pid that certainly is not running: a child that has exited and been reaped. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid ?? 999_999;
}

interface FakeSpawn {
  spawn: SpawnFunction;
  calls: { command: string; args: string[]; options: Record<string, unknown> }[];
  child: EventEmitter & { pid: number; unref(): void };
}

function fakeSpawn(onSpawn: () => void = () => undefined): FakeSpawn {
  const child = Object.assign(new EventEmitter(), { pid: 4242, unref: () => undefined });
  const calls: FakeSpawn['calls'] = [];
  const spawn = ((command: string, args: string[], options: Record<string, unknown>) => {
    calls.push({ command, args, options });
    onSpawn();
    return child;
  }) as unknown as SpawnFunction;
  return { spawn, calls, child };
}

function options(spawn: SpawnFunction, extra: Partial<AutoSpawnOptions> = {}): AutoSpawnOptions {
  return { paths, entryScript: entry, execPath: '/usr/bin/node-test', spawn, waitMs: 400, ...extra };
}

beforeEach(() => {
  dir = mkdtempSync('/tmp/as-spawn-');
  paths = { home: dir, socket: join(dir, 'daemon.sock'), pid: join(dir, 'daemon.pid'), log: join(dir, 'daemon.log'), spawnLock: join(dir, 'daemon.spawn.lock') };
  entry = join(dir, 'entry.js');
  writeFileSync(entry, '');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('R-D-1 auto-spawn', () => {
  it('spawns `<node> <entry> daemon run` (no V8 flags, SPEC §14) detached, stdin ignored, output to a 0600 daemon.log, then releases the lock', async () => {
    let up = false;
    const fake = fakeSpawn(() => (up = true));
    await ensureDaemonRunning(options(fake.spawn), async () => up);
    expect(fake.calls).toHaveLength(1);
    const call = fake.calls[0];
    expect(call?.command).toBe('/usr/bin/node-test');
    expect(call?.args).toEqual([entry, 'daemon', 'run']);
    expect(call?.options['detached']).toBe(true);
    expect((call?.options['stdio'] as unknown[])[0]).toBe('ignore');
    expect(statSync(paths.log).mode & 0o777).toBe(0o600);
    expect(existsSync(paths.spawnLock)).toBe(false);
  });

  it('does not spawn when a daemon answers once the lock is taken', async () => {
    const fake = fakeSpawn();
    await ensureDaemonRunning(options(fake.spawn), async () => true);
    expect(fake.calls).toHaveLength(0);
  });

  it('breaks a spawn lock left by a dead process', async () => {
    writeFileSync(paths.spawnLock, `${deadPid()}\n`);
    let up = false;
    const fake = fakeSpawn(() => (up = true));
    await ensureDaemonRunning(options(fake.spawn), async () => up);
    expect(fake.calls).toHaveLength(1);
    expect(existsSync(paths.spawnLock)).toBe(false);
  });

  it('waits for a live lock holder and does not spawn a second daemon when the holder brings one up', async () => {
    writeFileSync(paths.spawnLock, `${process.pid}\n`);
    let probes = 0;
    const fake = fakeSpawn();
    await ensureDaemonRunning(options(fake.spawn), async () => ++probes >= 3);
    expect(fake.calls).toHaveLength(0);
    // The other holder's lock is not ours to remove.
    expect(readFileSync(paths.spawnLock, 'utf8')).toBe(`${process.pid}\n`);
  });

  it('clears a stale socket and a pid file naming a dead process before spawning', async () => {
    writeFileSync(paths.socket, '');
    writeFileSync(paths.pid, `${deadPid()}\n`);
    let sawSocketAtSpawn = true;
    let up = false;
    const fake = fakeSpawn(() => {
      sawSocketAtSpawn = existsSync(paths.socket) || existsSync(paths.pid);
      up = true;
    });
    await ensureDaemonRunning(options(fake.spawn), async () => up);
    expect(sawSocketAtSpawn).toBe(false);
  });

  it('leaves the socket alone when the pid file names a live process', async () => {
    writeFileSync(paths.socket, '');
    writeFileSync(paths.pid, `${process.pid}\n`);
    let up = false;
    const fake = fakeSpawn(() => {
      expect(existsSync(paths.socket)).toBe(true);
      up = true;
    });
    await ensureDaemonRunning(options(fake.spawn), async () => up);
  });

  it('a daemon that exits before answering fails with `unavailable` naming daemon.log', async () => {
    const fake = fakeSpawn();
    setTimeout(() => fake.child.emit('exit', 65, null), 20);
    const error = await ensureDaemonRunning(options(fake.spawn, { waitMs: 5000 }), async () => false).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'unavailable', details: { reason: 'spawn-failed' } });
    expect((error as Error).message).toContain(paths.log);
    expect((error as Error).message).toContain('exited (65)');
    expect(existsSync(paths.spawnLock)).toBe(false);
  });

  it('a daemon that never answers fails after the wait, naming daemon.log and `assent daemon run`', async () => {
    const fake = fakeSpawn();
    const error = await ensureDaemonRunning(options(fake.spawn, { waitMs: 150 }), async () => false).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'unavailable' });
    expect((error as Error).message).toContain('did not answer within 150 ms');
    expect((error as Error).message).toContain('assent daemon run');
  });

  it('a missing entry script is a clear error, not a crash', async () => {
    const fake = fakeSpawn();
    const error = await ensureDaemonRunning(options(fake.spawn, { entryScript: join(dir, 'missing.js') }), async () => false).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'unavailable' });
    expect((error as Error).message).toContain('npm run build');
    expect(fake.calls).toHaveLength(0);
  });

  it('isProcessAlive: ourselves yes, a reaped child no, nonsense pids no', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(deadPid())).toBe(false);
    expect(isProcessAlive(0)).toBe(false);
    expect(isProcessAlive(-1)).toBe(false);
    expect(isProcessAlive(Number.NaN)).toBe(false);
  });
});
