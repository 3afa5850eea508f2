// A passkey requirement travels with the approval (R-REM-6, R-TEAM-2; issue 19
// item 1): host A marks claude/Bash with policy.presence, host B has no
// presence entry; both share one real PostgreSQL database. A's waiting agent
// action is listed on B as needing a passkey, and B cannot approve it — not
// with `assent approve` and the typed code, not with a raw `approvals.decide`
// over its socket, not with a bearer token on its HTTP API — while a passkey
// assertion on A's page approves it and A's hook then allows the call once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitForAudit } from '../helpers/daemon.js';
import type { Cleanups } from '../helpers/fsStack.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { runCliInTerminal, runInTerminal } from '../helpers/pty.js';
import { callApi, createToken, webUrl } from '../helpers/reviewer.js';
import { SoftAuthenticator } from '../helpers/softAuthenticator.js';
import { pendingOn, startTeam, teamServer, type TeamHost } from '../helpers/team.js';
import { freePort, httpsPost, makeCertificate, type HttpsReply } from '../helpers/tlsFixture.js';

const NAME = 'assent.test';
const fileCleanups: Cleanups = [];
const cleanups: Cleanups = [];
let server: PostgresServer;

beforeAll(async () => {
  server = await teamServer(fileCleanups);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

/** Host A's page over TLS at https://assent.test:PORT (WebAuthn needs a DNS name), so a passkey can be enrolled and used there. */
async function pageConfig(): Promise<{ web: Record<string, unknown>; origin: string; post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpsReply> }> {
  const files = mkdtempSync(join(tmpdir(), 'assent-tls-'));
  cleanups.push(() => rmSync(files, { recursive: true, force: true }));
  const certificate = await makeCertificate(NAME);
  writeFileSync(join(files, 'cert.pem'), certificate.cert);
  writeFileSync(join(files, 'key.pem'), certificate.key, { mode: 0o600 });
  const port = await freePort();
  const origin = `https://${NAME}:${port}`;
  return {
    web: { listen: `127.0.0.1:${port}`, publicUrl: `${origin}/`, tls: { cert: join(files, 'cert.pem'), key: join(files, 'key.pem') } },
    origin,
    post: (path, body, headers) => httpsPost({ name: NAME, port, ca: certificate.cert }, path, body, headers),
  };
}

/** Pairs a page session on a host (the code from `assent web --json`) and enrols a software passkey there, confirming at the socket. */
async function pairAndEnrol(host: TeamHost, page: Awaited<ReturnType<typeof pageConfig>>, authenticator: SoftAuthenticator): Promise<Record<string, string>> {
  const web = await runCliInTerminal(host.home, ['web', '--json']);
  const { code } = (JSON.parse(web.stdout) as { data: { code: string } }).data;
  const paired = await page.post('/api/v1/pair', { code }, { origin: page.origin });
  expect(paired.status).toBe(200);
  const cookie = String(([] as string[]).concat(paired.headers['set-cookie'] ?? [])[0] ?? '').split(';')[0] ?? '';
  const session = { cookie, origin: page.origin };
  const started = await page.post('/api/v1/passkeys.enrol', {}, session);
  expect(started.status).toBe(200);
  await (await host.connect()).call('passkeys.confirm', { code: started.body['code'] });
  const options = await page.post('/api/v1/passkeys.registrationOptions', {}, session);
  expect((await page.post('/api/v1/passkeys.register', { response: authenticator.register(options.body as never) }, session)).status).toBe(200);
  return session;
}

describe('a passkey requirement travels with the approval (issue 19 item 1)', () => {
  it('R-REM-6 R-TEAM-2 host A files claude/Bash needing a passkey; host B lists it with presence passkey and refuses the typed code, a raw approvals.decide and a bearer token; a passkey on A\'s page approves it once', async () => {
    const page = await pageConfig();
    const url = await server.createDatabase('presence');
    const tools = { 'claude/Bash': 'prompt' };
    const [a] = (await startTeam(cleanups, server, ['host-a'], { web: page.web, policy: { tools, presence: { 'claude/Bash': 'passkey' } } }, { url })).hosts as [TeamHost];
    const [b] = (await startTeam(cleanups, server, ['host-b'], { policy: { tools } }, { url })).hosts as [TeamHost];
    const authenticator = new SoftAuthenticator(page.origin);
    const session = await pairAndEnrol(a, page, authenticator);

    const hook = runHook(['claude-code'], shellEvent('claude-code', 'rm -rf build'), a.home.env, 90_000);
    const [listed] = await pendingOn(b);
    const id = listed!.id;
    // B's own config has no presence entry: what it shows came with the approval.
    expect(listed).toMatchObject({ id, tool: 'Bash', presence: 'passkey' });
    const human = await b.home.runCli(['pending']);
    expect(human.stdout).toContain('needs     a passkey');

    // The code typed at B's terminal is refused by the daemon (exit 77) and says why.
    const typed = await runInTerminal(['approve', id], { env: { ASSENT_HOME: b.home.home }, typeCode: true });
    expect(typed.exitCode, typed.screen).toBe(77);
    expect(typed.screen).toContain('needs your passkey');
    expect(typed.screen.replace(/\s+/g, ' ')).toContain('can only be approved with an enrolled passkey');

    // A raw decision over B's socket, as same-user code could send it.
    const socket = await b.connect();
    await expect(socket.call('approvals.decide', { id, behavior: 'allow' })).rejects.toMatchObject({ type: 'presence_required', details: { presence: 'passkey' } });

    // A reviewer's bearer token on B's HTTP API.
    const token = await createToken(b.home, 'reviewer');
    const viaToken = await callApi(await webUrl(b.home), token, 'approvals.decide', { id, behavior: 'allow' });
    expect(viaToken).toMatchObject({ status: 403, json: { code: 'presence_required' } });

    // Nothing was approved: still pending on both hosts, and the hook still waits.
    for (const host of [a, b]) expect((await pendingOn(host)).map((approval) => approval.id)).toEqual([id]);
    expect(await server.query<{ state: string }>('SELECT state FROM approvals WHERE id = $1', [id], new URL(url).pathname.slice(1))).toEqual([{ state: 'pending' }]);

    // A passkey assertion on A's page approves it.
    const challenge = await page.post('/api/v1/passkeys.challenge', { id }, session);
    expect(challenge.status).toBe(200);
    const approved = await page.post('/api/v1/passkeys.approve', { id, nonce: challenge.body['nonce'], response: authenticator.assert(challenge.body['options'] as never) }, session);
    expect(approved).toMatchObject({ status: 200, body: { id, state: 'approved', channel: 'web', scope: 'call', presence: 'passkey' } });
    const result = await hook;
    expect(result.code, result.stderr).toBe(0);
    expect(answerOf(result.stdout).decision).toBe('allow');
    const line = await waitForAudit(a.home, (record) => record['approvalId'] === id && record['outcome'] === 'started');
    expect(line).toMatchObject({ channel: 'web', presence: 'passkey', credentialId: authenticator.id });
    expect(JSON.parse((await b.home.runCli(['pending', '--json'])).stdout).data).toEqual([]);
  });
});
