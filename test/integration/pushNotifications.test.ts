// Push notifications from a real daemon (R-REM-4, R-REM-7; issue 13 item 4): a
// local HTTP receiver started here gets one ntfy JSON publish and one webhook
// post per approval request, naming tool, approval id, host and link, and the
// raw bytes it received hold no argument, preview, pairing code or assent
// credential. A receiver that never answers, and one that is down, never hold
// up the call, and daemon status counts their failures.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { runHook, shellEvent } from '../helpers/hook.js';
import { runCliInTerminal } from '../helpers/pty.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

interface Receiver {
  url: string;
  received: Received[];
  /** Every byte that arrived on any connection: request lines, headers and bodies. */
  raw: () => string;
  /** Requests held open, unanswered (the slow receiver). */
  held: ServerResponse[];
  close: () => Promise<void>;
}

const cleanups = cleanupsAfterEach();

/** An HTTP receiver on 127.0.0.1 that answers 200, or (slow) never answers. */
async function startReceiver(mode: 'ok' | 'slow'): Promise<Receiver> {
  const received: Received[] = [];
  const chunks: Buffer[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const body: Buffer[] = [];
    request.on('data', (chunk: Buffer) => body.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: JSON.parse(Buffer.concat(body).toString('utf8')) as Record<string, unknown> });
      if (mode === 'slow') held.push(response);
      else response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"id":"x"}');
    });
  });
  server.on('connection', (socket) => socket.on('data', (chunk: Buffer) => chunks.push(chunk)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const close = async (): Promise<void> => {
    for (const response of held) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${address.port}`, received, raw: () => Buffer.concat(chunks).toString('utf8'), held, close };
}

/** A port nothing listens on: bound, then released. */
async function downPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startHome(notifications: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(
    home.paths.config,
    JSON.stringify({ notifications, web: { listen: '127.0.0.1:0' }, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } }),
    { mode: 0o600 },
  );
  await home.startDaemon();
  return home;
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => client.close());
  return client;
}

interface Status {
  web: { url: string };
  approvals: { notifications: { sent: number; failures: number; targets: Record<string, { sent: number; failures: number; lastFailure?: string }> } };
}

async function status(home: TempHome): Promise<Status> {
  return (JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: Status }).data;
}

async function pendingIds(home: TempHome): Promise<string[]> {
  return (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((approval) => approval.id);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('R-REM-4 push notifications from the daemon (remote 4)', () => {
  it('R-REM-4 R-REM-7 each approval request → one ntfy publish and one webhook post with tool, id, host and link; no argument, preview, code or credential in the bytes', async () => {
    const ntfy = await startReceiver('ok');
    const hook = await startReceiver('ok');
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    const tokenFile = join(home.home, 'ntfy-token');
    writeFileSync(tokenFile, 'tk_NTFY_ONLY_IN_AUTH\n', { mode: 0o600 });
    writeFileSync(
      home.paths.config,
      JSON.stringify({
        notifications: { os: false, ntfy: { url: ntfy.url, topic: 'assent-test', tokenFile }, webhook: { url: `${hook.url}/hooks/T0/SECRETPATH`, format: 'json' } },
        web: { listen: '127.0.0.1:0' },
        servers: { fs: { command: 'true' } },
        policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } },
      }),
      { mode: 0o600 },
    );
    await home.startDaemon();
    const web = await runCliInTerminal(home, ['web', '--json']);
    const pairing = (JSON.parse(web.stdout) as { data: { code: string; url: string } }).data;
    const page = (await status(home)).web.url;
    expect(page).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const host = hostname();

    // 1. A gateway call, its arguments holding a marker.
    const client = await connect(home);
    const call = client.call('calls.authorize', { sessionId: 's-push', server: 'fs', tool: 'write_file', args: { path: '/tmp/ARG-PATH-MARKER', content: 'ARG-CONTENT-MARKER' } }).catch((error: unknown) => error);
    const [first] = await waitFor('the first approval', async () => ((await pendingIds(home)).length === 1 ? pendingIds(home) : undefined));
    await waitFor('the first pushes', () => (ntfy.received.length >= 1 && hook.received.length >= 1 ? true : undefined));
    expect(ntfy.received).toHaveLength(1);
    expect(hook.received).toHaveLength(1);
    const publish = ntfy.received[0] as Received;
    expect(publish.path).toBe('/');
    expect(publish.headers['authorization']).toBe('Bearer tk_NTFY_ONLY_IN_AUTH');
    expect(publish.body).toMatchObject({ topic: 'assent-test', click: `${page}#/approvals/${first}` });
    // R-POL-10: the level first; a tool without annotations is destructive, so elevated.
    expect(String(publish.body['title'])).toBe(`assent: risk elevated: fs/write_file waits for approval on ${host}`);
    expect(String(publish.body['message'])).toBe(`${first}: risk elevated (destructive): fs/write_file on ${host} ${page}#/approvals/${first}`);
    const post = hook.received[0] as Received;
    expect(post.path).toBe('/hooks/T0/SECRETPATH');
    expect(post.headers['authorization']).toBeUndefined();
    expect(post.body).toMatchObject({ host, count: 1, approvals: [{ id: first, server: 'fs', tool: 'write_file', risk: { level: 'elevated', flags: ['destructive'] }, host, link: `${page}#/approvals/${first}` }] });
    await home.runCli(['deny', first as string]);
    await call;

    // 2. An agent's shell action: the push names the agent and its tool, never the command (the preview).
    const waiting = runHook(['claude-code'], shellEvent('claude-code', 'curl -s https://PREVIEW-MARKER.example/x | sudo tee /etc/x', { session_id: 'push-session', cwd: '/work/project' }), home.env);
    const second = await waitFor('the agent approval', async () => (await pendingIds(home)).find((id) => id !== first));
    await waitFor('the second pushes', () => (ntfy.received.length >= 2 && hook.received.length >= 2 ? true : undefined));
    expect(ntfy.received).toHaveLength(2);
    expect(hook.received).toHaveLength(2);
    // The level and the flags that raised it, never the program that did (`curl`).
    expect(String(ntfy.received[1]?.body['title'])).toMatch(new RegExp(`^assent: risk (elevated|high): claude-code claude/Bash waits for approval on ${host}$`));
    const [{ risk, ...entry } = {}] = hook.received[1]?.body['approvals'] as Record<string, unknown>[];
    expect(entry).toEqual({ id: second, agent: 'claude-code', server: 'claude', tool: 'Bash', host, link: `${page}#/approvals/${second}` });
    expect(['elevated', 'high']).toContain((risk as { level: string }).level);
    await home.runCli(['deny', second]);
    await waiting;

    const bytes = ntfy.raw() + hook.raw();
    for (const secret of ['ARG-PATH-MARKER', 'ARG-CONTENT-MARKER', 'PREVIEW-MARKER', 'curl', pairing.code, 'asp1_', 'ast1_', 'Cookie', 'argsSha256', 'sha256:']) {
      expect(bytes, secret).not.toContain(secret);
    }
    // The ntfy token goes to ntfy, once per publish, in its Authorization header only.
    expect(ntfy.raw().split('tk_NTFY_ONLY_IN_AUTH').length - 1).toBe(2);
    expect(hook.raw()).not.toContain('tk_NTFY_ONLY_IN_AUTH');
    const counted = (await status(home)).approvals.notifications;
    expect(counted.targets).toEqual({ ntfy: { sent: 2, failures: 0 }, webhook: { sent: 2, failures: 0 } });
  });

  it('R-REM-4 R-REM-7 a receiver that never answers and one that is down never hold up the call; daemon status counts both (human and --json)', async () => {
    const slow = await startReceiver('slow');
    const down = await downPort();
    const home = await startHome({ os: false, ntfy: { url: slow.url, topic: 'slow-topic' }, webhook: { url: `http://127.0.0.1:${down}/hook`, format: 'slack' } });
    const client = await connect(home);
    const call = client.call('calls.authorize', { sessionId: 's-slow', server: 'fs', tool: 'write_file', args: { content: 'x' } }).then(
      () => 'allowed',
      (error: { type?: string }) => error.type,
    );
    const [id] = await waitFor('the approval', async () => ((await pendingIds(home)).length === 1 ? pendingIds(home) : undefined));
    // The slow receiver holds the publish open; the call is decided and answered meanwhile.
    await waitFor('the held publish', () => (slow.held.length === 1 ? true : undefined));
    await home.runCli(['deny', id as string]);
    expect(await call).toBe('policy_denied');
    expect(slow.held).toHaveLength(1);
    expect(slow.held[0]?.writableEnded).toBe(false);

    // After the 5 s timeout the publish counts as failed; the refused webhook failed at once.
    const counted = await waitFor('the counted failures', async () => {
      const targets = (await status(home)).approvals.notifications.targets;
      return (targets['ntfy']?.failures ?? 0) >= 1 && (targets['webhook']?.failures ?? 0) >= 1 ? (await status(home)).approvals.notifications : undefined;
    });
    expect(counted.targets['ntfy']).toEqual({ sent: 0, failures: 1, lastFailure: 'no answer within 5 s' });
    expect(counted.targets['webhook']).toEqual({ sent: 0, failures: 1, lastFailure: 'connection failed (ECONNREFUSED)' });
    expect(counted.failures).toBe(2);
    const human = (await home.runCli(['daemon', 'status'])).stdout;
    expect(human).toMatch(/notifications\.targets\.ntfy\.failures\s+1/);
    expect(human).toMatch(/notifications\.targets\.webhook\.lastFailure\s+connection failed \(ECONNREFUSED\)/);
    expect(human).not.toContain(String(down));
    expect(human).not.toContain('slow-topic');
  }, 30_000);
});
