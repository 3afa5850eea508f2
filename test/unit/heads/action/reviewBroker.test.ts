// The review broker's loopback listener in-process: the token line and the
// first JSON-RPC line may share a packet, wrong tokens and second connections
// are closed, oversize lines end the connection, and the broker ends (and
// removes its endpoint file) when the client leaves, on a signal or at its lifetime.
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refusalReport } from '../../../../src/exec/report.js';
import { createExecuteSelectedServer } from '../../../../src/heads/action/executeSelected.js';
import { BrokerSignals, lifetimeFromEnv, BROKER_LIFETIME_MS, startReviewBroker } from '../../../../src/heads/action/reviewBroker.js';
import type { ReviewBrokerOptions, RunningBroker } from '../../../../src/heads/action/reviewBroker.js';

let dir: string;
const open: Array<{ broker: RunningBroker; signals: EventEmitter }> = [];
const sockets: Socket[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-broker-'));
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const { broker, signals } of open.splice(0)) {
    signals.emit('SIGTERM');
    await broker.ended;
  }
  rmSync(dir, { recursive: true, force: true });
});

async function start(overrides: Partial<ReviewBrokerOptions> = {}): Promise<{ broker: RunningBroker; said: string[]; endpoint: string; token: string; signals: EventEmitter }> {
  const said: string[] = [];
  const signals = new EventEmitter();
  const endpoint = join(dir, 'endpoint.json');
  const broker = await startReviewBroker({
    endpointPath: endpoint,
    createServer: () => createExecuteSelectedServer(async () => refusalReport('policy-deny'), 'test'),
    say: (text) => said.push(text),
    processSignals: signals,
    confirmationSignals: new BrokerSignals(),
    ...overrides,
  });
  open.push({ broker, signals });
  const { token } = JSON.parse(readFileSync(endpoint, 'utf8')) as { token: string };
  return { broker, said, endpoint, token, signals };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** Connects, writes `payload`, and collects what arrives until the broker closes or `until` matches. */
function exchange(port: number, payload: string | Buffer, until?: RegExp): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    let text = '';
    socket.on('connect', () => socket.write(payload));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (until?.test(text)) resolve({ text, closed: false });
    });
    socket.on('close', () => resolve({ text, closed: true }));
  });
}

describe('startReviewBroker', () => {
  it('SPEC §6 answers a JSON-RPC line that arrives in the same packet as the token', async () => {
    const { broker, token } = await start();
    const { text, closed } = await exchange(broker.port, `${token}\n${INITIALIZE}\n`, /"id":1/);
    expect(closed).toBe(false);
    expect(JSON.parse(text.trim())).toMatchObject({ id: 1, result: { serverInfo: { name: 'assent-action' } } });
  });

  it('SPEC §6 a wrong token is closed without an answer; the right client still gets in', async () => {
    const { broker, token, said } = await start();
    const wrong = await exchange(broker.port, `${'0'.repeat(64)}\n${INITIALIZE}\n`);
    expect(wrong).toEqual({ text: '', closed: true });
    expect(said.join('')).toContain('wrong token');
    const right = await exchange(broker.port, `${token}\n${INITIALIZE}\n`, /"id":1/);
    expect(right.closed).toBe(false);
  });

  it('SPEC §6 a second connection is closed even with the right token', async () => {
    const { broker, token } = await start();
    await exchange(broker.port, `${token}\n${INITIALIZE}\n`, /"id":1/);
    const second = await exchange(broker.port, `${token}\n${INITIALIZE}\n`);
    expect(second).toEqual({ text: '', closed: true });
  });

  it('a line over 1 MiB closes the connection and ends the broker', async () => {
    const { broker, token, said } = await start();
    const huge = Buffer.concat([Buffer.from(`${token}\n`), Buffer.alloc(1024 * 1024 + 10, 0x61)]);
    const result = await exchange(broker.port, huge);
    expect(result.closed).toBe(true);
    expect(await broker.ended).toBe('client-closed');
    expect(said.join('')).toContain('over 1 MiB');
  });

  it('SPEC §6 ends when the client leaves and removes the unchanged endpoint file', async () => {
    const { broker, token, endpoint } = await start();
    const socket = connect({ host: '127.0.0.1', port: broker.port });
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      socket.write(`${token}\n`);
      setTimeout(() => socket.end(), 50);
    });
    expect(await broker.ended).toBe('client-closed');
    expect(existsSync(endpoint)).toBe(false);
  });

  it('SPEC §6 ends on a signal and at its lifetime', async () => {
    const first = await start();
    first.signals.emit('SIGINT');
    expect(await first.broker.ended).toBe('signal');
    rmSync(first.endpoint, { force: true });
    const second = await start({ lifetimeMs: 30 });
    expect(await second.broker.ended).toBe('lifetime');
    expect(existsSync(second.endpoint)).toBe(false);
  });

  it('SPEC §6 the lifetime override can only shorten the 15 minutes', () => {
    expect(BROKER_LIFETIME_MS).toBe(15 * 60_000);
    expect(lifetimeFromEnv({})).toBe(BROKER_LIFETIME_MS);
    expect(lifetimeFromEnv({ ASSENT_TEST_REVIEW_LIFETIME_MS: '1500' })).toBe(1500);
    expect(lifetimeFromEnv({ ASSENT_TEST_REVIEW_LIFETIME_MS: '9999999' })).toBe(BROKER_LIFETIME_MS);
    expect(lifetimeFromEnv({ ASSENT_TEST_REVIEW_LIFETIME_MS: 'abc' })).toBe(BROKER_LIFETIME_MS);
  });
});
