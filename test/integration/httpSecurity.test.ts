// The HTTP head's guards (R-WEB-1, R-WEB-2, R-WEB-4, R-J-7) against the real
// approval runtime (journal, service, bus) in a temp ASSENT_HOME, driven through
// app.request() with a fake clock. Every refusal is checked for "no state
// change": the pending approval stays pending, no session or token appears.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/base/clock.js';
import type { DaemonContext } from '../../src/heads/daemon/daemonMain.js';
import { CONTENT_SECURITY_POLICY, createHttpApp, type HttpApp } from '../../src/heads/http/httpApp.js';
import { WebAuth } from '../../src/service/webAuth.js';
import { Journal } from '../../src/journal/journal.js';
import { ensureStateDir, resolveStatePaths } from '../../src/state/statePaths.js';
import { eventMatches } from '../../src/operations/approvalOperations.js';
import { daemonOperations } from '../../src/operations/daemonOperations.js';
import type { Operation } from '../../src/operations/operation.js';
import { createApprovalRuntime, WEB_ROOT, type ApprovalRuntime } from '../../src/heads/daemon/daemonRuntime.js';
import { createLogger } from '../../src/service/logger.js';

const HOST = '127.0.0.1:7788';
const ORIGIN = `http://${HOST}`;
const ARGS = { path: '/srv/data/notes.txt', content: 'hello \u202e world' };

interface Fixture {
  root: string;
  clock: FakeClock;
  runtime: ApprovalRuntime;
  http: HttpApp;
  logLines: string[];
  bodies: string[];
  hooks: (() => Promise<void> | void)[];
}

let fixture: Fixture;
const extraRoots: string[] = [];
const extraJournals: Journal[] = [];

function makeFixture(): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'as-http-'));
  const paths = resolveStatePaths({ ASSENT_HOME: join(root, 'h') });
  ensureStateDir(paths);
  writeFileSync(paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } }), { mode: 0o600 });
  const logLines: string[] = [];
  const logger = createLogger({ write: (line: string) => logLines.push(line) });
  const hooks: (() => Promise<void> | void)[] = [];
  const ctx: DaemonContext = {
    paths,
    logger,
    startedAt: 0,
    principal: 'owner:test',
    onShutdown: (hook) => hooks.push(hook),
    requestShutdown: () => undefined,
    status: {},
    connections: () => 0,
  };
  const clock = new FakeClock(Date.UTC(2026, 5, 1));
  const runtime = createApprovalRuntime(ctx, { clock });
  const operations: Operation[] = [...daemonOperations(ctx), ...runtime.operations];
  const http = createHttpApp({
    operations: () => operations,
    auth: runtime.webAuth,
    bus: runtime.bus,
    listenAddress: () => HOST,
    logger: logger.child({ head: 'http' }),
    webRoot: WEB_ROOT,
    eventMatches,
    keepAliveMs: 60_000,
  });
  return { root, clock, runtime, http, logLines, bodies: [], hooks };
}

beforeEach(() => {
  fixture = makeFixture();
});

afterEach(async () => {
  fixture.http.closeStreams();
  for (const hook of fixture.hooks) await hook();
  // A denied waiter's audit line may land just after shutdown and recreate the directory; remove twice.
  rmSync(fixture.root, { recursive: true, force: true });
  await new Promise((resolve) => setTimeout(resolve, 50));
  rmSync(fixture.root, { recursive: true, force: true });
  for (const journal of extraJournals.splice(0)) journal.close();
  for (const root of extraRoots.splice(0)) rmSync(root, { recursive: true, force: true });
});

interface CallOptions {
  method?: string;
  headers?: Record<string, string | undefined>;
  body?: unknown;
  rawBody?: string;
}

/** A request with the page's headers unless a test overrides them (undefined removes one). */
async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  const wanted: Record<string, string | undefined> = { host: HOST, origin: ORIGIN, 'content-type': 'application/json', ...options.headers };
  for (const [key, value] of Object.entries(wanted)) if (value !== undefined) headers[key] = value;
  const method = options.method ?? 'POST';
  const init: RequestInit = { method, headers };
  if (method !== 'GET') init.body = options.rawBody ?? JSON.stringify(options.body ?? {});
  const response = await fixture.http.app.request(`http://${HOST}${path}`, init);
  if (!(response.headers.get('content-type') ?? '').includes('event-stream')) fixture.bodies.push(await response.clone().text());
  return response;
}

async function pair(): Promise<string> {
  const { code } = fixture.runtime.webAuth.issuePairingCode();
  const response = await call('/api/v1/pair', { body: { code } });
  expect(response.status).toBe(200);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const match = /assent_session=([^;]+)/.exec(setCookie);
  expect(match).not.toBeNull();
  return `assent_session=${match?.[1] ?? ''}`;
}

/** Files a prompt approval whose caller waits; returns its id and the waiting promise. */
async function pendingApproval(): Promise<{ id: string; waiting: Promise<unknown> }> {
  const waiting = fixture.runtime.service
    .authorize({ sessionId: 'sess-1', server: 'fs', tool: 'write_file', args: ARGS })
    .then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
  for (let i = 0; i < 100; i += 1) {
    const [first] = await fixture.runtime.service.list({ state: 'pending' });
    if (first !== undefined) return { id: first.id, waiting };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('no approval was filed');
}

async function stateOf(id: string): Promise<string> {
  return (await fixture.runtime.service.get(id)).state;
}

async function expectRefused(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  const body = (await response.clone().json()) as Record<string, unknown>;
  expect(body).toEqual({ statusCode: status, code, error: expect.any(String), message: expect.any(String) });
  expect(response.headers.get('set-cookie')).toBeNull();
}

describe('HTTP head guards', () => {
  it('R-WEB-1 refuses a wrong Host header (DNS rebinding) on the page and the API, and nothing is decided', async () => {
    const cookie = await pair();
    const { id } = await pendingApproval();
    await expectRefused(await call('/', { method: 'GET', headers: { host: 'evil.example:7788' } }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { host: 'evil.example:7788', cookie }, body: { id, behavior: 'allow' } }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { host: 'localhost:7788', cookie }, body: { id, behavior: 'allow' } }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { host: undefined, cookie }, body: { id, behavior: 'allow' } }), 403, 'forbidden');
    expect(await stateOf(id)).toBe('pending');
  });

  it('R-WEB-1 refuses a cross-site POST (bad Origin, Sec-Fetch-Site cross-site or same-site, cookie without Origin), and nothing is decided', async () => {
    const cookie = await pair();
    const { id } = await pendingApproval();
    const body = { id, behavior: 'allow' };
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie, origin: 'http://evil.example' }, body }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie, origin: 'null' }, body }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie, 'sec-fetch-site': 'cross-site' }, body }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie, 'sec-fetch-site': 'same-site' }, body }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie, origin: undefined }, body }), 403, 'forbidden');
    await expectRefused(await call('/api/v1/pair', { headers: { origin: 'http://evil.example' }, body: { code: fixture.runtime.webAuth.issuePairingCode().code } }), 403, 'forbidden');
    expect(await stateOf(id)).toBe('pending');
    expect(fixture.runtime.webAuth.sessionCount).toBe(1);
  });

  it('R-WEB-4 refuses an API call without a session cookie or with an unknown one, and nothing is decided', async () => {
    const { id } = await pendingApproval();
    await expectRefused(await call('/api/v1/approvals.decide', { body: { id, behavior: 'allow' } }), 401, 'unauthorized');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie: 'assent_session=forged' }, body: { id, behavior: 'allow' } }), 401, 'unauthorized');
    await expectRefused(await call('/api/v1/events', { method: 'GET' }), 401, 'unauthorized');
    expect(await stateOf(id)).toBe('pending');
  });

  it('R-WEB-2 refuses a pairing code after 120 s and creates no session', async () => {
    const { code } = fixture.runtime.webAuth.issuePairingCode();
    fixture.clock.advance(120_000);
    await expectRefused(await call('/api/v1/pair', { body: { code } }), 401, 'unauthorized');
    expect(fixture.runtime.webAuth.sessionCount).toBe(0);
  });

  it('R-WEB-2 accepts a pairing code just inside 120 s, once; a second use is refused', async () => {
    const { code } = fixture.runtime.webAuth.issuePairingCode();
    fixture.clock.advance(119_999);
    expect((await call('/api/v1/pair', { body: { code } })).status).toBe(200);
    await expectRefused(await call('/api/v1/pair', { body: { code } }), 401, 'unauthorized');
    expect(fixture.runtime.webAuth.sessionCount).toBe(1);
  });

  it('R-WEB-2 burns the code after 5 wrong tries: the right code on the 6th try is refused', async () => {
    const { code } = fixture.runtime.webAuth.issuePairingCode();
    for (let i = 0; i < 5; i += 1) {
      await expectRefused(await call('/api/v1/pair', { body: { code: `wrong${i}xx` } }), 401, 'unauthorized');
      fixture.clock.advance(8000); // past each wait (hardening 2)
    }
    await expectRefused(await call('/api/v1/pair', { body: { code } }), 401, 'unauthorized');
    expect(fixture.runtime.webAuth.sessionCount).toBe(0);
    expect(fixture.runtime.webAuth.pairingActive).toBe(false);
  });

  it('R-WEB-2 (hardening 2) after a wrong code every try is 429 with Retry-After until the wait is over, even with the right code; then the code pairs', async () => {
    const { code } = fixture.runtime.webAuth.issuePairingCode();
    await expectRefused(await call('/api/v1/pair', { body: { code: 'wrongxxx' } }), 401, 'unauthorized');
    for (let i = 0; i < 50; i += 1) {
      const limited = await call('/api/v1/pair', { body: { code: i % 2 === 0 ? code : `guess${i}x` } });
      await expectRefused(limited, 429, 'rate_limited');
      expect(limited.headers.get('retry-after')).toBe('1');
    }
    fixture.clock.advance(1000);
    await expectRefused(await call('/api/v1/pair', { body: { code: 'wrongyyy' } }), 401, 'unauthorized');
    const second = await call('/api/v1/pair', { body: { code } });
    await expectRefused(second, 429, 'rate_limited');
    expect(second.headers.get('retry-after')).toBe('2');
    expect(fixture.runtime.webAuth.sessionCount).toBe(0);
    fixture.clock.advance(2000);
    expect((await call('/api/v1/pair', { body: { code } })).status).toBe(200);
    expect(fixture.runtime.webAuth.sessionCount).toBe(1);
  });

  it('R-WEB-2 sets an HttpOnly, SameSite=Strict, Path=/ session cookie and never echoes it in the body', async () => {
    const { code } = fixture.runtime.webAuth.issuePairingCode();
    expect(code).toMatch(/^[a-z]{8}$/);
    const response = await call('/api/v1/pair', { body: { code } });
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);
    const value = /assent_session=([^;]+)/.exec(setCookie)?.[1] ?? '';
    expect(value.length).toBeGreaterThanOrEqual(43);
    expect(await response.text()).not.toContain(value);
  });

  it('R-WEB-4 refuses expired, revoked and other-audience bearer tokens, and nothing is decided', async () => {
    const { id } = await pendingApproval();
    const auth = fixture.runtime.webAuth;
    const expired = (await auth.createToken({ name: 'short', ttlMs: 1000 })).token;
    const revoked = await auth.createToken({ name: 'gone', ttlMs: 3_600_000 });
    await auth.revokeToken(revoked.info.id);
    // A token minted by another daemon instance (its own journal and instance id).
    const otherRoot = mkdtempSync(join(tmpdir(), 'as-http-other-'));
    extraRoots.push(otherRoot);
    const otherJournal = Journal.open(join(otherRoot, 'journal.db'));
    extraJournals.push(otherJournal);
    const other = new WebAuth({ tokens: otherJournal, clock: fixture.clock, random: (n) => new Uint8Array(randomBytes(n)) });
    expect(other.audience).not.toBe(auth.audience);
    const foreign = (await other.createToken({ name: 'elsewhere', ttlMs: 3_600_000 })).token;
    fixture.clock.advance(1001);
    for (const token of [expired, revoked.token, foreign, 'ast1_notatoken', 'asp1_notatoken']) {
      await expectRefused(
        await call('/api/v1/approvals.decide', { headers: { authorization: `Bearer ${token}`, origin: undefined }, body: { id, behavior: 'allow' } }),
        401,
        'unauthorized',
      );
    }
    expect(await stateOf(id)).toBe('pending');
  });

  it('R-WEB-4 a valid bearer token reaches exposed operations, with the token name as principal', async () => {
    const { id, waiting } = await pendingApproval();
    const { token } = await fixture.runtime.webAuth.createToken({ name: 'ci-bot', ttlMs: 3_600_000 });
    const response = await call('/api/v1/approvals.decide', { headers: { authorization: `Bearer ${token}`, origin: undefined }, body: { id, behavior: 'deny', reason: 'not now' } });
    expect(response.status).toBe(200);
    const decided = (await response.json()) as { state: string; channel: string; reason: string };
    expect(decided).toMatchObject({ state: 'denied', channel: 'web', reason: 'not now' });
    const outcome = (await waiting) as { ok: boolean; error?: { type?: string; message?: string } };
    expect(outcome.ok).toBe(false);
    expect(outcome.error?.message).toContain('not now');
  });

  it('R-WEB-4 refuses a body with an unknown field or a head-owned channel with 400, and nothing is decided', async () => {
    const cookie = await pair();
    const { id } = await pendingApproval();
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie }, body: { id, behavior: 'allow', extra: true } }), 400, 'invalid_params');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie }, body: { id, behavior: 'allow', channel: 'cli' } }), 400, 'invalid_params');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie }, body: { params: { id, behavior: 'allow' } } }), 400, 'invalid_params');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie }, rawBody: '{"id":' }), 400, 'parse_error');
    await expectRefused(await call('/api/v1/approvals.decide', { headers: { cookie, 'content-type': 'text/plain' }, body: { id, behavior: 'allow' } }), 400, 'invalid_params');
    expect(await stateOf(id)).toBe('pending');
  });

  it('R-J-7 refuses a token or proof in a query string with 400, and nothing is decided', async () => {
    const cookie = await pair();
    const { id } = await pendingApproval();
    const { token } = await fixture.runtime.webAuth.createToken({ name: 'q', ttlMs: 3_600_000 });
    const proof = `asp1_${'A'.repeat(43)}`;
    for (const query of [`?token=${token}`, `?access_token=${token}`, `?proof=${proof}`, `?x=1`]) {
      await expectRefused(await call(`/api/v1/approvals.decide${query}`, { headers: { cookie }, body: { id, behavior: 'allow' } }), 400, 'invalid_params');
      await expectRefused(await call(`/api/v1/approvals.decide${query}`, { headers: { origin: undefined }, body: { id, behavior: 'allow' } }), 400, 'invalid_params');
    }
    await expectRefused(await call(`/api/v1/events?token=${token}`, { method: 'GET', headers: { cookie } }), 400, 'invalid_params');
    expect(await stateOf(id)).toBe('pending');
    const logged = fixture.logLines.join('\n');
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(proof);
  });

  it('R-OPS-1 serves only operations exposed on HTTP: shutdown, token minting and pairing are 404 there', async () => {
    const cookie = await pair();
    for (const name of ['daemon.shutdown', 'tokens.create', 'web.pair', 'calls.authorize', 'config.get', 'nope']) {
      await expectRefused(await call(`/api/v1/${name}`, { headers: { cookie }, body: {} }), 404, 'not_found');
    }
    expect(await fixture.runtime.webAuth.listTokens()).toEqual([]);
  });

  it('R-WEB-1 sends strict CSP, nosniff, no-referrer and no-store on pages, API answers and refusals', async () => {
    const cookie = await pair();
    const responses = [
      await call('/', { method: 'GET' }),
      await call('/app.js', { method: 'GET' }),
      await call('/api/v1/approvals.list', { headers: { cookie } }),
      await call('/api/v1/approvals.list', { headers: { host: 'evil.example' } }),
      await call('/api/v1/approvals.list'),
    ];
    for (const response of responses) {
      expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
    expect(CONTENT_SECURITY_POLICY).toMatch(/^default-src 'self'/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await (await call('/', { method: 'GET' })).text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\b(href|src)="(https?:)?\/\//);
    expect(html).toContain('Pairing code');
  });

  it('R-WEB-3 a paired page decides an approval; the waiting call resumes with channel web', async () => {
    const cookie = await pair();
    const { id, waiting } = await pendingApproval();
    const listed = (await (await call('/api/v1/approvals.list', { headers: { cookie } })).json()) as { id: string; args: unknown }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id, args: ARGS });
    const response = await call('/api/v1/approvals.decide', { headers: { cookie }, body: { id, behavior: 'allow', scope: 'call' } });
    expect(response.status).toBe(200);
    const outcome = (await waiting) as { ok: boolean; value?: { consent?: { channel: string; approvalId?: string } } };
    expect(outcome.ok).toBe(true);
    expect(outcome.value?.consent).toMatchObject({ channel: 'web', approvalId: id });
  });

  it('R-D-9 streams bus events over SSE without raw arguments', async () => {
    const cookie = await pair();
    const response = await call('/api/v1/events', { method: 'GET', headers: { cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const { id } = await pendingApproval();
    const complete = (): boolean => {
      const start = text.indexOf('event: approval_requested');
      return start >= 0 && text.indexOf('\n\n', start) > 0;
    };
    while (!complete()) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    await reader.cancel();
    expect(text).toContain(id);
    expect(text).not.toContain('notes.txt');
    expect(text).not.toContain('"args"');
  });

  it('R-J-7 no cookie value, token, pairing code or proof appears in any response body or log line', async () => {
    const { code } = fixture.runtime.webAuth.issuePairingCode();
    await call('/api/v1/pair', { body: { code: code.split('').reverse().join('') } });
    fixture.clock.advance(1000);
    const pairResponse = await call('/api/v1/pair', { body: { code } });
    const cookieValue = /assent_session=([^;]+)/.exec(pairResponse.headers.get('set-cookie') ?? '')?.[1] ?? '';
    const cookie = `assent_session=${cookieValue}`;
    const { token } = await fixture.runtime.webAuth.createToken({ name: 'scan', ttlMs: 1000 });
    const proof = `asp1_${'B'.repeat(43)}`;
    const { id } = await pendingApproval();
    await call(`/api/v1/approvals.decide?token=${token}`, { headers: { cookie }, body: { id, behavior: 'allow' } });
    await call(`/api/v1/${proof}`, { headers: { cookie }, body: {} });
    await call('/api/v1/approvals.get', { headers: { cookie }, body: { id: proof } });
    await call('/api/v1/approvals.decide', { headers: { cookie }, body: { id, behavior: 'allow', proof } });
    fixture.clock.advance(2000);
    await call('/api/v1/approvals.list', { headers: { authorization: `Bearer ${token}`, origin: undefined } });
    await call('/api/v1/approvals.list', { headers: { cookie, origin: 'http://evil.example' } });
    await call('/api/v1/pair', { body: { code } });
    const haystacks = [...fixture.bodies, ...fixture.logLines];
    expect(fixture.logLines.some((line) => line.includes('http request'))).toBe(true);
    for (const secret of [cookieValue, token, code, proof]) {
      expect(secret.length).toBeGreaterThan(7);
      for (const text of haystacks) expect(text).not.toContain(secret);
    }
  });
});
