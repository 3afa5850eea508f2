// What docs/SECURITY.md says about code running as the same OS user, proven on
// the built daemon: the terminal checks live in the CLI, while the daemon serves
// its socket to any process of the owner and its HTTP API to any paired page or
// bearer token. If one of these stops being true, the docs must change with it.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, REPO_ROOT, type TempHome } from '../helpers/daemon.js';
import { runInTerminal } from '../helpers/pty.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const CONFIG = {
  notifications: false,
  web: { listen: '127.0.0.1:0' },
  servers: { fs: { command: 'true' } },
  policy: { default: 'allow', tools: { 'fs/write_file': 'prompt', 'fs/move_file': 'prompt' } },
};

async function setup(): Promise<{ home: TempHome; client: DaemonClient; url: string }> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(home.home, { mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify(CONFIG), { mode: 0o600 });
  await home.startDaemon();
  const client = await connect(home);
  let url = '';
  await expect
    .poll(async () => {
      const status = await client.call<{ web?: { url?: string | null } }>('daemon.status', {});
      url = status.web?.url ?? '';
      return url;
    })
    .toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  return { home, client, url };
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => client.close());
  return client;
}

/** Files a prompt call the way a gateway does; resolves with how it ended. */
function fileCall(client: DaemonClient, tool: string, args: Record<string, unknown>): Promise<string> {
  return client.call('calls.authorize', { sessionId: 'agent', server: 'fs', tool, args }).then(
    () => 'allowed',
    (error: { details?: Record<string, unknown> }) => `refused:${String(error.details?.['reason'])}`,
  );
}

async function pendingId(client: DaemonClient, tool: string): Promise<string> {
  let id: string | undefined;
  await expect
    .poll(async () => {
      const list = await client.call<{ id: string; tool?: string }[]>('approvals.list', {});
      id = list.find((a) => a.tool === tool)?.id;
      return id;
    })
    .toBeDefined();
  return id as string;
}

function post(url: string, operation: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: `/api/v1/${operation}`, method: 'POST', headers: { host: target.host, 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

interface ManifestEntry {
  name: string;
  class: 'read' | 'write' | 'human-decision';
  exposure: Record<'cli' | 'rpc' | 'http' | 'mcp', true | { rationale: string }>;
}

describe('SECURITY: the daemon, not the CLI, is what a same-user process talks to', () => {
  it('the operations that change something, per head, are exactly the ones docs/SECURITY.md lists', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'operations.json'), 'utf8')) as ManifestEntry[];
    const changing = (head: 'rpc' | 'http' | 'mcp'): string[] =>
      manifest.filter((op) => op.class !== 'read' && op.exposure[head] === true).map((op) => op.name).sort();
    expect(changing('rpc')).toEqual([
      'actions.request',
      'agents.authorize',
      'agents.dialog',
      'agents.finish',
      'approvals.decide',
      'calls.authorize',
      'calls.finish',
      'calls.ingestSpool',
      'calls.record',
      'calls.resume',
      'config.apply',
      'daemon.shutdown',
      'effects.finish',
      'effects.reconcile',
      'passkeys.confirm',
      'passkeys.remove',
      'proofs.consume',
      'proofs.issue',
      'proofs.revoke',
      'rules.add',
      'rules.revoke',
      'sessions.end',
      'sessions.report',
      'tokens.create',
      'tokens.revoke',
      'web.pair',
      'web.revoke',
    ]);
    expect(changing('http')).toEqual([
      'approvals.decide',
      'passkeys.approve',
      'passkeys.challenge',
      'passkeys.enrol',
      'passkeys.register',
      'passkeys.registrationOptions',
      'passkeys.remove',
      'proofs.revoke',
      'rules.add',
      'rules.revoke',
      'tokens.revoke',
      'web.revoke',
    ]);
    expect(changing('mcp')).toEqual([]);
  });

  it('any same-user process, with no terminal, approves, adds a rule, mints a token, pairs a page, issues a proof and applies config over the socket', async () => {
    const { home, client: agent } = await setup();
    expect(process.stdin.isTTY).not.toBe(true);
    const other = await connect(home);

    const waiting = fileCall(agent, 'write_file', { path: '/srv/x' });
    const id = await pendingId(other, 'write_file');
    await other.call('approvals.decide', { id, behavior: 'allow', channel: 'cli' });
    expect(await waiting).toBe('allowed');

    const rule = await other.call<{ id: string }>('rules.add', { tool: 'fs/move_file', args: [] });
    expect(rule.id).toMatch(/^r/);
    expect(await fileCall(agent, 'move_file', {})).toBe('allowed');

    const tokenFile = join(home.home, 'minted.token');
    await other.call('tokens.create', { name: 'minted', ttl: '1h', out: tokenFile });
    expect(readFileSync(tokenFile, 'utf8')).toMatch(/^ast1_/);

    const pairing = await other.call<{ code: string }>('web.pair', {});
    expect(pairing.code).toMatch(/^[a-z]{8}$/);

    const held = fileCall(agent, 'write_file', { path: '/srv/y' });
    const heldId = await pendingId(other, 'write_file');
    const issued = await other.call<{ proof: string }>('proofs.issue', { id: heldId, channel: 'cli' });
    expect(issued.proof).toMatch(/^asp1_/);
    void held;

    const { writeFileSync } = await import('node:fs');
    writeFileSync(home.paths.config, JSON.stringify({ ...CONFIG, policy: { default: 'allow', destructive: 'allow' } }));
    const status = await other.call<{ fileRevision: string; changed: boolean }>('config.status', {});
    expect(status.changed).toBe(true);
    expect(await other.call('config.apply', { revision: status.fileRevision })).toMatchObject({ applied: true });
    expect(await fileCall(agent, 'write_file', { path: '/srv/z' })).toBe('allowed');

    // And the state dir's files are the owner's to read.
    expect(readFileSync(home.paths.journal).length).toBeGreaterThan(0);
  });

  it('the HTTP API serves rules.add and approvals.decide to a bearer token and to a paired page session', async () => {
    const { home, client, url } = await setup();
    const tokenFile = join(home.home, 'api.token');
    await client.call('tokens.create', { name: 'api', ttl: '1h', out: tokenFile });
    const bearer = { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` };

    const byToken = await post(url, 'rules.add', { tool: 'fs/move_file' }, bearer);
    expect(byToken.status, byToken.body).toBe(200);
    const waiting = fileCall(client, 'write_file', { path: '/srv/x' });
    const id = await pendingId(client, 'write_file');
    expect((await post(url, 'approvals.decide', { id, behavior: 'allow' }, bearer)).status).toBe(200);
    expect(await waiting).toBe('allowed');

    const { code } = await client.call<{ code: string }>('web.pair', {});
    const origin = { origin: new URL(url).origin };
    const paired = await post(url, 'pair', { code }, origin);
    expect(paired.status, paired.body).toBe(200);
    const cookie = /assent_session=([^;]+)/.exec(String(paired.headers['set-cookie'] ?? ''))?.[1] ?? '';
    const byPage = await post(url, 'rules.add', { tool: 'fs/write_file' }, { ...origin, cookie: `assent_session=${cookie}` });
    expect(byPage.status, byPage.body).toBe(200);
    expect(await fileCall(client, 'write_file', { path: '/srv/y' })).toBe('allowed');
  });

  it('the typed code is no boundary against a program that allocates a PTY: it reads the code off the screen and approves', async () => {
    const { home, client } = await setup();
    const waiting = fileCall(client, 'write_file', { path: '/srv/x' });
    const id = await pendingId(client, 'write_file');
    // runInTerminal is such a program: node-pty, wait for "Type <code>", type it back.
    const run = await runInTerminal(['approve', id], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(run.exitCode, run.screen).toBe(0);
    expect(await waiting).toBe('allowed');
  });
});
