// The daemon gate on its own, with a scripted daemon connection: what it does
// with its audit batch (hardening 2, R-AUD-3) and with a lost connection
// (hardening 1, R-D-5: no decision from an old snapshot, a kept backlog).
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../../../src/core/base/canonical.js';
import { AssentError } from '../../../../src/core/base/errors.js';
import type { DaemonClient } from '../../../../src/heads/daemon/rpcClient.js';
import { connectDaemonGate, type DaemonGate, type DaemonGateOptions } from '../../../../src/heads/mcp/daemonGate.js';
import { DEFAULT_CONFIG } from '../../../../src/core/config/config.js';
import { compilePolicy } from '../../../../src/core/policy/toolPolicy.js';
import { localPolicyGate, type GateCall } from '../../../../src/heads/mcp/gate.js';
import { startGateway } from '../../../../src/heads/mcp/gateway.js';
import { LineLink } from '../../../../src/heads/mcp/lineLink.js';
import type { Logger } from '../../../../src/service/logger.js';
import { CallsRecordParamsSchema, isSettledCall, toAuditRecord } from '../../../../src/operations/settledCalls.js';

type Handler = (params: Record<string, unknown>) => unknown;

/** One scripted daemon connection: answers by method, records every call, can be closed like a dying daemon. */
class FakeConnection {
  closed = false;
  readonly sent: { method: string; params: Record<string, unknown> }[] = [];
  private readonly accepted: Record<string, unknown>[] = [];
  private readonly rejects = new Set<(error: unknown) => void>();
  private readonly closeListeners: (() => void)[] = [];
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();

  constructor(private readonly handlers: Record<string, Handler>) {}

  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    if (this.closed) return Promise.reject(new AssentError('unavailable', 'closed', { details: { reason: 'closed' } }));
    this.sent.push({ method, params });
    return new Promise<T>((resolve, reject) => {
      this.rejects.add(reject);
      Promise.resolve()
        .then(() => (this.handlers[method] ?? (() => ({})))(params))
        .then(
          (value) => {
            if (value === NEVER) return;
            this.rejects.delete(reject);
            if (method === 'calls.record') this.accepted.push(...(params['records'] as Record<string, unknown>[]));
            resolve(value as T);
          },
          (error: unknown) => {
            this.rejects.delete(reject);
            reject(error);
          },
        );
    });
  }

  onNotification(method: string, listener: (params: unknown) => void): () => void {
    let set = this.listeners.get(method);
    if (set === undefined) this.listeners.set(method, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  onClose(listener: () => void): void {
    if (this.closed) queueMicrotask(listener);
    else this.closeListeners.push(listener);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const reject of this.rejects) reject(new AssentError('unavailable', 'the daemon closed the connection', { details: { reason: 'closed' } }));
    this.rejects.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  notify(method: string, params: unknown): void {
    for (const listener of this.listeners.get(method) ?? []) listener(params);
  }

  /** Every audit record the daemon took with calls.record. */
  records(): Record<string, unknown>[] {
    return [...this.accepted];
  }

  asClient(): DaemonClient {
    return this as unknown as DaemonClient;
  }
}

/** A handler answer that never comes: a daemon that is frozen or has died without closing yet. */
const NEVER = Symbol('never');

function daemon(policy: { default?: string; tools?: Record<string, string>; toolRisk?: Record<string, string> } = {}, extra: Record<string, Handler> = {}): FakeConnection {
  const fullPolicy = { default: policy.default ?? 'allow', destructive: 'allow', tools: policy.tools ?? {}, consentTimeoutSeconds: 90, ...(policy.toolRisk ? { toolRisk: policy.toolRisk } : {}) };
  return new FakeConnection({
    'config.get': () => ({ revision: 'v1:sha256:r', path: '/home/me/.assent/config.json', config: { servers: {}, policy: fullPolicy, channels: { elicitation: false, tty: false } } }),
    'policy.get': () => ({ revision: 'v1:sha256:r', path: '/home/me/.assent/config.json', policy: fullPolicy, rules: [] }),
    'calls.record': (params) => ({ recorded: (params['records'] as unknown[]).length }),
    ...extra,
  });
}

function call(tool: string, args: Record<string, unknown> = {}): GateCall {
  return { sessionId: 's1', server: 'fs', tool, args, caller: {}, signal: new AbortController().signal, annotations: { readOnlyHint: true } };
}

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = {
  debug: (message, fields) => lines.push({ level: 'debug', message, ...(fields ? { fields } : {}) }),
  info: (message, fields) => lines.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
  warn: (message, fields) => lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
  error: (message, fields) => lines.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
  child: () => logger,
};

const gates: DaemonGate[] = [];
afterEach(async () => {
  for (const gate of gates.splice(0)) await gate.close?.();
  lines.length = 0;
});

async function gateOn(first: FakeConnection, options: Partial<DaemonGateOptions> = {}): Promise<DaemonGate> {
  const gate = await connectDaemonGate({ client: first.asClient(), sessionId: 's1', logger, reconnectDelayMs: { first: 5, max: 20 }, ...options });
  gates.push(gate);
  return gate;
}

/** Runs one locally allowed call through the gate and reports its end. */
async function runAllowed(gate: DaemonGate, tool: string, args: Record<string, unknown>): Promise<void> {
  const decision = await gate.authorize(call(tool, args));
  expect(decision.allowed).toBe(true);
  if (decision.allowed && decision.callId !== undefined) gate.finish?.(decision.callId, { ok: true, durationMs: 1 });
}

function deeplyNested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let node = root;
  for (let i = 0; i < depth; i += 1) {
    const child: Record<string, unknown> = {};
    node['a'] = child;
    node = child;
  }
  return root;
}

describe('R-AUD-3 the gateway audit batch survives bad records (hardening 2)', () => {
  it('arguments the canonicalizer rejects (a lone surrogate, very deep nesting) never throw in the batch timer; the rest of the batch is recorded', async () => {
    const conn = daemon();
    const gate = await gateOn(conn);
    await runAllowed(gate, 'first', { a: 1 });
    await runAllowed(gate, 'surrogate', { s: '\ud800' });
    await runAllowed(gate, 'deep', deeplyNested(100_000));
    await runAllowed(gate, 'last', { b: 2 });
    await expect.poll(() => conn.records().map((r) => r['tool']), { timeout: 2000 }).toEqual(['first', 'last']);
    expect(conn.records().map((r) => r['argsSha256'])).toEqual([digestOf({ a: 1 }), digestOf({ b: 2 })]);
    expect(gate.auditDropped).toBe(2);
    expect(gate.auditBacklog).toBe(0);
    const logged = lines.filter((l) => l.level === 'error' && l.message.includes('not audited'));
    expect(logged[0]?.fields).toMatchObject({ server: 'fs', tool: 'surrogate' });
    expect(JSON.stringify(lines)).not.toContain('\ud800');
  });

  it('a batch the daemon refuses is retried record by record: only the refused record is dropped', async () => {
    const conn = daemon({}, {
      'calls.record': (params) => {
        const records = params['records'] as Record<string, unknown>[];
        if (records.some((r) => r['tool'] === 'refused')) throw new AssentError('invalid_params', 'records.0.tool: too long');
        return { recorded: records.length };
      },
    });
    const gate = await gateOn(conn);
    await runAllowed(gate, 'one', { n: 1 });
    await runAllowed(gate, 'refused', { n: 2 });
    await runAllowed(gate, 'three', { n: 3 });
    await expect.poll(() => conn.records().map((r) => r['tool']), { timeout: 2000 }).toEqual(['one', 'three']);
    expect(gate.auditDropped).toBe(1);
  });
});

describe('R-AUD-3 audit batches stay large under load', () => {
  it('calls settled while a batch is in flight wait for the next flush timer, not for the reply', async () => {
    const replies: (() => void)[] = [];
    const conn = daemon({}, {
      'calls.record': (params) => new Promise((resolve) => replies.push(() => resolve({ recorded: (params['records'] as unknown[]).length }))),
    });
    const armed: (() => void)[] = [];
    const timers = {
      setTimeout: (callback: () => void) => (armed.push(callback), callback),
      clearTimeout: (handle: unknown) => {
        const index = armed.indexOf(handle as () => void);
        if (index !== -1) armed.splice(index, 1);
      },
    };
    const fire = (): void => {
      for (const callback of armed.splice(0)) callback();
    };
    const gate = await gateOn(conn, { timers });
    const batches = (): number[] => conn.sent.filter((c) => c.method === 'calls.record').map((c) => (c.params['records'] as unknown[]).length);
    await runAllowed(gate, 'first', { n: 1 });
    fire();
    await expect.poll(() => replies.length).toBe(1);
    for (let n = 2; n <= 5; n += 1) await runAllowed(gate, 'later', { n });
    replies.shift()?.();
    await expect.poll(() => conn.records().length).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    // The four later calls are not sent on the heels of the reply: they wait for the armed timer.
    expect(batches()).toEqual([1]);
    expect(armed).toHaveLength(1);
    fire();
    await expect.poll(() => replies.length).toBe(1);
    replies.shift()?.();
    await expect.poll(() => conn.records().length).toBe(5);
    expect(batches()).toEqual([1, 4]);
  });
});

describe('R-AUD-3 (issue 10 item 3) the audit of a burst waits for the burst to end', () => {
  function fakeTimers(): { timers: DaemonGateOptions['timers']; fire: () => void; armed: (() => void)[] } {
    const armed: (() => void)[] = [];
    return {
      armed,
      timers: {
        setTimeout: (callback: () => void) => (armed.push(callback), callback),
        clearTimeout: (handle: unknown) => {
          const index = armed.indexOf(handle as () => void);
          if (index !== -1) armed.splice(index, 1);
        },
      },
      fire: () => {
        for (const callback of armed.splice(0)) callback();
      },
    };
  }
  const batches = (conn: FakeConnection): number[] => conn.sent.filter((c) => c.method === 'calls.record').map((c) => (c.params['records'] as unknown[]).length);

  it('while an allowed call is still running, finished calls are not sent; once none runs, they go in one batch', async () => {
    const conn = daemon();
    const { timers, fire, armed } = fakeTimers();
    const gate = await gateOn(conn, { timers });
    const running = await gate.authorize(call('long', { n: 0 }));
    for (let n = 1; n <= 3; n += 1) await runAllowed(gate, 'quick', { n });
    for (let tick = 0; tick < 10; tick += 1) fire();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches(conn)).toEqual([]);
    expect(armed).toHaveLength(1);
    if (running.allowed && running.callId !== undefined) gate.finish?.(running.callId, { ok: true, durationMs: 5 });
    fire();
    await expect.poll(() => conn.records().length).toBe(4);
    expect(batches(conn)).toEqual([4]);
  });

  it('a call that never ends holds the audit back for at most 50 timer periods', async () => {
    const conn = daemon();
    const { timers, fire } = fakeTimers();
    const gate = await gateOn(conn, { timers });
    await gate.authorize(call('hung', {}));
    await runAllowed(gate, 'quick', { n: 1 });
    for (let tick = 0; tick < 50; tick += 1) fire();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches(conn)).toEqual([]);
    fire();
    await expect.poll(() => conn.records().length).toBe(1);
  });

  it('large arguments are digested at once rather than held: the record keeps no arguments while it waits', async () => {
    const conn = daemon();
    const { timers, fire } = fakeTimers();
    const gate = await gateOn(conn, { timers });
    await gate.authorize(call('hung', {}));
    const big = { content: 'x'.repeat(1000) };
    const decision = await gate.authorize({ ...call('write', big), argsSize: 9 * 1024 * 1024 });
    if (decision.allowed && decision.callId !== undefined) gate.finish?.(decision.callId, { ok: true, durationMs: 1 });
    big.content = 'changed after the call';
    for (let tick = 0; tick < 51; tick += 1) fire();
    await expect.poll(() => conn.records().length).toBe(1);
    expect(conn.records()[0]?.['argsSha256']).toBe(digestOf({ content: 'x'.repeat(1000) }));
  });
});

describe('R-D-5 a lost daemon connection (hardening 1)', () => {
  it('the batch in flight when the connection dropped is kept and sent to the next daemon', async () => {
    const frozen = daemon({}, { 'calls.record': () => NEVER });
    const next = daemon();
    let connected: FakeConnection | undefined;
    const gate = await gateOn(frozen, {
      reconnect: () => {
        connected = next;
        return Promise.resolve(next.asClient());
      },
    });
    await runAllowed(gate, 'before_loss', { n: 1 });
    await runAllowed(gate, 'before_loss', { n: 2 });
    await expect.poll(() => frozen.sent.some((c) => c.method === 'calls.record'), { timeout: 2000 }).toBe(true);
    frozen.close();
    await expect.poll(() => connected === next && next.records().length, { timeout: 2000 }).toBe(2);
    expect(next.records().map((r) => r['argsSha256'])).toEqual([digestOf({ n: 1 }), digestOf({ n: 2 })]);
    expect(gate.auditBacklog).toBe(0);
  });

  it('without a connection every call is refused (unavailable, naming the reconnect); never decided from the old snapshot; the new daemon decides after', async () => {
    const old = daemon({ default: 'allow' });
    const next = daemon({ default: 'allow', tools: { 'fs/write_file': 'deny' } });
    let release: (() => void) | undefined;
    const gate = await gateOn(old, {
      gapWaitMs: 50,
      reconnectHint: 'auto-spawn is off',
      reconnect: () => new Promise<DaemonClient>((resolve) => (release = () => resolve(next.asClient()))),
    });
    expect(await gate.authorize(call('write_file'))).toMatchObject({ allowed: true });
    old.close();
    const refused = await gate.authorize(call('write_file'));
    expect(refused).toMatchObject({ allowed: false, reason: 'unavailable' });
    expect(refused.allowed ? '' : refused.message).toMatch(/reconnecting \(auto-spawn is off\)/);
    expect(gate.attached).toBe(false);
    await expect.poll(() => release !== undefined, { timeout: 2000 }).toBe(true);
    release?.();
    await expect.poll(() => gate.attached, { timeout: 2000 }).toBe(true);
    const denied = await gate.authorize(call('write_file'));
    expect(denied).toMatchObject({ allowed: false, reason: 'policy' });
    expect(await gate.authorize(call('read_file'))).toMatchObject({ allowed: true });
  });

  it('R-HOOK-13 reports the tool names it offers with sessions.report, once per change, and again to a new daemon after a reconnect', async () => {
    const old = daemon();
    const next = daemon();
    const gate = await gateOn(old, { reconnect: () => Promise.resolve(next.asClient()) });
    const reports = (connection: FakeConnection) =>
      connection.sent.filter((sent) => sent.method === 'sessions.report' && (sent.params['tools'] as unknown[]).length > 0).map((sent) => sent.params['tools']);
    gate.toolsListed?.('fs', ['write_file', 'read_file']);
    gate.toolsOffered?.(['write_file', 'read_file']);
    await expect.poll(() => reports(old)).toEqual([['read_file', 'write_file']]);
    gate.toolsOffered?.(['read_file', 'write_file']);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reports(old)).toHaveLength(1);
    old.close();
    await expect.poll(() => reports(next), { timeout: 2000 }).toEqual([['read_file', 'write_file']]);
  });

  it('a call arriving in the gap waits briefly and is decided by the new daemon when it comes back in time', async () => {
    const old = daemon({ default: 'allow' });
    const next = daemon({ default: 'deny' });
    let attempts = 0;
    const gate = await gateOn(old, {
      gapWaitMs: 5000,
      reconnect: () => {
        attempts += 1;
        return attempts < 3 ? Promise.reject(new AssentError('unavailable', 'not yet')) : Promise.resolve(next.asClient());
      },
    });
    old.close();
    expect(await gate.authorize(call('read_file'))).toMatchObject({ allowed: false, reason: 'policy' });
    expect(attempts).toBe(3);
  });

  it('the kept backlog is bounded: beyond maxAuditBacklog records are dropped, counted and logged; the rest reach the next daemon', async () => {
    const old = daemon();
    const next = daemon();
    let release: (() => void) | undefined;
    const gate = await gateOn(old, {
      maxAuditBacklog: 3,
      reconnect: () => new Promise<DaemonClient>((resolve) => (release = () => resolve(next.asClient()))),
    });
    const decisions = [];
    for (let n = 0; n < 5; n += 1) decisions.push(await gate.authorize(call('running', { n })));
    old.close();
    for (const decision of decisions) if (decision.allowed && decision.callId !== undefined) gate.finish?.(decision.callId, { ok: true, durationMs: 1 });
    expect(gate.auditBacklog).toBe(3);
    expect(gate.auditDropped).toBe(2);
    expect(lines.some((l) => l.level === 'error' && l.message.includes('backlog is full'))).toBe(true);
    await expect.poll(() => release !== undefined, { timeout: 2000 }).toBe(true);
    release?.();
    await expect.poll(() => next.records().length, { timeout: 2000 }).toBe(3);
  });
});

describe('R-MCP-5 a gateway that started without a daemon attaches to one later (hardening pin 2)', () => {
  /** A detached gate whose fallback is the confirmed policy: read_file allowed, delete denied, write_file prompt. */
  function detachedGate(reconnect: () => Promise<DaemonClient>, options: Partial<DaemonGateOptions> = {}): Promise<DaemonGate> {
    const policy = { ...DEFAULT_CONFIG.policy, default: 'allow' as const, tools: { 'fs/delete': 'deny' as const, 'fs/write_file': 'prompt' as const } };
    const fallback = localPolicyGate(compilePolicy(policy, []), { configPath: '/home/me/.assent/config.json (as last confirmed)', noChannelHint: 'no daemon' });
    return connectDaemonGate({
      sessionId: 's1',
      logger,
      reconnectDelayMs: { first: 5, max: 20 },
      gapWaitMs: 200,
      reconnect,
      detached: { started: { config: { ...DEFAULT_CONFIG, policy }, revision: 'v1:sha256:c', path: '/home/me/.assent/config.json' }, fallback },
      ...options,
    }).then((gate) => {
      gates.push(gate);
      return gate;
    });
  }

  it('decides by its fallback until a daemon runs, keeps retrying with backoff, then files prompts with the daemon and sends the audit records it kept', async () => {
    const daemons: { up?: FakeConnection } = {};
    let attempts = 0;
    const gate = await detachedGate(() => {
      attempts += 1;
      return daemons.up === undefined ? Promise.reject(new AssentError('unavailable', 'no daemon')) : Promise.resolve(daemons.up.asClient());
    });
    expect(gate.attached).toBe(false);
    await runAllowed(gate, 'read_file', { p: 1 });
    expect(await gate.authorize(call('delete'))).toMatchObject({ allowed: false, reason: 'policy' });
    expect(await gate.authorize(call('write_file'))).toMatchObject({ allowed: false, reason: 'no_consent_channel' });
    await expect.poll(() => attempts, { timeout: 2000 }).toBeGreaterThan(3);

    const up = daemon({ default: 'allow', tools: { 'fs/write_file': 'prompt' } }, { 'calls.authorize': () => ({ callId: 'c1' }) });
    daemons.up = up;
    // A prompt call does not wait out the backoff: it tries now and is decided by the daemon.
    expect(await gate.authorize(call('write_file'))).toMatchObject({ allowed: true, callId: 'c1' });
    expect(gate.attached).toBe(true);
    expect(up.sent.some((c) => c.method === 'calls.authorize')).toBe(true);
    // What the fallback settled is audited by the daemon it attached to, and so is the prompt it could not ask (R-AUD-1).
    await expect
      .poll(() => up.records().map((r) => `${String(r['tool'])}:${String(r['outcome'])}:${String(r['deniedReason'])}`), { timeout: 2000 })
      .toEqual(['read_file:ok:undefined', 'delete:denied:policy', 'write_file:denied:no_consent_channel']);
    // From now on the daemon's policy decides, not the fallback's: delete is allowed there.
    expect(await gate.authorize(call('delete'))).toMatchObject({ allowed: true });
    expect(lines.some((l) => l.message.includes('attached to the assent daemon'))).toBe(true);
  });

  it('until it attaches, the upstream tool lists go to the fallback, which checks them against the configuration it decides by', async () => {
    const seen: string[] = [];
    const fallback = { authorize: () => Promise.resolve({ allowed: true as const }), toolsListed: (server: string, tools: readonly string[]) => void seen.push(`${server}:${tools.join(',')}`) };
    const gate = await connectDaemonGate({
      sessionId: 's1',
      logger,
      reconnectDelayMs: { first: 5, max: 20 },
      reconnect: () => Promise.reject(new AssentError('unavailable', 'no daemon')),
      detached: { started: { config: DEFAULT_CONFIG, revision: 'v1:sha256:c', path: '/c.json' }, fallback },
    });
    gates.push(gate);
    gate.toolsListed?.('fs', ['read_file']);
    expect(seen).toEqual(['fs:read_file']);
  });

  it('a detached gate that never finds a daemon keeps refusing prompts with its fallback text and closes cleanly', async () => {
    const gate = await detachedGate(() => Promise.reject(new AssentError('unavailable', 'no daemon')), { gapWaitMs: 30 });
    const refused = await gate.authorize(call('write_file'));
    expect(refused).toMatchObject({ allowed: false, reason: 'no_consent_channel' });
    expect(refused.allowed ? '' : refused.message).toContain('no daemon');
    await gate.close?.();
    expect(gate.attached).toBe(false);
  });
});

describe('a call cancelled while the gate decides (hardening 19.8a)', () => {
  it('a tools/call and its cancellation in one read: the allow that comes after is withdrawn, audited cancelled, and no call stays open in the gate', async () => {
    const connection = daemon();
    const gate = await gateOn(connection);
    const [clientIn, clientOut, upstreamIn, upstreamOut] = [new PassThrough(), new PassThrough(), new PassThrough(), new PassThrough()];
    const gateway = await startGateway({
      clientTransport: new LineLink(clientIn, clientOut, { peer: 'the MCP client' }),
      upstreams: [{ alias: 'fs', command: 'unused' }],
      gate,
      logger,
      createUpstreamTransport: () => new LineLink(upstreamOut, upstreamIn, { peer: 'MCP server "fs"' }),
    });
    const toUpstream: Record<string, unknown>[] = [];
    upstreamIn.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter(Boolean)) {
        const message = JSON.parse(line) as Record<string, unknown>;
        toUpstream.push(message);
        if (message['method'] === 'tools/list') {
          upstreamOut.write(`${JSON.stringify({ jsonrpc: '2.0', id: message['id'], result: { tools: [{ name: 'write_file', inputSchema: { type: 'object' } }] } })}\n`);
        }
      }
    });
    let fromGateway = '';
    clientOut.setEncoding('utf8').on('data', (chunk: string) => (fromGateway += chunk));
    try {
      clientIn.write('{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
      await expect.poll(() => fromGateway).toContain('write_file');
      // Both lines arrive in one chunk: the cancellation is read before the gate's allow is heard.
      clientIn.write('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/srv/big","content":"x"}}}\n{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n');
      await expect.poll(() => connection.records().map((record) => `${String(record['tool'])}:${String(record['outcome'])}`)).toEqual(['write_file:cancelled']);
      expect(gate.openCalls).toBe(0);
      expect(toUpstream.filter((message) => message['method'] === 'tools/call')).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});

describe('R-AUD-1 calls the gateway settles from its snapshot name the policy key that decided', () => {
  it('an allow by policy.default and a deny by a tool entry reach the daemon with their key, audited as ruleId without a consent channel', async () => {
    const conn = daemon({ default: 'allow', tools: { 'fs/move_file': 'deny' } });
    const gate = await gateOn(conn);
    await runAllowed(gate, 'read_file', {});
    expect((await gate.authorize(call('move_file'))).allowed).toBe(false);
    await expect.poll(() => conn.records().length, { timeout: 2000 }).toBe(2);
    const records = conn.records();
    expect(records.map((r) => [r['tool'], r['policyKey']])).toEqual([
      ['read_file', 'policy.default'],
      ['move_file', 'policy.tools.fs/move_file'],
    ]);
    expect(CallsRecordParamsSchema.safeParse({ records }).success).toBe(true);
    for (const record of records) {
      expect(isSettledCall(record)).toBe(true);
      const line = toAuditRecord(CallsRecordParamsSchema.parse({ records: [record] }).records[0]!, '2026-03-01T10:00:00.000Z', 'me@laptop');
      expect(line.ruleId).toBe(record['policyKey']);
      expect(line.channel).toBeUndefined();
    }
  });
});

describe('R-POL-10 R-AUD-4 calls the gateway settles carry a risk level, as the daemon rates the calls it decides', () => {
  it('a read-only tool is low and a tool without annotations elevated; the audit line has the level, never unrated', async () => {
    const conn = daemon({ default: 'allow' });
    const gate = await gateOn(conn);
    await runAllowed(gate, 'read_file', {});
    const unannotated = await gate.authorize({ ...call('write_file'), annotations: undefined } as unknown as GateCall);
    if (unannotated.allowed && unannotated.callId !== undefined) gate.finish?.(unannotated.callId, { ok: true, durationMs: 1 });
    await expect.poll(() => conn.records().length, { timeout: 2000 }).toBe(2);
    expect(conn.records().map((r) => [r['tool'], r['risk']])).toEqual([
      ['read_file', 'low'],
      ['write_file', 'elevated'],
    ]);
    for (const record of conn.records()) {
      expect(isSettledCall(record)).toBe(true);
      const line = toAuditRecord(CallsRecordParamsSchema.parse({ records: [record] }).records[0]!, '2026-03-01T10:00:00.000Z', 'me@laptop');
      expect(line.risk).toBe(record['risk']);
    }
  });

  it('a tool its server calls destructive is high, one that writes without destroying elevated, and policy.toolRisk replaces either', async () => {
    const conn = daemon({ default: 'allow', toolRisk: { 'fs/query': 'high', 'fs/remove': 'low' } });
    const gate = await gateOn(conn);
    const run = async (tool: string, annotations: GateCall['annotations']): Promise<void> => {
      const decision = await gate.authorize({ ...call(tool), annotations } as GateCall);
      expect(decision.allowed).toBe(true);
      if (decision.allowed && decision.callId !== undefined) gate.finish?.(decision.callId, { ok: true, durationMs: 1 });
    };
    await run('delete', { destructiveHint: true });
    await run('append', { destructiveHint: false });
    await run('query', { readOnlyHint: true });
    await run('remove', { destructiveHint: true });
    await expect.poll(() => conn.records().length, { timeout: 2000 }).toBe(4);
    expect(conn.records().map((r) => [r['tool'], r['risk']])).toEqual([
      ['delete', 'high'],
      ['append', 'elevated'],
      ['query', 'high'],
      ['remove', 'low'],
    ]);
  });
});
