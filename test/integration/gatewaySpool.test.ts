// SPEC §14 audit durability: a gateway killed -9 during a burst of 2,000 allowed
// calls leaves at most 100 ms of them without an audit line once the daemon has
// read its spool. A real `assent mcp` runs in front of a fake upstream that logs
// every call it answers with its own monotonic time; the gateway is killed -9
// half way through the burst; then the calls the upstream answered are compared
// with the audit lines. The daemon reads the spool when the gateway's connection
// closes and once more (to no effect: nothing is audited twice) at its next start.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/base/canonical.js';
import { auditLines, CLI_ENTRY, makeTempHome, type TempHome } from '../helpers/daemon.js';

const CALLS = 2000;
const IN_FLIGHT = 32;
const KILL_AFTER = 1000;
const MAX_UNAUDITED_SPAN_MS = 100;
const FAKE_UPSTREAM = join(import.meta.dirname, 'fixtures', 'countingUpstream.mjs');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The upstream's log: each call it answered, by arguments.n, with the time it answered at. */
function answeredCalls(logFile: string): Map<number, number> {
  const answered = new Map<number, number>();
  if (!existsSync(logFile)) return answered;
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const [n, at] = line.split(' ');
    if (n !== undefined && at !== undefined) answered.set(Number(n), Number(at));
  }
  return answered;
}

/** Audit lines of the fake server's calls, waited for until their number holds still for 300 ms (at most 10 s). */
async function settledAudit(home: TempHome): Promise<Record<string, unknown>[]> {
  let last = -1;
  let stableSince = performance.now();
  const deadline = performance.now() + 10_000;
  for (;;) {
    const lines = auditLines(home).filter((line) => line['server'] === 'counting');
    if (lines.length !== last) {
      last = lines.length;
      stableSince = performance.now();
    } else if (performance.now() - stableSince >= 300 || performance.now() > deadline) {
      return lines;
    }
    await sleep(25);
  }
}

/** Drives `assent mcp` with raw JSON-RPC lines: `IN_FLIGHT` calls outstanding, SIGKILL once `KILL_AFTER` were answered. */
async function burstUntilKilled(gateway: ChildProcess): Promise<number> {
  const stdin = gateway.stdin;
  const stdout = gateway.stdout;
  if (stdin === null || stdout === null) throw new Error('the gateway has no stdio pipes');
  stdin.on('error', () => undefined);
  const waiting = new Map<number, () => void>();
  let buffered = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const message = JSON.parse(line) as { id?: number; error?: unknown };
      if (message.error !== undefined) throw new Error(`the gateway answered an error: ${line}`);
      if (typeof message.id === 'number') waiting.get(message.id)?.();
    }
  });
  const request = (id: number, method: string, params: Record<string, unknown>): Promise<void> =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const exited = new Promise<void>((resolve) => gateway.once('exit', () => resolve()));
  await request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'spool-test', version: '1' } });
  stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  let next = 0;
  let answered = 0;
  let killed = false;
  const worker = async (): Promise<void> => {
    while (next < CALLS && !killed) {
      const n = next++;
      const done = request(n + 1, 'tools/call', { name: 'echo', arguments: { n } });
      await Promise.race([done, exited]);
      if (killed) return;
      answered += 1;
      if (answered === KILL_AFTER) {
        killed = true;
        gateway.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  await exited;
  return answered;
}

describe('a gateway killed -9 in a burst (SPEC §14 audit durability)', () => {
  it(`leaves at most ${MAX_UNAUDITED_SPAN_MS} ms of its allowed calls unaudited once the daemon read its spool, and none audited twice`, async () => {
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    const logFile = join(home.home, 'upstream.log');
    const config = { notifications: false, servers: { counting: { command: process.execPath, args: [FAKE_UPSTREAM, logFile] } }, policy: { default: 'allow' } };
    writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
    const daemon = await home.startDaemon();

    const gateway = spawn(process.execPath, [CLI_ENTRY, 'mcp'], { env: { ...home.env, ASSENT_NO_AUTOSPAWN: '1' }, stdio: ['pipe', 'pipe', 'ignore'] });
    cleanups.push(() => {
      if (gateway.exitCode === null && gateway.signalCode === null) gateway.kill('SIGKILL');
    });
    const answeredByGateway = await burstUntilKilled(gateway);
    expect(answeredByGateway).toBe(KILL_AFTER);

    const audited = await settledAudit(home);
    const upstream = answeredCalls(logFile);
    const digestOfN = new Map<string, number>();
    for (const n of upstream.keys()) digestOfN.set(digestOf({ n }), n);
    const auditedN = audited.map((line) => digestOfN.get(String(line['argsSha256'])));
    // Every audit line is of a call the upstream answered, allowed by policy, and no call is audited twice.
    expect(auditedN.filter((n) => n === undefined)).toEqual([]);
    expect(new Set(auditedN).size).toBe(audited.length);
    expect(audited.every((line) => line['outcome'] === 'ok')).toBe(true);
    const unaudited = [...upstream].filter(([n]) => !auditedN.includes(n)).map(([, at]) => at);
    const span = unaudited.length === 0 ? 0 : Math.max(...unaudited) - Math.min(...unaudited);
    const burst = Math.max(...upstream.values()) - Math.min(...upstream.values());
    // What was answered before the kill is nearly all audited: the spool held it.
    expect(upstream.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(
      { unauditedSpanMs: Math.round(span), unaudited: unaudited.length, answered: upstream.size, burstMs: Math.round(burst) },
      `${unaudited.length} of ${upstream.size} calls the upstream answered over ${burst.toFixed(0)} ms have no audit line`,
    ).toMatchObject({ unauditedSpanMs: expect.toSatisfy((ms: number) => ms <= MAX_UNAUDITED_SPAN_MS) as unknown });

    // The daemon's next start reads the spool once more: nothing is audited twice, and the dead gateway's file is removed.
    daemon.kill('SIGTERM');
    await new Promise((resolve) => daemon.once('exit', resolve));
    await home.startDaemon();
    const again = await settledAudit(home);
    expect(again.length).toBe(audited.length);
    const spoolDir = join(home.home, 'spool');
    expect(readdirSync(spoolDir).filter((name) => name.startsWith(`mcp-${String(gateway.pid)}-`))).toEqual([]);
  }, 60_000);
});
