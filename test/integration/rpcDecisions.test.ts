// Decisions over the daemon socket (hardening 1 and 3): the daemon stamps the
// channel from the head a decision came through, keeps a caller's claim only as
// `claimedChannel`, records the deciding process as the kernel knows it, and caps
// the handoff approvals one session may keep pending.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { REPO_ROOT, makeTempHome, type TempHome, waitForAudit } from '../helpers/daemon.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

async function setup(config: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, ...config }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return client;
}

async function waitForPendingId(client: DaemonClient): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const [first] = await client.call<{ id: string }[]>('approvals.list', {});
    if (first !== undefined) return first.id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no pending approval appeared');
}

/**
 * Decides an approval from a separate headless process (a script without any
 * terminal), claiming `channel`; resolves with that process's pid and its answer.
 */
function decideFromScript(home: TempHome, id: string, behavior: 'allow' | 'deny', channel: string): Promise<{ pid: number; answer: Record<string, unknown> }> {
  const clientModule = join(REPO_ROOT, 'dist', 'heads', 'daemon', 'rpcClient.js');
  const script = `
    const { DaemonClient } = await import(${JSON.stringify(clientModule)});
    const client = await DaemonClient.connect({ socketPath: ${JSON.stringify(home.paths.socket)} });
    const answer = await client.call('approvals.decide', { id: ${JSON.stringify(id)}, behavior: ${JSON.stringify(behavior)}, channel: ${JSON.stringify(channel)} });
    process.stdout.write(JSON.stringify({ pid: process.pid, answer }));
    client.close();
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: home.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`decider exited ${String(code)}: ${stderr}`));
      else resolve(JSON.parse(stdout) as { pid: number; answer: Record<string, unknown> });
    });
  });
}

const PROMPT_WRITE = { servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } };

describe('channel stamping over the socket (hardening 1)', () => {
  it('R-D-4b R-AUD-1 (hardening 1) a headless script claiming "tty" is recorded as channel cli, its claim as claimedChannel, with its own pid from the kernel', async () => {
    const home = await setup(PROMPT_WRITE);
    const gateway = await connect(home);
    const call = gateway.call<{ consent?: { channel: string; approvalId?: string } }>('calls.authorize', {
      sessionId: 's1',
      server: 'fs',
      tool: 'write_file',
      args: { path: '/tmp/x' },
    });
    const id = await waitForPendingId(gateway);
    const { pid, answer } = await decideFromScript(home, id, 'allow', 'tty');
    expect(pid).not.toBe(process.pid);
    // The decision is the head's: a socket client, whatever it says it is.
    expect(answer).toMatchObject({ id, state: 'approved', channel: 'cli' });
    const admitted = await call;
    expect(admitted.consent).toEqual({ channel: 'cli', approvalId: id });

    const events = await gateway.call<{ kind: string; data: Record<string, unknown> }[]>('events.since', { cursor: 0 });
    const resolved = events.find((e) => e.kind === 'approval_resolved' && e.data['id'] === id);
    expect(resolved?.data).toMatchObject({ state: 'approved', channel: 'cli', claimedChannel: 'tty', peer: { source: 'ss+proc', pid, uid: process.getuid?.() } });

    await gateway.call('calls.finish', { callId: (admitted as unknown as { callId: string }).callId, outcome: 'ok' });
    const line = await waitForAudit(home, (r) => r['approvalId'] === id && r['outcome'] === 'ok');
    expect(line).toMatchObject({ channel: 'cli', claimedChannel: 'tty', peer: { source: 'ss+proc', pid } });
    expect(line['channel']).not.toBe('tty');
  });

  it('R-AUD-1 (hardening 1) a denial claiming "elicitation" is audited as channel cli with the claim beside it', async () => {
    const home = await setup(PROMPT_WRITE);
    const gateway = await connect(home);
    const call = gateway.call('calls.authorize', { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/tmp/y' } }).catch((e: unknown) => e);
    const id = await waitForPendingId(gateway);
    const { pid } = await decideFromScript(home, id, 'deny', 'elicitation');
    expect(await call).toMatchObject({ type: 'policy_denied', details: { reason: 'consent_denied', approvalId: id } });
    const line = await waitForAudit(home, (r) => r['approvalId'] === id);
    expect(line).toMatchObject({ outcome: 'consent_denied', channel: 'cli', claimedChannel: 'elicitation', peer: { source: 'ss+proc', pid } });
  });

  it('R-D-4b (hardening 1) proofs.issue over the socket stamps the channel too; a claimed "tty" is only a hint', async () => {
    const home = await setup(PROMPT_WRITE);
    const gateway = await connect(home);
    const call = gateway.call('calls.authorize', { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/tmp/z' } }).catch((e: unknown) => e);
    const id = await waitForPendingId(gateway);
    const operator = await connect(home);
    const issued = await operator.call<{ approval: { channel: string } }>('proofs.issue', { id, channel: 'tty' });
    expect(issued.approval.channel).toBe('cli');
    const proofs = await operator.call<{ approvalId: string; channel: string }[]>('proofs.list', {});
    expect(proofs.find((p) => p.approvalId === id)?.channel).toBe('cli');
    await call;
  });
});

describe('handoff approvals per session are capped (hardening 3)', () => {
  it('R-MCP-8 R-D-6 (hardening 3) a session with 32 pending handoff approvals is refused a 33rd with a typed error saying how many and what to do; other sessions are unaffected; deciding one makes room', async () => {
    const home = await setup({ ...PROMPT_WRITE, approvals: { handoff: true, proofTtlSeconds: 300 } });
    const gateway = await connect(home);
    const file = (sessionId: string, n: number): Promise<{ type?: string; message: string; details?: Record<string, unknown> }> =>
      gateway.call('calls.authorize', { sessionId, server: 'fs', tool: 'write_file', args: { path: `/tmp/f${n}` } }).then(
        () => {
          throw new Error('a handoff prompt call was admitted');
        },
        (e: { type?: string; message: string; details?: Record<string, unknown> }) => e,
      );
    const ids: string[] = [];
    for (let n = 0; n < 32; n += 1) {
      const refused = await file('s1', n);
      expect(refused).toMatchObject({ type: 'policy_denied', details: { reason: 'approval_pending' } });
      ids.push(refused.details?.['approvalId'] as string);
    }
    expect(new Set(ids).size).toBe(32);

    // The identical call of one already filed still reuses its approval.
    expect((await file('s1', 0)).details?.['approvalId']).toBe(ids[0]);

    const over = await file('s1', 32);
    expect(over.type).toBe('limit_reached');
    expect(over.details).toMatchObject({ sessionId: 's1', pending: 32, limit: 32 });
    expect(over.message).toContain('32 handoff approvals');
    expect(over.message).toContain('assent pending');
    expect(over.message).toMatch(/deny/);
    expect((await gateway.call<unknown[]>('approvals.list', {})).length).toBe(32);

    // Another session has its own allowance.
    expect(await file('s2', 0)).toMatchObject({ type: 'policy_denied', details: { reason: 'approval_pending' } });

    // Denying one makes room for one more in s1.
    await gateway.call('approvals.decide', { id: ids[5], behavior: 'deny' });
    expect(await file('s1', 32)).toMatchObject({ type: 'policy_denied', details: { reason: 'approval_pending' } });
    expect((await file('s1', 33)).type).toBe('limit_reached');
  });
});
