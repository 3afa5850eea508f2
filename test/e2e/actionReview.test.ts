// `assent action review` in a real PTY (the operator's terminal) with the
// official SDK client reaching it through `assent action connect`: a fresh
// `RUN <challenge>` per call, one authenticated connection, a private endpoint
// file removed on exit, and a revision binding that a file change revokes.
import { connect } from 'node:net';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PtySession } from '../helpers/pty.js';
import { makeActionDir, onlyReport, runPiped, sentinelAction, writePolicy, writeRequest } from './actionFixtures.js';
import type { ActionDir } from './actionFixtures.js';
import { assentBin, requireBuild } from './mcpFixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => requireBuild());

interface Broker {
  d: ActionDir;
  endpoint: string;
  pty: PtySession;
}

function setup(decision: 'ask' | 'deny' | 'allow' = 'ask'): ActionDir {
  const d = makeActionDir();
  cleanups.push(() => d.cleanup());
  const action = sentinelAction(d);
  writeRequest(d, action);
  if (decision === 'deny') writePolicy(d, 'ask', [{ action, decision: 'deny' }]);
  else if (decision === 'allow') writePolicy(d, 'deny', [{ action, decision: 'allow' }]);
  else writePolicy(d, 'deny', [{ action, decision: 'ask' }]);
  return d;
}

async function startBroker(d: ActionDir, env: Record<string, string> = {}): Promise<Broker> {
  const endpoint = join(d.dir, 'endpoint.json');
  const pty = new PtySession(['action', 'review', d.policy, d.request, endpoint], { outFile: d.out, env });
  cleanups.push(() => pty.kill());
  await pty.waitFor(/review broker listening/);
  return { d, endpoint, pty };
}

async function connectClient(endpoint: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [assentBin, 'action', 'connect', endpoint],
    env: getDefaultEnvironment(),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => undefined);
  const client = new Client({ name: 'review-test', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

/** Waits for the next challenge shown after `from` characters of screen. */
async function nextChallenge(pty: PtySession, from: number): Promise<string> {
  await pty.waitFor(new RegExp(`[\\s\\S]{${from}}[\\s\\S]*"RUN ([0-9a-f]{8})"`));
  const match = pty.screen.slice(from).match(/"RUN ([0-9a-f]{8})"/);
  return (match as RegExpMatchArray)[1] as string;
}

function reportOf(result: unknown): Record<string, unknown> {
  const first = (result as CallToolResult).content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text) as Record<string, unknown>;
}

/** Opens a raw TCP connection, sends `firstLine`, and resolves with what came back before the broker closed it. */
function rawAttempt(port: number, firstLine: string, then = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the broker kept the connection open'));
    }, 8000);
    socket.on('connect', () => socket.write(`${firstLine}\n${then}`));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

function readEndpoint(path: string): { port: number; token: string } {
  return JSON.parse(readFileSync(path, 'utf8')) as { port: number; token: string };
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`;

describe('assent action review (SPEC §6)', () => {
  it('SPEC §6 the endpoint file is a 0600 regular file holding schemaVersion, port and a 256-bit hex token', async () => {
    const { endpoint } = await startBroker(setup('ask'));
    const stat = statSync(endpoint);
    expect(stat.isFile()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    const content = JSON.parse(readFileSync(endpoint, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(content).sort()).toEqual(['port', 'schemaVersion', 'token']);
    expect(content['schemaVersion']).toBe(1);
    expect(content['token']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('SPEC §6 every execute_selected call shows the preview and needs a fresh RUN <challenge>; a wrong answer runs nothing; the endpoint is removed on exit', async () => {
    const b = await startBroker(setup('ask'));
    const client = await connectClient(b.endpoint);

    let from = b.pty.screen.length;
    const first = client.callTool({ name: 'execute_selected', arguments: {} });
    const c1 = await nextChallenge(b.pty, from);
    expect(b.pty.screen.slice(from)).toContain('"executable": "/bin/sh"');
    b.pty.type(`RUN ${c1}\r`);
    const r1 = await first;
    expect(r1.isError).toBe(false);
    expect(reportOf(r1)).toMatchObject({ decision: 'allow', authorization: 'operator-confirmed', policyDecision: 'ask', reason: 'child-exited' });
    expect(b.d.sentinelLines()).toBe(1);

    from = b.pty.screen.length;
    const second = client.callTool({ name: 'execute_selected', arguments: {} });
    const c2 = await nextChallenge(b.pty, from);
    expect(c2).not.toBe(c1);
    b.pty.type(`RUN ${c1}\r`); // the previous challenge is not an answer to this one
    const r2 = await second;
    expect(r2.isError).toBe(true);
    expect(reportOf(r2)).toMatchObject({ decision: 'deny', reason: 'confirmation-denied', execution: { state: 'not-started' } });
    expect(b.d.sentinelLines()).toBe(1);

    from = b.pty.screen.length;
    const third = client.callTool({ name: 'execute_selected', arguments: {} });
    b.pty.type(`RUN ${await nextChallenge(b.pty, from)}\r`);
    expect((await third).isError).toBe(false);
    expect(b.d.sentinelLines()).toBe(2);

    const text = JSON.stringify([r1, r2]);
    expect(text).not.toContain(b.d.dir);

    await client.close();
    const { exitCode } = await b.pty.finish(b.d.out);
    expect(exitCode).toBe(0);
    expect(existsSync(b.endpoint)).toBe(false);
  });

  it('a call the client cancels withdraws its prompt; the late answer runs nothing and the next call gets a fresh challenge', async () => {
    const b = await startBroker(setup('ask'));
    const client = await connectClient(b.endpoint);
    let from = b.pty.screen.length;
    const controller = new AbortController();
    const withdrawn = client.callTool({ name: 'execute_selected', arguments: {} }, undefined, { signal: controller.signal });
    withdrawn.catch(() => undefined);
    const stale = await nextChallenge(b.pty, from);
    controller.abort();
    await b.pty.waitFor(/withdrew call 1/);
    b.pty.type(`RUN ${stale}\r`);
    await expect(withdrawn).rejects.toThrow();
    // Let the broker read (and drop) the stale answer before the next prompt opens; on a loaded
    // machine it could otherwise arrive late and be taken, and refused, as the next answer.
    await new Promise((resolve) => setTimeout(resolve, 500));
    from = b.pty.screen.length;
    const next = client.callTool({ name: 'execute_selected', arguments: {} });
    const fresh = await nextChallenge(b.pty, from);
    expect(fresh).not.toBe(stale);
    expect(b.d.sentinelLines()).toBe(0);
    b.pty.type(`RUN ${fresh}\r`);
    expect((await next).isError).toBe(false);
    expect(b.d.sentinelLines()).toBe(1);
  });

  it('SPEC §6 a wrong token is refused and the broker keeps waiting for the right client', async () => {
    const b = await startBroker(setup('ask'));
    const { port, token } = readEndpoint(b.endpoint);
    const wrong = token.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    expect(await rawAttempt(port, wrong, INITIALIZE)).toBe('');
    await b.pty.waitFor(/wrong token and was closed/);
    const client = await connectClient(b.endpoint);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['execute_selected']);
  });

  it('SPEC §6 a second connection is refused, even with the right token', async () => {
    const b = await startBroker(setup('ask'));
    const client = await connectClient(b.endpoint);
    await client.listTools();
    const { port, token } = readEndpoint(b.endpoint);
    expect(await rawAttempt(port, token, INITIALIZE)).toBe('');
    await b.pty.waitFor(/refused another connection/);
    // The first client is still served.
    expect((await client.listTools()).tools).toHaveLength(1);
  });

  it('SPEC §6 a deny decision answers without any prompt', async () => {
    const b = await startBroker(setup('deny'));
    const client = await connectClient(b.endpoint);
    const from = b.pty.screen.length;
    const result = await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(result.isError).toBe(true);
    expect(reportOf(result)).toMatchObject({ decision: 'deny', reason: 'policy-deny' });
    expect(b.pty.screen.slice(from)).not.toContain('RUN ');
    expect(b.d.sentinelLines()).toBe(0);
  });

  it('R-TTY-7 a change to the request file revokes the binding for the rest of the connection, even after it is restored', async () => {
    const b = await startBroker(setup('ask'));
    const client = await connectClient(b.endpoint);
    const original = readFileSync(b.d.request);
    writeFileSync(b.d.request, original.toString('utf8').replace('"args"', '"args" ').trimEnd() + ' ');
    const changed = await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(reportOf(changed)).toMatchObject({ reason: 'configuration-changed' });
    writeFileSync(b.d.request, original);
    const from = b.pty.screen.length;
    const after = await client.callTool({ name: 'execute_selected', arguments: {} });
    expect(reportOf(after)).toMatchObject({ reason: 'configuration-changed' });
    expect(b.pty.screen.slice(from)).not.toContain('RUN ');
    expect(b.d.sentinelLines()).toBe(0);
  });

  it('R-TTY-1 without a terminal it refuses with terminal-required and writes no endpoint file', async () => {
    const d = setup('ask');
    const endpoint = join(d.dir, 'endpoint.json');
    const result = await runPiped(['action', 'review', d.policy, d.request, endpoint]);
    expect(result.code).toBe(2);
    expect(onlyReport(result.stdout)).toMatchObject({ reason: 'terminal-required' });
    expect(existsSync(endpoint)).toBe(false);
  });

  it('SPEC §6 an existing endpoint path is never replaced', async () => {
    const d = setup('ask');
    const endpoint = join(d.dir, 'endpoint.json');
    writeFileSync(endpoint, 'keep me');
    const pty = new PtySession(['action', 'review', d.policy, d.request, endpoint], { outFile: d.out });
    cleanups.push(() => pty.kill());
    const { exitCode, stdout } = await pty.finish(d.out);
    expect(exitCode).toBe(2);
    expect(onlyReport(stdout)).toMatchObject({ reason: 'preparation-failed' });
    expect(readFileSync(endpoint, 'utf8')).toBe('keep me');
  });

  it('SPEC §6 Ctrl+C stops the broker; an endpoint file replaced meanwhile is left alone', async () => {
    const b = await startBroker(setup('ask'));
    writeFileSync(b.endpoint, '{"replaced":true}');
    b.pty.type('\x03');
    const { exitCode } = await b.pty.finish(b.d.out);
    expect(exitCode).toBe(0);
    expect(readFileSync(b.endpoint, 'utf8')).toBe('{"replaced":true}');
  });

  it('Ctrl+D while no prompt is open stops the broker and removes the endpoint file', async () => {
    const b = await startBroker(setup('ask'));
    const client = await connectClient(b.endpoint);
    await client.listTools();
    b.pty.type('\x04');
    const { exitCode } = await b.pty.finish(b.d.out);
    expect(exitCode).toBe(0);
    expect(b.pty.screen).toContain('terminal input ended');
    expect(existsSync(b.endpoint)).toBe(false);
  });

  it('assent action connect refuses an endpoint file that is not 0600', async () => {
    const d = setup('ask');
    const endpoint = join(d.dir, 'endpoint.json');
    writeFileSync(endpoint, JSON.stringify({ schemaVersion: 1, port: 9, token: 'a'.repeat(64) }), { mode: 0o644 });
    const result = await runPiped(['action', 'connect', endpoint]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not 600');
    expect(result.stdout).toBe('');
  });

  it('SPEC §6 a connection that sends no token within 3 s is closed and the broker keeps waiting', async () => {
    const b = await startBroker(setup('ask'));
    const { port } = readEndpoint(b.endpoint);
    const silent = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port });
      let received = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('the broker kept a silent connection open'));
      }, 10_000);
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(received);
      });
    });
    expect(silent).toBe('');
    await b.pty.waitFor(/no token within 3 s/);
    const client = await connectClient(b.endpoint);
    expect((await client.listTools()).tools).toHaveLength(1);
  });

  it('SPEC §6 the broker ends by itself at the end of its lifetime and removes the endpoint file', async () => {
    const b = await startBroker(setup('ask'), { ASSENT_TEST_REVIEW_LIFETIME_MS: '1500' });
    const { exitCode } = await b.pty.finish(b.d.out);
    expect(exitCode).toBe(0);
    expect(b.pty.screen).toContain('lifetime');
    expect(existsSync(b.endpoint)).toBe(false);
  });
});
