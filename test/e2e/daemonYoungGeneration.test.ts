// SPEC §14: ten thousand waiting calls within 120 MB. The built daemon holds V8's
// young generation at the size its start-up reached once it listens
// (src/service/youngGeneration.ts): a burst of calls that all wait for a
// person, each of which survives V8's scavenges, leaves it as it was. The same
// burst against a daemon left to V8's default (ASSENT_YOUNG_GENERATION=grow)
// grows it, so the check can fail.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { VERSION } from '../../src/version.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';

const WAITING = 3_000;
const homes: TempHome[] = [];
const sockets: Socket[] = [];
const clients: DaemonClient[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const client of clients.splice(0)) client.close();
  await Promise.all(homes.splice(0).map((home) => home.cleanup()));
});

/** Sends the handshake and `count` waiting calls on raw connections; their replies are never read. */
async function sendWaitingCalls(socketPath: string, count: number): Promise<void> {
  const perConnection = 1_000;
  for (let first = 0; first < count; first += perConnection) {
    const socket = createConnection(socketPath);
    sockets.push(socket);
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const lines = [JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'daemon.hello', params: { version: VERSION } })];
    for (let i = first; i < Math.min(count, first + perConnection); i += 1) {
      const params = { sessionId: `s${i % 50}`, server: 'fs', tool: 'write_file', args: { path: `/srv/data/file-${i}.txt`, content: 'x'.repeat(64) } };
      lines.push(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'calls.authorize', params }));
    }
    socket.write(`${lines.join('\n')}\n`);
  }
}

interface Status {
  approvals: { pendingApprovals: number };
  memory: { youngGenerationMb: number; rssMb: number };
}

/** The young generation's size at idle and after WAITING calls wait, for a daemon started with `extraEnv`. */
async function youngGenerationAcrossBurst(extraEnv: NodeJS.ProcessEnv): Promise<{ idle: number; after: number }> {
  const t = makeTempHome();
  homes.push(t);
  mkdirSync(t.home, { mode: 0o700 });
  writeFileSync(t.paths.config, JSON.stringify({ notifications: false, policy: { default: 'prompt', consentTimeoutSeconds: 600 } }), { mode: 0o600 });
  await t.startDaemon(extraEnv);
  const client = await DaemonClient.connect({ socketPath: t.paths.socket, autoSpawn: false });
  clients.push(client);
  const idle = (await client.call<Status>('daemon.status', {})).memory.youngGenerationMb;
  await sendWaitingCalls(t.paths.socket, WAITING);
  let status = await client.call<Status>('daemon.status', {});
  const deadline = performance.now() + 60_000;
  while (status.approvals.pendingApprovals < WAITING && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = await client.call<Status>('daemon.status', {});
  }
  expect(status.approvals.pendingApprovals).toBe(WAITING);
  return { idle, after: status.memory.youngGenerationMb };
}

describe('the daemon holds V8 young generation (SPEC §14 memory)', () => {
  it(`keeps it at its start-up size while ${WAITING} calls wait, where V8's default grows it`, async () => {
    const held = await youngGenerationAcrossBurst({});
    expect(held.idle).toBeGreaterThan(0);
    expect(held.after).toBe(held.idle);
    const grown = await youngGenerationAcrossBurst({ ASSENT_YOUNG_GENERATION: 'grow' });
    expect(grown.after, JSON.stringify({ held, grown })).toBeGreaterThan(grown.idle);
  }, 120_000);
});
