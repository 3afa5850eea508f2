// The daemon process over its real socket, driven through the built binary:
// permissions, auto-spawn, single instance, version check, graceful stop.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { VERSION } from '../../src/version.js';
import { REPO_ROOT, daemonsForHome, makeTempHome } from '../helpers/daemon.js';
import type { TempHome } from '../helpers/daemon.js';

const homes: TempHome[] = [];
function tempHome(): TempHome {
  const home = makeTempHome();
  homes.push(home);
  return home;
}

afterEach(async () => {
  await Promise.all(homes.splice(0).map((home) => home.cleanup()));
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('daemon process', () => {
  it('R-D-1 the first CLI command auto-starts the daemon; R-D-2 socket 0600 in a 0700 state dir, pid and log 0600', async () => {
    const t = tempHome();
    const result = await t.runCli(['daemon', 'status', '--json']);
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout) as { ok: boolean; data: { pid: number; version: string; socket: string } };
    expect(doc.ok).toBe(true);
    expect(doc.data.version).toBe(VERSION);
    expect(doc.data.socket).toBe(t.paths.socket);
    expect(daemonsForHome(t.home)).toEqual([doc.data.pid]);
    expect(statSync(t.paths.home).mode & 0o777).toBe(0o700);
    const socket = statSync(t.paths.socket);
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(statSync(t.paths.pid).mode & 0o777).toBe(0o600);
    expect(statSync(t.paths.log).mode & 0o777).toBe(0o600);
  });

  it('R-D-1 ten CLI commands started at once leave exactly one daemon running, and all succeed', async () => {
    const t = tempHome();
    const results = await Promise.all(Array.from({ length: 10 }, () => t.runCli(['daemon', 'status', '--json'])));
    for (const result of results) expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const pids = new Set(results.map((result) => (JSON.parse(result.stdout) as { data: { pid: number } }).data.pid));
    expect(pids.size).toBe(1);
    // Losers of any race would still be alive (or exiting) now; give them a moment to show up.
    await sleep(300);
    expect(daemonsForHome(t.home)).toEqual([...pids]);
    expect(existsSync(t.paths.spawnLock)).toBe(false);
  });

  it('R-D-1 a stale socket and a pid file naming a dead process are cleared before auto-spawn', async () => {
    const t = tempHome();
    mkdirSync(t.paths.home, { recursive: true, mode: 0o700 });
    // A socket file nobody listens on, like one left behind by kill -9.
    const stale = createServer();
    await new Promise<void>((resolve) => stale.listen(t.paths.socket, resolve));
    stale.close(); // closing unlinks it on some platforms; recreate as a plain file if so
    if (!existsSync(t.paths.socket)) closeSync(openSync(t.paths.socket, 'w', 0o600));
    writeFileSync(t.paths.pid, '999999\n', { mode: 0o600 });
    const result = await t.runCli(['daemon', 'status', '--json']);
    expect(result.code).toBe(0);
    const { data } = JSON.parse(result.stdout) as { data: { pid: number } };
    expect(data.pid).not.toBe(999999);
    expect(daemonsForHome(t.home)).toEqual([data.pid]);
  });

  it('R-D-1 a pid file naming a live process that is no daemon (pid reused after a crash) does not block the start', async () => {
    const t = tempHome();
    mkdirSync(t.paths.home, { recursive: true, mode: 0o700 });
    const bystander = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(t.paths.pid, `${bystander.pid}\n`, { mode: 0o600 });
      const result = await t.runCli(['daemon', 'status', '--json']);
      expect(result.code).toBe(0);
      const { data } = JSON.parse(result.stdout) as { data: { pid: number } };
      expect(data.pid).not.toBe(bystander.pid);
      expect(daemonsForHome(t.home)).toEqual([data.pid]);
      expect(bystander.exitCode).toBeNull();
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('R-D-3 a client of another version is refused with a message naming both versions and the fix', async () => {
    const t = tempHome();
    await t.startDaemon();
    const refusal = await DaemonClient.connect({ socketPath: t.paths.socket, version: '0.0.1-old' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toMatchObject({ type: 'version_mismatch', details: { clientVersion: '0.0.1-old', daemonVersion: VERSION } });
    const message = (refusal as Error).message;
    expect(message).toContain('0.0.1-old');
    expect(message).toContain(VERSION);
    expect(message).toContain('assent daemon stop');
    // The daemon is unaffected and still serves a matching client.
    const client = await DaemonClient.connect({ socketPath: t.paths.socket });
    expect(client.daemon?.version).toBe(VERSION);
    client.close();
  });

  it('R-D-3 the fix a mismatch names works: `daemon stop` stops a daemon of another version, and the next command starts a matching one', async () => {
    const t = tempHome();
    // A daemon speaking another version, built from the same modules.
    const script = [
      `import { runDaemon } from ${JSON.stringify(join(REPO_ROOT, 'dist/heads/daemon/daemonMain.js'))};`,
      `import { daemonOperations } from ${JSON.stringify(join(REPO_ROOT, 'dist/operations/daemonOperations.js'))};`,
      `import { resolveStatePaths } from ${JSON.stringify(join(REPO_ROOT, 'dist/state/statePaths.js'))};`,
      `await runDaemon({ paths: resolveStatePaths(process.env), operations: (ctx) => daemonOperations(ctx, { version: '0.0.1-old' }), onStarted: () => process.stderr.write('listening\\n') });`,
    ].join('\n');
    const old = spawn(process.execPath, ['--input-type=module', '-e', script], { env: t.env, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => old.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => old.stderr.on('data', () => resolve()));

    const refused = await t.runCli(['daemon', 'status', '--json']);
    expect(refused.code).toBe(69);
    expect((JSON.parse(refused.stdout) as { error: { type: string } }).error.type).toBe('version_mismatch');

    const stop = await t.runCli(['daemon', 'stop', '--json']);
    expect(stop.code).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({ ok: true, data: { stopped: true, pid: old.pid, version: '0.0.1-old' } });
    expect(await exited).toBe(0);

    const fresh = await t.runCli(['daemon', 'status', '--json']);
    expect(fresh.code).toBe(0);
    expect((JSON.parse(fresh.stdout) as { data: { version: string } }).data.version).toBe(VERSION);
  });

  it('R-D-1 a second `daemon run` refuses while a live daemon answers, and leaves the first one serving', async () => {
    const t = tempHome();
    const first = await t.startDaemon();
    const second = await t.runCli(['daemon', 'run', '--json']);
    expect(second.code).toBe(65);
    const doc = JSON.parse(second.stdout) as { ok: boolean; error: { type: string; message: string } };
    expect(doc.error.type).toBe('conflict');
    expect(doc.error.message).toContain(`pid ${first.pid}`);
    expect(doc.error.message).toContain('assent daemon stop');
    const status = await t.runCli(['daemon', 'status', '--json']);
    expect((JSON.parse(status.stdout) as { data: { pid: number } }).data.pid).toBe(first.pid);
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('R-D-6 %s stops the daemon with exit 0 and removes its socket and pid file', async (signal) => {
    const t = tempHome();
    const daemon = await t.startDaemon();
    expect(existsSync(t.paths.socket)).toBe(true);
    expect(existsSync(t.paths.pid)).toBe(true);
    const exited = new Promise<number | null>((resolve) => daemon.on('exit', (code) => resolve(code)));
    daemon.kill(signal);
    expect(await exited).toBe(0);
    expect(existsSync(t.paths.socket)).toBe(false);
    expect(existsSync(t.paths.pid)).toBe(false);
  });

  it('R-D-1 `daemon stop` stops a running daemon, then reports that none runs (exit 0)', async () => {
    const t = tempHome();
    const started = await t.runCli(['daemon', 'status', '--json']);
    const { pid } = (JSON.parse(started.stdout) as { data: { pid: number } }).data;
    const stop = await t.runCli(['daemon', 'stop', '--json']);
    expect(stop.code).toBe(0);
    expect(JSON.parse(stop.stdout)).toEqual({ ok: true, data: { running: false, stopped: true, pid }, meta: {} });
    await waitFor(() => daemonsForHome(t.home).length === 0);
    expect(existsSync(t.paths.socket)).toBe(false);
    const again = await t.runCli(['daemon', 'stop']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to stop');
  });

  it('R-CLI-5 with auto-spawn off and no daemon, status fails with `unavailable` and exit 69 naming the socket', async () => {
    const t = tempHome();
    const result = await t.runCli(['daemon', 'status', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 69, stderr: "" });
    const doc = JSON.parse(result.stdout) as { ok: boolean; error: { type: string; message: string } };
    expect(doc.ok).toBe(false);
    expect(doc.error.type).toBe('unavailable');
    expect(doc.error.message).toContain(t.paths.socket);
    expect(doc.error.message).toContain('assent daemon run');
    expect(daemonsForHome(t.home)).toEqual([]);
  });

  it('R-STATE-1 a state dir writable by others is refused before any daemon starts, naming the path and the fix', async () => {
    const t = tempHome();
    mkdirSync(t.paths.home, { recursive: true });
    chmodSync(t.paths.home, 0o777);
    const result = await t.runCli(['daemon', 'status', '--json']);
    expect(result.code).toBe(65);
    const doc = JSON.parse(result.stdout) as { error: { type: string; message: string } };
    expect(doc.error.type).toBe('state_insecure');
    expect(doc.error.message).toContain(t.paths.home);
    // World-writable: files may already be planted, so the fix is a fresh private dir, never a chmod (hardening 1).
    expect(doc.error.message).not.toContain('chmod');
    expect(doc.error.message).toContain('private directory');
    expect(daemonsForHome(t.home)).toEqual([]);
  });

  it('R-STATE-3 a socket path longer than the platform limit is a clear error, not a crash', async () => {
    const t = tempHome();
    const long = `/tmp/${'s'.repeat(120)}.sock`;
    const result = await t.runCli(['daemon', 'status', '--json'], { env: { ASSENT_SOCKET: long } });
    expect(result.code).toBe(65);
    const doc = JSON.parse(result.stdout) as { error: { type: string; message: string } };
    expect(doc.error.type).toBe('invalid_input');
    expect(doc.error.message).toContain('ASSENT_SOCKET');
    expect(result.stderr).toBe('');
  });
});
