// The HTTP head inside a real `assent daemon run` (built binary, temp
// ASSENT_HOME, web.listen on port 0): `assent web --json`, `assent token
// create|list|revoke` and raw HTTP requests, then a scan of daemon.log and of
// every response body for the secrets that went by (R-WEB-1, R-WEB-2, R-WEB-4, R-J-7).
import { runCliInTerminal } from '../helpers/pty.js';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';

const homes: TempHome[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await home.cleanup();
});

interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const bodies: string[] = [];

/** A raw HTTP request, so the test controls Host, Origin and the exact path. */
function send(url: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpResult> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path, method: options.method ?? 'POST', headers: options.headers ?? {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          bodies.push(body);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

async function startWebDaemon(): Promise<{ home: TempHome; url: string; code: string; expiresAt: number }> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
  await home.startDaemon();
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  const parsed = JSON.parse(web.stdout) as { ok: boolean; data: { url: string; code: string; expiresAt: number } };
  expect(parsed.ok).toBe(true);
  expect(Object.keys(parsed.data).sort()).toEqual(['code', 'expiresAt', 'url']);
  return { home, ...parsed.data };
}

/** A bearer-authenticated SSE stream: what arrived so far, and when it ended. */
function openEventStream(target: URL, path: string, token: string): { text: () => string; ended: Promise<void> } {
  let streamed = '';
  const ended = new Promise<void>((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, method: 'GET', headers: { host: target.host, authorization: `Bearer ${token}` } }, (res) => {
      expect(res.statusCode).toBe(200);
      res.setEncoding('utf8').on('data', (chunk: string) => (streamed += chunk));
      res.on('end', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', reject);
    req.end();
  });
  return { text: () => streamed, ended };
}

describe('HTTP head in a running daemon', () => {
  it('R-WEB-2 `assent web --json` gives {url, code, expiresAt}; port 0 is reported as the bound port in daemon.status', async () => {
    const { home, url, code, expiresAt } = await startWebDaemon();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:(\d+)\/$/);
    expect(url).not.toContain(':0/');
    expect(code).toMatch(/^[a-km-z]{8}$/);
    expect(expiresAt - Date.now()).toBeGreaterThan(100_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(120_000);
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { web: { url: string } } };
    expect(status.data.web.url).toBe(url);
    const human = await runCliInTerminal(home, ['web']);
    expect(human.stdout).toContain(url);
    expect(human.stdout).toMatch(/Pairing code: +[a-km-z]{8}/);
  });

  it('R-WEB-4 token create writes a new 0600 file and never prints the token; list and revoke; a revoked token is refused', async () => {
    const { home, url } = await startWebDaemon();
    const out = join(home.home, '..', 'ci.token');
    const created = await runCliInTerminal(home, ['token', 'create', '--name', 'ci', '--ttl', '1h', '--out', out, '--json']);
    expect(created.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const token = readFileSync(out, 'utf8').trim();
    expect(token).toMatch(/^ast1_[A-Za-z0-9_-]{43}$/);
    expect(created.stdout + created.stderr).not.toContain(token);
    const info = (JSON.parse(created.stdout) as { data: { id: string; name: string; state: string; audience: string } }).data;
    expect(info).toMatchObject({ name: 'ci', state: 'active' });

    // O_EXCL: an existing file is never overwritten.
    const again = await runCliInTerminal(home, ['token', 'create', '--name', 'ci2', '--ttl', '1h', '--out', out, '--json']);
    expect(again.code).toBe(65);
    expect(readFileSync(out, 'utf8').trim()).toBe(token);

    const host = new URL(url).host;
    const ok = await send(url, '/api/v1/tokens.list', { headers: { host, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(ok.status).toBe(200);
    const listed = JSON.parse(ok.body) as { id: string; state: string }[];
    expect(listed.find((t) => t.id === info.id)?.state).toBe('active');
    expect(ok.body).not.toContain(token);
    expect(ok.headers['cache-control']).toBe('no-store');

    const listCli = await home.runCli(['token', 'list', '--json']);
    expect(listCli.stdout).not.toContain(token);
    expect(listCli.stdout).toContain(info.id);

    expect((await home.runCli(['token', 'revoke', info.id])).code).toBe(0);
    const refused = await send(url, '/api/v1/tokens.list', { headers: { host, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 401, code: 'unauthorized' });
  });

  it('R-WEB-1 refuses a wrong Host on the real listener', async () => {
    const { url } = await startWebDaemon();
    const refused = await send(url, '/', { method: 'GET', headers: { host: 'attacker.example' } });
    expect(refused.status).toBe(403);
    const page = await send(url, '/', { method: 'GET', headers: { host: new URL(url).host } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'self'/);
  });

  it('R-J-7 daemon.log and error bodies never contain the pairing code, session cookie, token or a proof', async () => {
    const { home, url, code } = await startWebDaemon();
    const host = new URL(url).host;
    const origin = `http://${host}`;
    const json = { host, origin, 'content-type': 'application/json' };
    const out = join(home.home, '..', 'scan.token');
    expect((await runCliInTerminal(home, ['token', 'create', '--name', 'scan', '--ttl', '1h', '--out', out])).code).toBe(0);
    const token = readFileSync(out, 'utf8').trim();
    const proof = `asp1_${'Z'.repeat(43)}`;

    await send(url, '/api/v1/pair', { headers: json, body: JSON.stringify({ code: 'wrongwro' }) });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the wait after a wrong code (hardening 2)
    const paired = await send(url, '/api/v1/pair', { headers: json, body: JSON.stringify({ code }) });
    expect(paired.status).toBe(200);
    const setCookie = String(paired.headers['set-cookie'] ?? '');
    const cookieValue = /assent_session=([^;]+)/.exec(setCookie)?.[1] ?? '';
    expect(cookieValue.length).toBeGreaterThan(30);
    const cookie = `assent_session=${cookieValue}`;

    await send(url, `/api/v1/approvals.list?token=${token}`, { headers: { ...json, cookie }, body: '{}' });
    await send(url, `/api/v1/approvals.list?code=${code}`, { headers: { ...json, cookie }, body: '{}' });
    await send(url, `/api/v1/${proof}`, { headers: { ...json, cookie }, body: '{}' });
    await send(url, '/api/v1/approvals.get', { headers: { ...json, cookie }, body: JSON.stringify({ id: proof }) });
    await send(url, '/api/v1/approvals.list', { headers: { ...json, cookie }, body: JSON.stringify({ proof }) });
    await send(url, '/api/v1/approvals.list', { headers: { ...json, cookie, origin: 'http://evil.example' }, body: '{}' });
    await send(url, '/api/v1/approvals.list', { headers: { host, authorization: `Bearer ${token}x`, 'content-type': 'application/json' }, body: '{}' });
    await send(url, `/?token=${token}`, { method: 'GET', headers: { host } });
    await send(url, '/api/v1/pair', { headers: json, body: JSON.stringify({ code }) });
    const ok = await send(url, '/api/v1/approvals.list', { headers: { ...json, cookie }, body: '{}' });
    expect(ok.status).toBe(200);

    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    const log = existsSync(home.paths.log) ? readFileSync(home.paths.log, 'utf8') : '';
    expect(log).toContain('http request');
    for (const secret of [code, cookieValue, token, proof]) {
      expect(log).not.toContain(secret);
      for (const body of bodies) expect(body).not.toContain(secret);
    }
  });

  it('R-WEB-1 a busy web.listen port leaves the daemon running; assent web says which setting to change', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const home = makeTempHome();
      homes.push(home);
      mkdirSync(home.home, { recursive: true, mode: 0o700 });
      writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: `127.0.0.1:${port}` } }), { mode: 0o600 });
      await home.startDaemon();
      const web = await runCliInTerminal(home, ['web', '--json']);
      expect(web.code).toBe(69);
      const error = (JSON.parse(web.stdout) as { ok: boolean; error: { type: string; message: string } }).error;
      expect(error.type).toBe('unavailable');
      expect(error.message).toContain('web.listen');
      const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { web: { url: null; error: string } } };
      expect(status.data.web.url).toBeNull();
      expect(status.data.web.error).toContain(String(port));
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('R-WEB-4 an open event stream ends when its token is revoked, before the next event is delivered', async () => {
    const { home, url } = await startWebDaemon();
    const out = join(home.home, '..', 'revoked-sse.token');
    const created = await runCliInTerminal(home, ['token', 'create', '--name', 'sse2', '--ttl', '1h', '--out', out, '--json']);
    expect(created.code).toBe(0);
    const id = (JSON.parse(created.stdout) as { data: { id: string } }).data.id;
    const token = readFileSync(out, 'utf8').trim();
    const target = new URL(url);
    const stream = openEventStream(target, '/api/v1/events?kinds=config_changed', token);
    await expect.poll(() => stream.text(), { timeout: 5000 }).toContain('event: ready');
    expect((await home.runCli(['token', 'revoke', id])).code).toBe(0);
    // An edit of config.json publishes config_changed (not applied); the revoked stream must not carry it.
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, auditRetentionDays: 7 }));
    await stream.ended;
    expect(stream.text()).not.toContain('config_changed');
  });

  it('R-D-1 an open event stream does not hold up a graceful stop', async () => {
    const { home, url } = await startWebDaemon();
    const out = join(home.home, '..', 'sse.token');
    expect((await runCliInTerminal(home, ['token', 'create', '--name', 'sse', '--ttl', '1h', '--out', out])).code).toBe(0);
    const token = readFileSync(out, 'utf8').trim();
    const target = new URL(url);
    const stream = openEventStream(target, '/api/v1/events?kinds=daemon_started,config_changed', token);
    await expect.poll(() => stream.text(), { timeout: 5000 }).toContain('event: ready');
    const stop = await home.runCli(['daemon', 'stop'], { timeoutMs: 10_000 });
    expect(stop.code).toBe(0);
    await stream.ended;
    expect(stream.text()).not.toContain(token);
  });
});
