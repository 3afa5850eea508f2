// The whole loop a user runs: an official SDK client → the built `assent mcp`
// → @modelcontextprotocol/server-filesystem, with a real daemon deciding
// (R-MCP-1, R-MCP-3, R-D-5, R-AUD-1). The upstream's side effect (a written
// file) proves whether it ever received the call.
import { auditLines } from '../helpers/daemon.js';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn as spawnPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import type { TempHome } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';
import { runInTerminal } from '../helpers/pty.js';
import { filesystemBin } from './mcpFixtures.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  home: TempHome;
  dir: string;
  client: Client;
}

async function setup(
  policy: Record<string, unknown>,
  options: { channels?: Record<string, unknown>; onElicit?: (request: { params: Record<string, unknown> }, signal: AbortSignal) => Promise<Record<string, unknown>> } = {},
): Promise<Setup> {
  const { home, dir } = await startFsStack(cleanups, { policy, channels: options.channels ?? {} });
  const onElicit = options.onElicit;
  const { client } = await connectGateway(cleanups, home, [], onElicit === undefined ? {} : { capabilities: { elicitation: {} } }, (c) => {
    if (onElicit !== undefined) c.setRequestHandler(ElicitRequestSchema, (request, extra) => onElicit(request as never, extra.signal) as never);
  });
  return { home, dir, client };
}

async function pendingIds(home: TempHome): Promise<{ id: string; tool: string; args: Record<string, unknown> }[]> {
  for (let i = 0; i < 400; i += 1) {
    const r = await home.runCli(['pending', '--json']);
    const list = (JSON.parse(r.stdout) as { data: { id: string; tool: string; args: Record<string, unknown> }[] }).data;
    if (list.length > 0) return list;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no approval appeared');
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

async function directResult(dir: string, args: Record<string, unknown>): Promise<unknown> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [filesystemBin, dir], env: getDefaultEnvironment(), stderr: 'pipe' }));
  try {
    return await client.callTool({ name: 'write_file', arguments: args });
  } finally {
    await client.close();
  }
}

describe('R-MCP-3 prompt tools wait for the operator', () => {
  it('the call waits, `assent approve ID` releases it, and the result equals the direct result', async () => {
    const { home, dir, client } = await setup({ default: 'allow', tools: { 'fs/write_file': 'prompt' } });
    const target = join(dir, 'approved.txt');
    const args = { path: target, content: 'hello from the agent' };
    const expected = await directResult(dir, args);
    rmSync(target);

    const call = client.callTool({ name: 'write_file', arguments: args }, undefined, { timeout: 60_000 });
    const [pending] = await pendingIds(home);
    expect(pending?.tool).toBe('write_file');
    expect(pending?.args).toEqual(args);
    expect(existsSync(target)).toBe(false);

    expect((await runInTerminal(['approve', pending!.id], { env: { ASSENT_HOME: home.home }, typeCode: true })).exitCode).toBe(0);

    const result = await call;
    expect(result).toEqual(expected);
    expect(readFileSync(target, 'utf8')).toBe('hello from the agent');
    await expect.poll(() => auditLines(home).find((l) => l['approvalId'] === pending!.id), { timeout: 5000 }).toMatchObject({ outcome: 'ok', channel: 'cli', tool: 'write_file' });
    expect(JSON.stringify(auditLines(home))).not.toContain('hello from the agent');
  });

  it('`assent deny ID` gives isError naming consent_denied and the upstream never writes the file', async () => {
    const { home, dir, client } = await setup({ default: 'allow', tools: { 'fs/write_file': 'prompt' } });
    const target = join(dir, 'denied.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'nope' } }, undefined, { timeout: 60_000 });
    const [pending] = await pendingIds(home);
    expect((await home.runCli(['deny', pending!.id, '--reason', 'use the scratch dir'])).code).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('consent_denied');
    expect(text(result)).toContain('use the scratch dir');
    expect(existsSync(target)).toBe(false);
  });

  it('allow and deny are settled from the daemon snapshot and still audited; a new rule reaches the gateway at once', async () => {
    const { home, dir, client } = await setup({ default: 'allow', destructive: 'prompt', tools: { 'fs/move_file': 'deny' } });
    writeFileSync(join(dir, 'a.txt'), 'content');
    const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'a.txt') } });
    expect(read.isError).toBeFalsy();
    const moved = await client.callTool({ name: 'move_file', arguments: { source: join(dir, 'a.txt'), destination: join(dir, 'b.txt') } });
    expect(moved.isError).toBe(true);
    expect(text(moved)).toContain('policy.tools.fs/move_file');
    expect(existsSync(join(dir, 'b.txt'))).toBe(false);
    await expect.poll(() => auditLines(home).map((l) => `${String(l['tool'])}:${String(l['outcome'])}`), { timeout: 5000 }).toEqual(
      expect.arrayContaining(['read_text_file:ok', 'move_file:denied']),
    );

    const added = await runInTerminal(['rules', 'add', '--tool', 'fs/write_file', '--arg', `/path:prefix=${dir}/ok/`, '--json'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(added.exitCode).toBe(0);
    const ruleId = (JSON.parse(added.stdout) as { data: { id: string } }).data.id;
    mkdirSync(join(dir, 'ok'));
    await expect
      .poll(async () => {
        const r = await client.callTool({ name: 'write_file', arguments: { path: join(dir, 'ok', 'r.txt'), content: 'by rule' } }, undefined, { timeout: 3000 }).catch(() => undefined);
        return r !== undefined && !r.isError;
      }, { timeout: 10_000 })
      .toBe(true);
    await expect.poll(() => auditLines(home).some((l) => l['ruleId'] === ruleId && l['channel'] === 'rule'), { timeout: 5000 }).toBe(true);

    // A revoked rule stops matching in the gateway too: the next identical call waits for a human again.
    expect((await home.runCli(['rules', 'revoke', ruleId])).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = client.callTool({ name: 'write_file', arguments: { path: join(dir, 'ok', 'r2.txt'), content: 'after revoke' } }, undefined, { timeout: 60_000 });
    const [waiting] = await pendingIds(home);
    expect(waiting?.tool).toBe('write_file');
    await home.runCli(['deny', waiting!.id]);
    expect((await after).isError).toBe(true);
    expect(existsSync(join(dir, 'ok', 'r2.txt'))).toBe(false);
  });
});

describe('R-D-7 a waiting call survives a daemon crash', () => {
  it('after kill -9 and a restart the gateway re-attaches, the same approval is approved, and the call completes once', async () => {
    const { home, dir, client } = await setup({ default: 'allow', tools: { 'fs/write_file': 'prompt' } });
    const target = join(dir, 'after-crash.txt');
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'survived' } }, undefined, { timeout: 60_000 });
    const [pending] = await pendingIds(home);
    process.kill(Number(readFileSync(home.paths.pid, 'utf8').trim()), 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await home.startDaemon();
    const [again] = await pendingIds(home);
    expect(again?.id).toBe(pending!.id);

    expect((await runInTerminal(['approve', pending!.id], { env: { ASSENT_HOME: home.home }, typeCode: true })).exitCode).toBe(0);

    const result = await call;
    expect(result.isError, text(result)).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('survived');
    await expect.poll(() => auditLines(home).filter((l) => l['approvalId'] === pending!.id && l['outcome'] === 'ok').length, { timeout: 5000 }).toBe(1);
  });
});

describe('R-D-6 a cancelled call withdraws its approval', () => {
  it('the client cancels a waiting call: the approval leaves the queue, is audited withdrawn (R-AUD-1), and the upstream never runs it', async () => {
    const { home, dir, client } = await setup({ default: 'allow', tools: { 'fs/write_file': 'prompt' } });
    const target = join(dir, 'cancelled.txt');
    const abort = new AbortController();
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: 'never' } }, undefined, { timeout: 60_000, signal: abort.signal });
    const [pending] = await pendingIds(home);
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect
      .poll(async () => (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] }).data.length, { timeout: 5000 })
      .toBe(0);
    await expect.poll(() => auditLines(home).find((l) => l['approvalId'] === pending!.id), { timeout: 5000 }).toMatchObject({ outcome: 'withdrawn', deniedReason: 'cancelled' });
    const late = await home.runCli(['deny', pending!.id]);
    expect(late.code).toBe(65);
    expect(existsSync(target)).toBe(false);
  });
});

describe('R-MCP-6 elicitation channel', () => {
  it('an accepting client gets the call through, audited as a socket decision (channel cli) claiming elicitation, with the gateway as peer', async () => {
    const forms: string[] = [];
    const { home, dir, client } = await setup(
      { default: 'allow', tools: { 'fs/write_file': 'prompt' } },
      {
        channels: { elicitation: true },
        onElicit: async (request) => {
          forms.push(String(request.params['message']));
          return { action: 'accept', content: { approve: true } };
        },
      },
    );
    const target = join(dir, 'elicited.txt');
    const result = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'via form \u202e' } }, undefined, { timeout: 60_000 });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('via form \u202e');
    expect(forms).toHaveLength(1);
    expect(forms[0]).toContain('via form \\u202e');
    expect(forms[0]).toContain(target);
    // The gateway decides over the socket like any client: the daemon stamps `cli` and keeps the gateway's word as a hint (hardening 1).
    await expect
      .poll(() => auditLines(home).find((l) => l['tool'] === 'write_file'), { timeout: 5000 })
      .toMatchObject({ channel: 'cli', claimedChannel: 'elicitation', outcome: 'ok', peer: { source: 'ss+proc' } });
  });

  it('when the operator answers by CLI first, the pending elicitation is cancelled', async () => {
    let cancelled = false;
    let asked = false;
    const { home, dir, client } = await setup(
      { default: 'allow', tools: { 'fs/write_file': 'prompt' } },
      {
        channels: { elicitation: true },
        onElicit: (_request, signal) => {
          asked = true;
          return new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              cancelled = true;
              resolve({ action: 'cancel' });
            });
          });
        },
      },
    );
    const call = client.callTool({ name: 'write_file', arguments: { path: join(dir, 'x.txt'), content: 'x' } }, undefined, { timeout: 60_000 });
    const [pending] = await pendingIds(home);
    await expect.poll(() => asked, { timeout: 5000 }).toBe(true);
    expect((await home.runCli(['deny', pending!.id])).code).toBe(0);
    const result = await call;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('consent_denied');
    await expect.poll(() => cancelled, { timeout: 5000 }).toBe(true);
  });
});

describe('R-MCP-7 tty channel', () => {
  it('a waiting call is also offered on the controlling terminal; RUN <challenge> there approves it (channel cli, claimed tty)', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } }, channels: { tty: true } });
    const out = join(home.home, 'result.json');
    const target = join(dir, 'tty.txt');
    let screen = '';
    const pty = spawnPty(process.execPath, [join(import.meta.dirname, 'fixtures', 'mcpCallOnce.mjs'), out, 'write_file', JSON.stringify({ path: target, content: 'typed RUN' })], {
      name: 'xterm',
      cols: 200,
      rows: 50,
      env: { ...process.env, ASSENT_HOME: home.home } as Record<string, string>,
    });
    cleanups.push(() => {
      try {
        pty.kill('SIGKILL');
      } catch {
        // already gone
      }
    });
    pty.onData((data) => (screen += data));
    const exited = new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
    await expect.poll(() => /"RUN ([0-9a-f]{8})"/.exec(screen)?.[1], { timeout: 15_000 }).toBeDefined();
    expect(screen).toContain('fs/write_file');
    expect(screen).toContain(target);
    pty.write(`RUN ${/"RUN ([0-9a-f]{8})"/.exec(screen)?.[1]}\r`);
    expect(await exited).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as { isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('typed RUN');
    await expect
      .poll(() => auditLines(home).find((l) => l['tool'] === 'write_file'), { timeout: 5000 })
      .toMatchObject({ channel: 'cli', claimedChannel: 'tty', outcome: 'ok', peer: { source: 'ss+proc' } });
  });
});
