// Passkey operations against a real daemon serving TLS at https://assent.test
// (R-REM-6, R-OPS-2), driven over HTTP by a software authenticator instead of a
// browser: the page operations need a paired page session (a bearer token is
// refused); passkeys.list answers alike through the CLI, the socket and HTTP;
// an agent action whose tool needs a passkey is released by an assertion, and
// its audit line says so. The browser and the PTY-typed terminal code are in
// test/e2e/browser/passkeyApproval.test.ts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { daemonsForHome, makeTempHome, waitForAudit, type TempHome } from '../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import { runCliInTerminal, runInTerminal } from '../helpers/pty.js';
import { SoftAuthenticator } from '../helpers/softAuthenticator.js';
import { freePort, httpsPost, makeCertificate, type HttpsReply } from '../helpers/tlsFixture.js';

const NAME = 'assent.test';
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Daemon {
  home: TempHome;
  origin: string;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpsReply>;
  socket: DaemonClient;
}

async function daemon(policy: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Daemon> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  const files = mkdtempSync(join(tmpdir(), 'assent-tls-'));
  cleanups.push(() => rmSync(files, { recursive: true, force: true }));
  const certificate = await makeCertificate(NAME);
  writeFileSync(join(files, 'cert.pem'), certificate.cert);
  writeFileSync(join(files, 'key.pem'), certificate.key, { mode: 0o600 });
  const port = await freePort();
  const origin = `https://${NAME}:${port}`;
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(
    home.paths.config,
    JSON.stringify({ notifications: false, web: { listen: `127.0.0.1:${port}`, publicUrl: `${origin}/`, tls: { cert: join(files, 'cert.pem'), key: join(files, 'key.pem') } }, policy, ...extra }),
    { mode: 0o600 },
  );
  await home.startDaemon();
  const socket = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => socket.close());
  return { home, origin, socket, post: (path, body, headers) => httpsPost({ name: NAME, port, ca: certificate.cert }, path, body, headers) };
}

/** Pairs like the page does: the code from `assent web --json`, exchanged for the session cookie. */
async function pairPage(d: Daemon): Promise<Record<string, string>> {
  const web = await runCliInTerminal(d.home, ['web', '--json']);
  const { code } = (JSON.parse(web.stdout) as { data: { code: string } }).data;
  const paired = await d.post('/api/v1/pair', { code }, { origin: d.origin });
  expect(paired.status).toBe(200);
  const cookie = String(([] as string[]).concat(paired.headers['set-cookie'] ?? [])[0] ?? '').split(';')[0] ?? '';
  expect(cookie).toMatch(/^assent_session=/);
  return { cookie, origin: d.origin };
}

async function token(d: Daemon): Promise<Record<string, string>> {
  const file = join(d.home.home, '..', `t${Math.random().toString(36).slice(2)}.token`);
  expect((await runCliInTerminal(d.home, ['token', 'create', '--name', 'script', '--ttl', '10m', '--out', file])).code).toBe(0);
  return { authorization: `Bearer ${readFileSync(file, 'utf8').trim()}` };
}

/** The page's enrolment with the terminal's confirmation sent straight over the socket (the CLI's terminal gate is driven in a PTY by the browser test). */
async function enrol(d: Daemon, page: Record<string, string>, authenticator: SoftAuthenticator): Promise<Record<string, unknown>> {
  const started = await d.post('/api/v1/passkeys.enrol', {}, page);
  expect(started.status).toBe(200);
  await d.socket.call('passkeys.confirm', { code: started.body['code'] });
  const options = await d.post('/api/v1/passkeys.registrationOptions', {}, page);
  expect(options.status).toBe(200);
  const registered = await d.post('/api/v1/passkeys.register', { response: authenticator.register(options.body as never) }, page);
  expect(registered.status).toBe(200);
  return registered.body;
}

describe('passkey operations over HTTP and the socket', () => {
  it('R-REM-6 the page operations need a paired page session: a bearer token is refused; R-OPS-2 passkeys.list is the same through CLI --json, the socket and HTTP', async () => {
    const d = await daemon({});
    const page = await pairPage(d);
    const bearer = await token(d);
    for (const operation of ['passkeys.enrol', 'passkeys.registrationOptions', 'passkeys.challenge', 'passkeys.approve', 'passkeys.register']) {
      const params = operation === 'passkeys.challenge' ? { id: 'abcde' } : operation === 'passkeys.approve' ? { id: 'abcde', nonce: 'n', response: { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: '', authenticatorData: '', signature: '' } } } : operation === 'passkeys.register' ? { response: { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: '', attestationObject: '' } } } : {};
      const refused = await d.post(`/api/v1/${operation}`, params, bearer);
      expect(refused, operation).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    }
    // Confirming is the terminal's: the page cannot confirm its own enrolment.
    expect((await d.post('/api/v1/passkeys.confirm', { code: 'abcdefgh' }, page)).status).toBe(404);

    const authenticator = new SoftAuthenticator(d.origin);
    const info = await enrol(d, page, authenticator);
    expect(info).toMatchObject({ credentialId: authenticator.id, rpId: NAME, enrolledBy: expect.stringMatching(/^web:/) });
    const cli = (JSON.parse((await d.home.runCli(['web', 'passkeys', '--json'])).stdout) as { data: unknown[] }).data;
    const rpc = await d.socket.call<unknown[]>('passkeys.list', {});
    const viaPage = (await d.post('/api/v1/passkeys.list', {}, page)).body['list'];
    const viaToken = (await d.post('/api/v1/passkeys.list', {}, bearer)).body['list'];
    expect(cli).toEqual([info]);
    expect(rpc).toEqual(cli);
    expect(viaPage).toEqual(cli);
    expect(viaToken).toEqual(cli);
    const status = JSON.parse((await d.home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { passkeys: unknown } };
    expect(status.data.passkeys).toEqual({ enrolled: 1, available: true, rpId: NAME });

    // Removing works headless, from the CLI, and takes it off every list at once.
    const removed = await d.home.runCli(['web', 'passkeys', 'remove', String(info['id'])]);
    expect(removed.code).toBe(0);
    expect(await d.socket.call('passkeys.list', {})).toEqual([]);
    expect((await d.home.runCli(['web', 'passkeys', 'remove', String(info['id'])])).code).toBe(65);
  });

  it('R-REM-6 an agent action whose tool needs a passkey waits until an assertion approves it; the hook then allows it once and the audit has presence passkey and the credential id', async () => {
    const d = await daemon({ tools: { 'claude/Bash': 'prompt' }, presence: { 'claude/*': 'passkey' } });
    const page = await pairPage(d);
    const authenticator = new SoftAuthenticator(d.origin);
    await enrol(d, page, authenticator);
    const hook = runHook(['claude-code'], shellEvent('claude-code', 'rm -rf build'), d.home.env, 60_000);
    let pending: { id: string; presence?: string }[] = [];
    for (let i = 0; i < 400 && pending.length === 0; i += 1) {
      pending = await d.socket.call<{ id: string; presence?: string }[]>('approvals.list', {});
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const id = pending[0]?.id ?? '';
    expect(pending[0]?.presence).toBe('passkey');
    await expect(d.socket.call('approvals.decide', { id, behavior: 'allow' })).rejects.toMatchObject({ type: 'presence_required' });
    const challenge = await d.post('/api/v1/passkeys.challenge', { id }, page);
    expect(challenge.status).toBe(200);
    const approved = await d.post('/api/v1/passkeys.approve', { id, nonce: challenge.body['nonce'], response: authenticator.assert(challenge.body['options'] as never) }, page);
    expect(approved).toMatchObject({ status: 200, body: { id, state: 'approved', channel: 'web', scope: 'call' } });
    const result = await hook;
    expect(result.code).toBe(0);
    expect(answerOf(result.stdout).decision).toBe('allow');
    const line = await waitForAudit(d.home, (record) => record['approvalId'] === id && record['outcome'] === 'started');
    expect(line).toMatchObject({ agent: 'claude-code', server: 'claude', tool: 'Bash', channel: 'web', presence: 'passkey', credentialId: authenticator.id });
  });

  it('R-REM-6 R-CFG-4 the requirement stored with the approval decides, not the config in force: filed with presence on, then a reload without it and a daemon restart, a socket approve is still refused', async () => {
    const withPresence = { tools: { 'fs/write_file': 'prompt' }, presence: { 'fs/write_file': 'passkey' } };
    const servers = { servers: { fs: { command: 'true' } } };
    const d = await daemon(withPresence, servers);
    void d.socket.call('calls.authorize', { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/srv/a', content: 'x' } }).catch(() => undefined);
    let pending: { id: string; presence?: string }[] = [];
    for (let i = 0; i < 400 && pending.length === 0; i += 1) {
      pending = await d.socket.call<{ id: string; presence?: string }[]>('approvals.list', {});
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const id = pending[0]?.id ?? '';
    expect(pending[0]?.presence).toBe('passkey');

    // The reload drops the presence entry: confirmed at the terminal with the typed code.
    const config = JSON.parse(readFileSync(d.home.paths.config, 'utf8')) as { policy: Record<string, unknown> };
    writeFileSync(d.home.paths.config, JSON.stringify({ ...config, policy: { tools: withPresence.tools } }), { mode: 0o600 });
    const reload = await runInTerminal(['config', 'reload'], { env: { ASSENT_HOME: d.home.home }, typeCode: true });
    expect(reload.exitCode, reload.screen).toBe(0);
    await expect(d.socket.call('approvals.decide', { id, behavior: 'allow' })).rejects.toMatchObject({ type: 'presence_required' });

    // A crash and a restart: the daemon now runs the config without presence, and reads the approval back from the journal.
    const [pid] = daemonsForHome(d.home.home);
    process.kill(pid!, 'SIGKILL');
    await expect.poll(() => daemonsForHome(d.home.home).length, { timeout: 5000 }).toBe(0);
    await d.home.startDaemon();
    const again = await DaemonClient.connect({ socketPath: d.home.paths.socket, autoSpawn: false });
    cleanups.push(() => again.close());
    expect(await again.call('approvals.get', { id })).toMatchObject({ state: 'pending', presence: 'passkey' });
    await expect(again.call('approvals.decide', { id, behavior: 'allow' })).rejects.toMatchObject({ type: 'presence_required' });
    const listed = JSON.parse((await d.home.runCli(['pending', '--json'])).stdout) as { data: { id: string; presence?: string }[] };
    expect(listed.data).toMatchObject([{ id, presence: 'passkey' }]);
    // Denying works everywhere; a new call is filed under the policy now in force.
    expect(await again.call('approvals.decide', { id, behavior: 'deny' })).toMatchObject({ state: 'denied' });
    void again.call('calls.authorize', { sessionId: 's2', server: 'fs', tool: 'write_file', args: { path: '/srv/b', content: 'y' } }).catch(() => undefined);
    let later: { id: string; presence?: string }[] = [];
    for (let i = 0; i < 400 && later.length === 0; i += 1) {
      later = await again.call<{ id: string; presence?: string }[]>('approvals.list', {});
      if (later.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(later[0]?.presence).toBeUndefined();
    expect(await again.call('approvals.decide', { id: later[0]?.id, behavior: 'allow' })).toMatchObject({ state: 'approved' });
  });
});
