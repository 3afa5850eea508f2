// R-MCP-8 / R-MCP-9 / R-J-4 through the real stack: an SDK client → the built
// `assent mcp` in handoff mode → @modelcontextprotocol/server-filesystem, with a
// real daemon. The upstream's side effect (the written file) shows whether it
// ever received a call.
import { existsSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { processesForHome, type TempHome } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOKEN = /asp1_[A-Za-z0-9_-]{10,}/;

interface Setup {
  home: TempHome;
  dir: string;
  client: Client;
  operator: DaemonClient;
  gatewayStderr: () => string;
  events: unknown[];
}

async function setup(): Promise<Setup> {
  const { home, dir } = await startFsStack(cleanups, {
    policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } },
    approvals: { handoff: true, proofTtlSeconds: 300 },
  });
  const operator = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => operator.close());
  const events: unknown[] = [];
  operator.onNotification('event', (event) => events.push(event));
  await operator.call('events.subscribe', {});
  const { client, stderr } = await connectGateway(cleanups, home);
  return { home, dir, client, operator, gatewayStderr: stderr, events };
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

function approvalIdIn(result: unknown): string {
  const match = /approval ([abcdefghijkmnopqrstuvwxyz]{5})/.exec(text(result));
  if (match === null) throw new Error(`no approval id in ${text(result)}`);
  return match[1] as string;
}

function auditText(home: TempHome): string {
  if (!existsSync(home.paths.auditDir)) return '';
  return readdirSync(home.paths.auditDir)
    .map((f) => readFileSync(join(home.paths.auditDir, f), 'utf8'))
    .join('\n');
}

describe('handoff mode through the gateway', () => {
  it('R-MCP-8 R-J-4 R-MCP-9 the identical retry runs once, a second identical retry gets the recorded result without the upstream, changed arguments are refused', async () => {
    const { home, dir, client, operator, gatewayStderr, events } = await setup();
    const target = join(dir, 'note.txt');
    const args = { path: target, content: 'handoff body' };

    // 1. The first call returns at once: refused with the approval id, nothing written.
    const first = await client.callTool({ name: 'write_file', arguments: args });
    expect(first.isError).toBe(true);
    expect(text(first)).toMatch(/approval_pending/);
    expect(text(first)).toMatch(/retry this identical call/);
    const id = approvalIdIn(first);
    expect(existsSync(target)).toBe(false);

    // Asking again before approval reuses the same pending approval.
    const again = await client.callTool({ name: 'write_file', arguments: args });
    expect(approvalIdIn(again)).toBe(id);
    expect((await operator.call<unknown[]>('approvals.list', {})).length).toBe(1);

    // 2. The operator approves from another channel; a proof bound to this exact call is issued inside the daemon.
    await operator.call('approvals.decide', { id, behavior: 'allow', channel: 'cli' });
    const proofs = await operator.call<{ approvalId: string; audience: string; state: string }[]>('proofs.list', {});
    expect(proofs).toEqual([expect.objectContaining({ approvalId: id, audience: 'mcp', state: 'issued' })]);

    // 3. Changed arguments do not match: refused with a new approval, not run.
    const changed = await client.callTool({ name: 'write_file', arguments: { ...args, content: 'handoff body!' } });
    expect(changed.isError).toBe(true);
    expect(approvalIdIn(changed)).not.toBe(id);
    expect(existsSync(target)).toBe(false);

    // 4. The identical retry runs once.
    const retry = await client.callTool({ name: 'write_file', arguments: args });
    expect(retry.isError, text(retry)).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('handoff body');

    // 5. A second identical retry returns the recorded result; the upstream is not called (the file stays gone).
    unlinkSync(target);
    const replay = await client.callTool({ name: 'write_file', arguments: args });
    expect(replay).toEqual(retry);
    expect(existsSync(target)).toBe(false);
    // R-AUD-1: the replay is a gated call too, audited as replayed (nothing ran).
    await expect
      .poll(() => auditText(home).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['approvalId'] === id && l['outcome'] === 'ok'))
      .toEqual([expect.not.objectContaining({ replayed: true }), expect.objectContaining({ replayed: true, durationMs: 0 })]);

    const listed = await operator.call<{ approvalId: string; state: string; effectId?: string }[]>('proofs.list', {});
    const used = listed.find((p) => p.approvalId === id);
    expect(used?.state).toBe('consumed');
    for (let i = 0; i < 100; i += 1) {
      const effect = await operator.call<{ state: string }>('effects.get', { id: used!.effectId! });
      if (effect.state !== 'intent') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await operator.call('effects.get', { id: used!.effectId! })).toMatchObject({ state: 'completed', resultDigest: expect.stringMatching(/^v1:sha256:/) });
    const kinds = (events as { kind: string }[]).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['proof_issued', 'proof_consumed']));

    // R-MCP-9 / R-J-7: no token anywhere the agent, the logs or the audit trail can see.
    const procs = processesForHome(home.home).flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/cmdline`, 'latin1'), readFileSync(`/proc/${pid}/environ`, 'latin1')];
      } catch {
        return [];
      }
    });
    expect(procs.length).toBeGreaterThan(0);
    const eventLog = JSON.stringify(await operator.call('events.since', { cursor: 0, limit: 10_000 }));
    for (const haystack of [
      JSON.stringify([first, again, changed, retry, replay]),
      gatewayStderr(),
      JSON.stringify(events),
      eventLog,
      existsSync(home.paths.log) ? readFileSync(home.paths.log, 'utf8') : '',
      auditText(home),
      ...procs,
    ]) {
      expect(haystack).not.toMatch(TOKEN);
    }
  }, 60_000);

  it('R-MCP-8 a denied handoff approval never runs the retry', async () => {
    const { dir, client, operator } = await setup();
    const target = join(dir, 'denied.txt');
    const args = { path: target, content: 'nope' };
    const id = approvalIdIn(await client.callTool({ name: 'write_file', arguments: args }));
    await operator.call('approvals.decide', { id, behavior: 'deny', channel: 'cli' });
    const retry = await client.callTool({ name: 'write_file', arguments: args });
    expect(retry.isError).toBe(true);
    expect(approvalIdIn(retry)).not.toBe(id);
    expect(existsSync(target)).toBe(false);
  }, 60_000);
});
