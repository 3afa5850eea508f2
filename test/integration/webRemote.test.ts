// Reaching the page from another device (issue 13 items 1-3), against a real
// `assent daemon run` (built binary, temp ASSENT_HOME):
// - R-REM-2 a non-loopback web.listen without web.tls is refused, naming web.tls;
// - R-REM-1 behind a TLS-terminating proxy started here (node:tls in front of the
//   daemon's loopback port) the names of web.publicUrl and web.allowedHosts are
//   served with Secure cookies, any other Host or Origin is refused and changes nothing;
// - R-REM-3 a remembered device survives `assent daemon stop` and a restart, and
//   `assent web revoke` (headless) ends its event stream within a second; its next call is 401.
import { runCliInTerminal } from '../helpers/pty.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { loadTlsMaterial } from '../../src/heads/http/tlsCertificate.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { runHook, shellEvent } from '../helpers/hook.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();

const PHONE_UA = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function homeWith(config: Record<string, unknown>): TempHome {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, ...config }), { mode: 0o600 });
  return home;
}

async function daemonUrl(home: TempHome): Promise<string> {
  const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { web: { url: string } } };
  return status.data.web.url;
}

async function pairingCode(home: TempHome): Promise<{ url: string; code: string }> {
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  return (JSON.parse(web.stdout) as { data: { url: string; code: string } }).data;
}

/** One plain HTTP request to the daemon's loopback port with exactly these headers. */
function sendHttp(url: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function cookieOf(reply: Reply): string {
  const header = (reply.headers['set-cookie'] ?? []).join('\n');
  const match = /assent_session=([^;]+)/.exec(header);
  expect(match).not.toBeNull();
  return `assent_session=${match?.[1] ?? ''}`;
}

/** An open SSE stream: resolves `ready` on the first event, `ended` when the server ends it. */
function openEvents(url: string, cookie: string): { ready: Promise<void>; ended: Promise<number>; abort(): void } {
  const target = new URL(url);
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  let req: ReturnType<typeof httpRequest> | undefined;
  const ended = new Promise<number>((resolve, reject) => {
    req = httpRequest({ host: target.hostname, port: target.port, path: '/api/v1/events', method: 'GET', headers: { host: target.host, cookie } }, (res) => {
      expect(res.statusCode).toBe(200);
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('event: ready')) markReady();
      });
      res.on('end', () => resolve(performance.now()));
      res.on('error', () => resolve(performance.now()));
      res.on('close', () => resolve(performance.now()));
    });
    req.on('error', reject);
    req.end();
  });
  return { ready, ended, abort: () => req?.destroy() };
}

/** A non-loopback IPv4 address of this machine, if it has one. */
function lanAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createTcpServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('the page from another device (issue 13)', () => {
  it('R-REM-2 a non-loopback web.listen without web.tls: the daemon refuses to serve there and names web.tls', async () => {
    const host = lanAddress() ?? '0.0.0.0';
    const port = await freePort(host);
    const home = homeWith({ web: { listen: `${host}:${port}` } });
    const run = await home.runCli(['daemon', 'run'], { timeoutMs: 15_000 });
    expect(run.code).toBe(65);
    expect(run.stderr).toContain('web.tls');
    expect(run.stderr).toContain('set web.tls to "self-signed"');
    const check = await home.runCli(['config', 'check', '--json']);
    expect(check.code).toBe(65);
    const problems = (JSON.parse(check.stdout) as { error: { details: { problems: { path: string }[] } } }).error.details.problems;
    expect(problems.map((problem) => problem.path)).toEqual(['web.tls']);
    // Nothing listens there.
    const reached = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: host === '0.0.0.0' ? '127.0.0.1' : host, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  });

  it('R-REM-1 behind a TLS proxy: publicUrl and allowedHosts names are served with Secure cookies; any other Host or Origin is refused and changes nothing', async () => {
    // The proxy: TLS for assent.test in front of the daemon's loopback port, bytes passed through as they are.
    const certDir = mkdtempSync(join(tmpdir(), 'as-proxy-'));
    cleanups.push(() => rmSync(certDir, { recursive: true, force: true }));
    const proxyCert = await loadTlsMaterial('self-signed', { stateDir: certDir, hosts: ['assent.test', 'phone.assent.test', 'evil.test'] });
    let upstreamPort = 0;
    const sockets = new Set<Socket>();
    const proxy = createTlsServer({ cert: proxyCert.cert, key: proxyCert.key }, (client) => {
      const upstream = connect({ host: '127.0.0.1', port: upstreamPort });
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      proxy.close(() => resolve());
    }));
    const proxyPort = (proxy.address() as AddressInfo).port;
    const publicUrl = `https://assent.test:${proxyPort}/`;

    const home = homeWith({ web: { listen: '127.0.0.1:0', publicUrl, allowedHosts: ['phone.assent.test'] } });
    await home.startDaemon();
    upstreamPort = Number(new URL(await daemonUrl(home)).port);

    const viaProxy = (name: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port: proxyPort, servername: name, ca: proxyCert.cert, path, method: body === undefined ? 'GET' : 'POST', headers: { host: `${name}:${proxyPort}`, ...headers } },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const json = { 'content-type': 'application/json' };

    // A pending approval the refused requests must not touch.
    const hook = runHook(['claude-code'], shellEvent('claude-code', 'curl -s https://example.invalid/x -o /tmp/x'), home.env, 60_000);
    // A failed assertion leaves it waiting: the home's cleanup ends it with the daemon.
    let pendingId = '';
    for (let i = 0; i < 400 && pendingId === ''; i += 1) {
      const list = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data;
      pendingId = list[0]?.id ?? '';
      if (pendingId === '') await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pendingId).not.toBe('');

    const { url, code } = await pairingCode(home);
    expect(url).toBe(publicUrl);

    // Refused: another Host; an allowed Host with a foreign or plain-http Origin. None counts against the code.
    const evilPage = await viaProxy('evil.test', '/', {});
    expect(evilPage.status).toBe(403);
    expect(JSON.parse(evilPage.body)).toMatchObject({ code: 'forbidden', message: expect.stringContaining(publicUrl) });
    for (const [name, origin] of [
      ['evil.test', `https://evil.test:${proxyPort}`],
      ['assent.test', `https://evil.test:${proxyPort}`],
      ['assent.test', `http://assent.test:${proxyPort}`],
    ] as const) {
      const refused = await viaProxy(name, '/api/v1/pair', { ...json, origin }, JSON.stringify({ code, remember: true }));
      expect(refused.status, `${name} from ${origin}`).toBe(403);
      expect(refused.headers['set-cookie']).toBeUndefined();
    }
    expect((JSON.parse((await home.runCli(['web', 'devices', '--json'])).stdout) as { data: unknown[] }).data).toEqual([]);

    // Served: the public name pairs (with the same code: nothing above used it up) and the cookie is Secure.
    const page = await viaProxy('assent.test', '/', {});
    expect(page.status).toBe(200);
    expect(page.body).toContain('Pairing code');
    const paired = await viaProxy('assent.test', '/api/v1/pair', { ...json, origin: `https://assent.test:${proxyPort}`, 'user-agent': PHONE_UA }, JSON.stringify({ code, remember: true }));
    expect(paired.status).toBe(200);
    const setCookie = (paired.headers['set-cookie'] ?? []).join('\n');
    expect(setCookie).toMatch(/; Secure/);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    const cookie = cookieOf(paired);

    // A valid cookie through a wrong Host decides nothing.
    const wrongHost = await viaProxy('evil.test', '/api/v1/approvals.decide', { ...json, cookie, origin: `https://evil.test:${proxyPort}` }, JSON.stringify({ id: pendingId, behavior: 'allow' }));
    expect(wrongHost.status).toBe(403);
    const stillPending = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((approval) => approval.id);
    expect(stillPending).toEqual([pendingId]);

    // The allowedHosts name (any port) is served with the same session.
    const listed = await viaProxy('phone.assent.test', '/api/v1/approvals.list', { ...json, cookie, origin: `https://phone.assent.test:${proxyPort}` }, '{}');
    expect(listed.status).toBe(200);
    expect((JSON.parse(listed.body) as { id: string }[]).map((approval) => approval.id)).toEqual([pendingId]);
    const devices = (JSON.parse((await home.runCli(['web', 'devices', '--json'])).stdout) as { data: { name: string; remembered: boolean }[] }).data;
    expect(devices).toMatchObject([{ name: 'Chrome on Android', remembered: true }]);

    expect((await home.runCli(['deny', pendingId])).code).toBe(0);
    expect((await hook).code).toBe(0);
  });

  it('R-REM-7 with web.publicUrl `assent web` names the public URL and no fingerprint of its own certificate, which the browser behind the proxy never sees', async () => {
    const home = homeWith({ web: { listen: '127.0.0.1:0', tls: 'self-signed', publicUrl: 'https://workstation.example.ts.net/' } });
    await home.startDaemon();
    const web = await runCliInTerminal(home, ['web', '--json']);
    const data = (JSON.parse(web.stdout) as { data: Record<string, unknown> }).data;
    expect(data['url']).toBe('https://workstation.example.ts.net/');
    expect(Object.keys(data).sort()).toEqual(['code', 'expiresAt', 'url']);
    // The daemon's own https listener still reports its certificate.
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { web: { url: string; fingerprint?: string } } };
    expect(status.data.web.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
    expect(status.data.web.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('R-REM-3 a remembered device is signed in after `assent daemon stop` and a restart; `assent web revoke` ends its stream within 1 s and its next call is 401', async () => {
    const home = homeWith({ web: { listen: '127.0.0.1:0' } });
    await home.startDaemon();
    const pairOne = async (remember: boolean): Promise<string> => {
      const { url, code } = await pairingCode(home);
      const origin = new URL(url).origin;
      const reply = await sendHttp(url, '/api/v1/pair', { host: new URL(url).host, origin, 'content-type': 'application/json', 'user-agent': PHONE_UA }, JSON.stringify({ code, remember }));
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body)).toMatchObject({ paired: true, remembered: remember });
      // Not served over https here, so not Secure; remembered cookies last web.deviceTtlDays.
      expect((reply.headers['set-cookie'] ?? []).join('\n')).toMatch(remember ? /Max-Age=2592000/ : /Max-Age=43200/);
      return cookieOf(reply);
    };
    const remembered = await pairOne(true);
    const temporary = await pairOne(false);
    const before = (JSON.parse((await home.runCli(['web', 'devices', '--json'])).stdout) as { data: { id: string; remembered: boolean }[] }).data;
    expect(before.map((device) => device.remembered).sort()).toEqual([false, true]);
    const rememberedId = before.find((device) => device.remembered)?.id ?? '';

    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    await home.startDaemon();
    const url = await daemonUrl(home);
    const call = (cookie: string): Promise<Reply> =>
      sendHttp(url, '/api/v1/approvals.list', { host: new URL(url).host, origin: new URL(url).origin, 'content-type': 'application/json', cookie }, '{}');
    expect((await call(remembered)).status).toBe(200);
    expect((await call(temporary)).status).toBe(401);
    const after = (JSON.parse((await home.runCli(['web', 'devices', '--json'])).stdout) as { data: { id: string; name: string }[] }).data;
    expect(after).toMatchObject([{ id: rememberedId, name: 'Chrome on Android' }]);

    const stream = openEvents(url, remembered);
    cleanups.push(() => stream.abort());
    await stream.ready;
    // Headless on purpose: revoking is always safe (R-REM-7).
    const revoke = await home.runCli(['web', 'revoke', rememberedId, '--json']);
    const revokedAt = performance.now();
    expect(revoke.code).toBe(0);
    expect((JSON.parse(revoke.stdout) as { data: { id: string } }).data.id).toBe(rememberedId);
    const endedAt = await Promise.race([stream.ended, new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), 5000))]);
    expect(endedAt - revokedAt).toBeLessThan(1000);
    const refused = await call(remembered);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'unauthorized' });
    expect((JSON.parse((await home.runCli(['web', 'devices', '--json'])).stdout) as { data: unknown[] }).data).toEqual([]);
    const unknown = await home.runCli(['web', 'revoke', rememberedId]);
    expect(unknown.code).toBe(65);
    expect(unknown.stderr).toContain('assent web devices');
  });
});
