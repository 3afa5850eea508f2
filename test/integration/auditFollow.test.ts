// R-AUD-5: `assent audit --follow --json` prints a new record within 1 s of the
// call's end and keeps going across a daemon restart (it reads the day files).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { CLI_ENTRY, makeTempHome, type TempHome } from '../helpers/daemon.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function call(client: DaemonClient, tool: string): Promise<number> {
  const { callId } = await client.call<{ callId: string }>('calls.authorize', { sessionId: 's-follow', server: 'fs', tool, args: {}, annotations: { readOnlyHint: true } });
  await client.call('calls.finish', { callId, outcome: 'ok' });
  return performance.now();
}

describe('R-AUD-5 assent audit --follow', () => {
  it('prints each new record as NDJSON within 1 s of the call\u2019s end, across a daemon restart', async () => {
    const home: TempHome = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } } }), { mode: 0o600 });
    await home.startDaemon();
    let client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    await call(client, 'before');

    const follower: ChildProcess = spawn(process.execPath, [CLI_ENTRY, 'audit', '--follow', '--json'], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => {
      follower.kill('SIGKILL');
    });
    const seen: { record: Record<string, unknown>; at: number }[] = [];
    let buffered = '';
    follower.stdout!.setEncoding('utf8').on('data', (text: string) => {
      buffered += text;
      for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
        seen.push({ record: JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>, at: performance.now() });
        buffered = buffered.slice(newline + 1);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 500));

    const first = await call(client, 'first');
    await expect.poll(() => seen.find((s) => s.record['tool'] === 'first'), { timeout: 3000, interval: 20 }).toBeDefined();
    const firstDelay = seen.find((s) => s.record['tool'] === 'first')!.at - first;
    expect(firstDelay).toBeLessThan(1000);

    // Restart the daemon; the follower keeps going.
    await client.call('daemon.shutdown', {});
    client.close();
    await expect.poll(() => existsSync(home.paths.pid), { timeout: 5000 }).toBe(false);
    await home.startDaemon();
    client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    const second = await call(client, 'second');
    await expect.poll(() => seen.find((s) => s.record['tool'] === 'second'), { timeout: 3000, interval: 20 }).toBeDefined();
    const secondDelay = seen.find((s) => s.record['tool'] === 'second')!.at - second;
    expect(secondDelay).toBeLessThan(1000);

    // Only lines written after it started, in order, each as written (seq and prev included).
    expect(seen.map((s) => s.record['tool'])).toEqual(['first', 'second']);
    expect(typeof seen[0]!.record['seq']).toBe('number');
    expect(follower.exitCode).toBeNull();
    console.info(`R-AUD-5 follow: first record ${firstDelay.toFixed(0)} ms after the call's end, after a restart ${secondDelay.toFixed(0)} ms`);
  }, 30_000);
});
