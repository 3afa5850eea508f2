// R-STATE-1 / SPEC §16: the client talks only to a daemon socket owned by its
// own user, so another local user cannot answer in the daemon's place.
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function listen(path: string): Promise<Server> {
  const server = createServer((socket) => socket.end());
  cleanups.push(() => server.close());
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

describe('socket ownership', () => {
  it.skipIf(process.getuid?.() !== 0)('a socket owned by another user is refused before anything is sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-own-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'impostor.sock');
    await listen(path);
    chownSync(path, 65534, 65534);
    const failure = await DaemonClient.connect({ socketPath: path, autoSpawn: false, timeoutMs: 2000 }).then(
      () => undefined,
      (error: { type?: string; message: string }) => error,
    );
    expect(failure?.type).toBe('state_insecure');
    expect(failure?.message).toContain(path);
    expect(failure?.message).toContain('not a socket owned by you');
  });

  it.skipIf(process.getuid?.() !== 0)('a plain file of another user at the socket path is refused, never cleared', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-own-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'daemon.sock');
    (await import('node:fs')).writeFileSync(path, 'planted');
    chownSync(path, 65534, 65534);
    const failure = await DaemonClient.connect({ socketPath: path, autoSpawn: false, timeoutMs: 2000 }).then(
      () => undefined,
      (error: { type?: string }) => error,
    );
    expect(failure?.type).toBe('state_insecure');
    expect((await import('node:fs')).readFileSync(path, 'utf8')).toBe('planted');
  });
});
