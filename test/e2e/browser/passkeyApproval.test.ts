// Passkey-confirmed approvals end to end (R-REM-6, R-REM-7), in Debian's
// Chromium with a CDP WebAuthn virtual authenticator (ctap2, internal, resident
// keys, user verification on). The page is served over TLS by the daemon itself
// at https://assent.test:PORT (web.publicUrl; Chromium maps the name to
// 127.0.0.1 and trusts the test's self-signed certificate by its SPKI hash), so
// WebAuthn runs in a real secure context with a DNS name as the RP id.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { chromium, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { auditLines, makeTempHome, waitForAudit, type TempHome } from '../../helpers/daemon.js';
import { connectGateway } from '../../helpers/fsStack.js';
import { PtySession, runCliInTerminal, runInTerminal } from '../../helpers/pty.js';
import { freePort, httpsPost, makeCertificate, type HttpsReply, type TestCertificate } from '../../helpers/tlsFixture.js';
import { filesystemBin } from '../mcpFixtures.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const CHROMIUM = '/usr/bin/chromium';
const NAME = 'assent.test';
const PAGE_HELPER = join(import.meta.dirname, 'fixtures', 'passkeyPage.js');

const cleanups = cleanupsAfterEach();

interface Stack {
  home: TempHome;
  dir: string;
  port: number;
  origin: string;
  certificate: TestCertificate;
  client: Client;
  elicitations: () => number;
  browser: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
}

/**
 * A daemon serving TLS at https://assent.test:PORT (its own TLS, the test's
 * certificate), `fs/write_file` needing a passkey, an MCP client through the
 * built gateway that accepts every elicitation, and a paired Chromium page with
 * a virtual authenticator.
 */
async function stack(): Promise<Stack> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  const dir = mkdtempSync(join(tmpdir(), 'assent-fs-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
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
    JSON.stringify({
      notifications: false,
      web: { listen: `127.0.0.1:${port}`, publicUrl: `${origin}/`, tls: { cert: join(files, 'cert.pem'), key: join(files, 'key.pem') } },
      servers: { fs: { command: process.execPath, args: [filesystemBin, dir] } },
      channels: { elicitation: true },
      policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, presence: { 'fs/write_file': 'passkey' }, consentTimeoutSeconds: 600 },
    }),
    { mode: 0o600 },
  );
  await home.startDaemon();

  let elicited = 0;
  const { client } = await connectGateway(cleanups, home, [], { capabilities: { elicitation: {} } }, (c) => {
    // The MCP client's form says yes to everything: for an action that needs a passkey that must not approve it.
    c.setRequestHandler(ElicitRequestSchema, () => {
      elicited += 1;
      return { action: 'accept', content: { approve: true } } as never;
    });
  });

  const profile = mkdtempSync(join(tmpdir(), 'assent-chromium-'));
  cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 390, height: 844 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--host-resolver-rules=MAP ${NAME} 127.0.0.1`,
      `--ignore-certificate-errors-spki-list=${certificate.spki}`,
    ],
  });
  cleanups.push(() => browser.close());
  await browser.addInitScript({ path: PAGE_HELPER });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const cdp = await browser.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });

  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  const { url, code } = (JSON.parse(web.stdout) as { data: { url: string; code: string } }).data;
  expect(url).toBe(`${origin}/`);
  await page.goto(`${url}#code=${code}`);
  await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe('live');
  return { home, dir, port, origin, certificate, client, elicitations: () => elicited, browser, page, cdp, authenticatorId };
}

/** A request to the daemon's TLS port as a script would send it: Host and SNI assent.test, the test's certificate trusted. */
function post(s: Stack, path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpsReply> {
  return httpsPost({ name: NAME, port: s.port, ca: s.certificate.cert }, path, body, headers);
}

/** "Add a passkey" on the page, its code typed into `assent web passkeys add` in a PTY, "Register passkey". */
async function enrol(s: Stack): Promise<{ id: string; credentialId: string }> {
  const codeBox = s.page.locator('#passkey-code');
  // A code shown by an earlier press is replaced; wait for the new one, not the old text.
  const before = (await codeBox.count()) > 0 ? ((await codeBox.textContent()) ?? '') : '';
  await s.page.getByRole('button', { name: 'Add a passkey' }).click();
  await expect.poll(async () => { const text = (await codeBox.textContent()) ?? ''; return /^[a-km-z]{8}$/.test(text) && text !== before; }).toBe(true);
  const shown = (await codeBox.textContent()) ?? '';
  const out = join(mkdtempSync(join(tmpdir(), 'assent-tty-')), 'stdout');
  const terminal = new PtySession(['web', 'passkeys', 'add'], { outFile: out, env: { ASSENT_HOME: s.home.home } });
  cleanups.push(() => terminal.kill());
  await terminal.waitFor(/Type the 8-letter code the page shows/);
  terminal.type(`${shown}\r`);
  const confirmed = await terminal.finish(out);
  expect(confirmed.exitCode, terminal.screen).toBe(0);
  expect(confirmed.stdout).toContain('Register passkey');
  await s.page.getByRole('button', { name: 'Register passkey' }).click();
  await expect.poll(() => s.page.locator('#passkey-status').textContent(), { timeout: 15_000 }).toMatch(/^Passkey p[a-km-z]{5} added/);
  const list = JSON.parse((await s.home.runCli(['web', 'passkeys', '--json'])).stdout) as { data: { id: string; credentialId: string; enrolledBy: string }[] };
  expect(list.data).toHaveLength(1);
  expect(list.data[0]?.enrolledBy).toMatch(/^web:/);
  return list.data[0] as { id: string; credentialId: string };
}

/** Starts a write_file call through the gateway and waits for its approval on the page. */
async function writeCall(s: Stack, name: string, content: string): Promise<{ call: Promise<unknown>; id: string; target: string }> {
  const target = join(s.dir, name);
  const before = new Set(((JSON.parse((await s.home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data).map((a) => a.id));
  const call = s.client.callTool({ name: 'write_file', arguments: { path: target, content } }, undefined, { timeout: 600_000 });
  call.catch(() => undefined);
  for (let i = 0; i < 400; i += 1) {
    const list = (JSON.parse((await s.home.runCli(['pending', '--json'])).stdout) as { data: { id: string; presence?: string }[] }).data.filter((a) => !before.has(a.id));
    if (list.length > 0) {
      expect(list[0]?.presence).toBe('passkey');
      const id = list[0]?.id ?? '';
      await s.page.locator(`#pending-list li.card[data-approval-id="${id}"]`).waitFor({ timeout: 15_000 });
      return { call, id, target };
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no approval appeared');
}

async function state(s: Stack, id: string): Promise<string> {
  const view = JSON.parse((await s.home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] };
  return view.data.some((a) => a.id === id) ? 'pending' : 'resolved';
}

interface PageResult {
  status: number;
  body: { code?: string; message?: string; details?: unknown; nonce?: string; options?: Record<string, unknown>; state?: string };
}

const challengeIn = (page: Page, id: string): Promise<PageResult> => page.evaluate(`window.passkeyTest.challenge(${JSON.stringify(id)})`);
const assertIn = (page: Page, options: unknown, userVerification?: string): Promise<Record<string, unknown>> =>
  page.evaluate(`window.passkeyTest.assert(${JSON.stringify(options)}, ${JSON.stringify(userVerification)})`);
const approveIn = (page: Page, id: string, nonce: string, response: unknown): Promise<PageResult> =>
  page.evaluate(`window.passkeyTest.approve(${JSON.stringify(id)}, ${JSON.stringify(nonce)}, ${JSON.stringify(response)})`);

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing; .ci/run installs it (apt-get install -y chromium)`);
if (!haveChromium) process.stderr.write(`skipping passkey browser tests: ${CHROMIUM} is missing (apt-get install -y chromium)\n`);

describe.skipIf(!haveChromium)('passkey-confirmed approvals in Chromium', { timeout: 120_000 }, () => {
  it('R-REM-6 R-REM-7 WebAuthn runs at https://assent.test; enrolment needs a paired session and the code typed at the terminal', async () => {
    const s = await stack();
    expect(await s.page.evaluate('window.isSecureContext && typeof PublicKeyCredential')).toBe('function');
    // No session, or a bearer token instead of a page session: no enrolment.
    expect((await post(s, '/api/v1/passkeys.enrol', {}, { origin: s.origin })).status).toBe(401);
    const tokenFile = join(s.home.home, '..', 'passkey.token');
    expect((await runCliInTerminal(s.home, ['token', 'create', '--name', 'script', '--ttl', '10m', '--out', tokenFile])).code).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const byToken = await post(s, '/api/v1/passkeys.enrol', {}, { authorization: `Bearer ${token}` });
    expect(byToken).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    // The terminal step cannot run headless (an agent's shell), nor be skipped.
    const headless = await s.home.runCli(['web', 'passkeys', 'add']);
    expect(headless.code).toBe(77);
    expect(headless.stderr).toContain('interactive terminal');
    await s.page.getByRole('button', { name: 'Add a passkey' }).click();
    await expect.poll(() => s.page.locator('#passkey-code').textContent()).toMatch(/^[a-km-z]{8}$/);
    await s.page.getByRole('button', { name: 'Register passkey' }).click();
    await expect.poll(() => s.page.locator('#passkey-status').textContent()).toContain('assent web passkeys add');
    // A wrong code at the terminal confirms nothing.
    const out = join(mkdtempSync(join(tmpdir(), 'assent-tty-')), 'stdout');
    const wrong = new PtySession(['web', 'passkeys', 'add'], { outFile: out, env: { ASSENT_HOME: s.home.home } });
    cleanups.push(() => wrong.kill());
    await wrong.waitFor(/Type the 8-letter code the page shows/);
    wrong.type('zzzzzzzz\r');
    expect((await wrong.finish(out)).exitCode).toBe(77);
    expect(wrong.screen).toContain('matches no open passkey enrolment');
    expect((JSON.parse((await s.home.runCli(['web', 'passkeys', '--json'])).stdout) as { data: unknown[] }).data).toEqual([]);
    const enrolled = await enrol(s);
    const credentials = (await s.cdp.send('WebAuthn.getCredentials', { authenticatorId: s.authenticatorId })).credentials;
    expect(credentials.map((c) => Buffer.from(c.credentialId, 'base64').toString('base64url'))).toEqual([enrolled.credentialId]);
    expect(credentials[0]?.rpId).toBe(NAME);
  });

  it('R-REM-6 only the authenticator\'s assertion approves; assent approve with the right code, a raw socket approvals.decide, a bearer token and elicitation are refused and it stays pending; the call completes once', async () => {
    const s = await stack();
    const passkey = await enrol(s);
    const { call, id, target } = await writeCall(s, 'passkey.txt', 'approved by a person with that authenticator');
    const card = s.page.locator(`#pending-list li.card[data-approval-id="${id}"]`);
    expect(await card.textContent()).toContain('Needs your passkey');
    expect(await card.getByRole('button', { name: 'Approve for session' }).count()).toBe(0);

    // Elicitation: the client's form said yes, the daemon refused it.
    await expect.poll(() => s.elicitations(), { timeout: 15_000 }).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await state(s, id)).toBe('pending');

    const approve = await runInTerminal(['approve', id], { env: { ASSENT_HOME: s.home.home }, typeCode: true });
    expect(approve.exitCode).toBe(77);
    expect(approve.screen).toContain('passkey');

    const socket = await DaemonClient.connect({ socketPath: s.home.paths.socket, autoSpawn: false });
    cleanups.push(() => socket.close());
    await expect(socket.call('approvals.decide', { id, behavior: 'allow' })).rejects.toMatchObject({ type: 'presence_required' });
    await expect(socket.call('approvals.decide', { id, behavior: 'allow', channel: 'tty' })).rejects.toMatchObject({ type: 'presence_required' });

    const tokenFile = join(s.home.home, '..', 'decide.token');
    expect((await runCliInTerminal(s.home, ['token', 'create', '--name', 'script', '--ttl', '10m', '--out', tokenFile])).code).toBe(0);
    const byToken = await post(s, '/api/v1/approvals.decide', { id, behavior: 'allow' }, { authorization: `Bearer ${readFileSync(tokenFile, 'utf8').trim()}` });
    expect(byToken).toMatchObject({ status: 403, body: { code: 'presence_required' } });
    expect(String(byToken.body['message'])).toContain('passkey');
    expect(await state(s, id)).toBe('pending');
    expect(existsSync(target)).toBe(false);

    await card.getByRole('button', { name: 'Approve with passkey' }).click();
    const result = (await call) as { isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('approved by a person with that authenticator');
    const line = await waitForAudit(s.home, (record) => record['approvalId'] === id && record['outcome'] === 'ok');
    expect(line).toMatchObject({ channel: 'web', presence: 'passkey', credentialId: passkey.credentialId, tool: 'write_file' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(auditLines(s.home).filter((record) => record['approvalId'] === id && record['outcome'] === 'ok')).toHaveLength(1);
    await expect.poll(() => s.page.locator(`#pending-list li.card[data-approval-id="${id}"]`).count()).toBe(0);
  });

  it('R-REM-6 an assertion made for another approval, or replayed, is refused; removing the passkey makes its next assertion fail', async () => {
    const s = await stack();
    const passkey = await enrol(s);
    const a = await writeCall(s, 'a.txt', 'a');
    const b = await writeCall(s, 'b.txt', 'b');

    const forA = await challengeIn(s.page, a.id);
    expect(forA.status).toBe(200);
    const assertionA = await assertIn(s.page, forA.body.options);
    expect(assertionA['error']).toBeUndefined();
    const misused = await approveIn(s.page, b.id, forA.body.nonce ?? '', assertionA);
    expect(misused).toMatchObject({ status: 403, body: { code: 'presence_required', message: expect.stringContaining(`was made for approval ${a.id}, not this one`) } });
    expect(await state(s, b.id)).toBe('pending');

    const fresh = await challengeIn(s.page, a.id);
    const assertion = await assertIn(s.page, fresh.body.options);
    expect((await approveIn(s.page, a.id, fresh.body.nonce ?? '', assertion)).status).toBe(200);
    await a.call;
    expect(readFileSync(a.target, 'utf8')).toBe('a');
    // The same assertion again, for A and for B: its nonce is spent.
    expect(await approveIn(s.page, a.id, fresh.body.nonce ?? '', assertion)).toMatchObject({ status: 403, body: { message: expect.stringContaining('unknown, used or expired') } });
    expect(await approveIn(s.page, b.id, fresh.body.nonce ?? '', assertion)).toMatchObject({ status: 403, body: { message: expect.stringContaining('unknown, used or expired') } });
    expect(await state(s, b.id)).toBe('pending');

    // A challenge taken before the removal; the assertion after it fails.
    const forB = await challengeIn(s.page, b.id);
    const removed = await s.home.runCli(['web', 'passkeys', 'remove', passkey.id]);
    expect(removed.code).toBe(0);
    const afterRemoval = await assertIn(s.page, forB.body.options);
    expect(afterRemoval['error']).toBeUndefined();
    expect(await approveIn(s.page, b.id, forB.body.nonce ?? '', afterRemoval)).toMatchObject({ status: 403, body: { code: 'presence_required', message: expect.stringContaining('not enrolled') } });
    // And the page's own button now says there is no passkey.
    const card = s.page.locator(`#pending-list li.card[data-approval-id="${b.id}"]`);
    await card.getByRole('button', { name: 'Approve with passkey' }).click();
    await expect.poll(() => card.locator('.error').textContent()).toContain('No passkey is enrolled');
    expect(await state(s, b.id)).toBe('pending');
    expect(existsSync(b.target)).toBe(false);
  });

  it('R-REM-6 with user verification off in the authenticator, approval is refused and stays pending', async () => {
    const s = await stack();
    await enrol(s);
    const { id, target } = await writeCall(s, 'unverified.txt', 'never');
    await s.cdp.send('WebAuthn.setUserVerified', { authenticatorId: s.authenticatorId, isUserVerified: false });
    const card = s.page.locator(`#pending-list li.card[data-approval-id="${id}"]`);
    await card.getByRole('button', { name: 'Approve with passkey' }).click();
    await expect.poll(() => card.locator('.error').textContent(), { timeout: 20_000 }).not.toBe('');
    expect(await state(s, id)).toBe('pending');
    // An assertion the authenticator makes without verifying the person (asked for "discouraged") reaches the daemon and is refused there.
    const request = await challengeIn(s.page, id);
    const unverified = await assertIn(s.page, request.body.options, 'discouraged');
    expect(unverified['error']).toBeUndefined();
    expect(await approveIn(s.page, id, request.body.nonce ?? '', unverified)).toMatchObject({ status: 403, body: { code: 'presence_required', message: expect.stringContaining('did not verify you') } });
    expect(await state(s, id)).toBe('pending');
    expect(existsSync(target)).toBe(false);
  });
});
