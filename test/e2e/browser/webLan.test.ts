// Direct LAN mode in a real browser (R-REM-2, R-REM-3, issue 13 items 2-3): the
// daemon listens on a non-loopback address of this machine with its self-signed
// certificate. The test fetches the certificate the server presents, checks it
// against the fingerprint `assent web` printed, and only then lets Debian's
// Chromium (a 390×844 phone viewport) trust exactly that key
// (--ignore-certificate-errors-spki-list). The phone opens an approval from its
// deep link, pairs with "Remember this device", approves, and the waiting MCP
// call completes once; after `assent daemon stop` and a restart the page is still
// signed in, and `assent web revoke` signs it out.
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { haveChromium, horizontalOverflow, launchBrowser, screenshotPath } from '../../helpers/browser.js';
import { auditLines, type TempHome } from '../../helpers/daemon.js';
import { connectGateway, startFsStack } from '../../helpers/fsStack.js';
import { runCliInTerminal } from '../../helpers/pty.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();

/**
 * A non-loopback IPv4 address of this machine. Without one, 127.0.0.1 with the
 * same TLS set-up is the closest test possible (the non-loopback refusal itself
 * is covered in test/integration/webRemote.test.ts).
 */
function lanAddress(): string {
  return (
    Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1'
  );
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The certificate the server presents, read without trusting it. */
function presentedCertificate(host: string, port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, rejectUnauthorized: false }, () => {
      const der = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(der));
    });
    socket.on('error', reject);
  });
}

async function pairing(home: TempHome): Promise<{ url: string; code: string; fingerprint: string }> {
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  return (JSON.parse(web.stdout) as { data: { url: string; code: string; fingerprint: string } }).data;
}

async function pendingId(home: TempHome): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const ids = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((approval) => approval.id);
    if (ids[0] !== undefined) return ids[0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no pending approval');
}

function write(client: Client, path: string, content: string): ReturnType<Client['callTool']> {
  const call = client.callTool({ name: 'write_file', arguments: { path, content } }, undefined, { timeout: 60_000 });
  call.catch(() => undefined);
  return call;
}

describe.skipIf(!haveChromium())('direct LAN mode with a self-signed certificate', () => {
  it('R-REM-2 a phone-sized Chromium pairs over https (certificate checked against the printed fingerprint), opens an approval from its deep link and approves it; the MCP call completes once; R-REM-3 remembered across a restart, signed out by revoke', async () => {
    const host = lanAddress();
    const port = await freePort(host);
    const { home, dir } = await startFsStack(cleanups, {
      policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } },
      web: { listen: `${host}:${port}`, tls: 'self-signed' },
    });
    const { url, code, fingerprint } = await pairing(home);
    expect(url).toBe(`https://${host}:${port}/`);
    expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);

    // Trust only what was printed: the presented certificate must have that fingerprint, then its key is pinned.
    const cert = await presentedCertificate(host, port);
    expect(`sha256:${createHash('sha256').update(cert.raw).digest('hex')}`).toBe(fingerprint);
    const spki = createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
    // Without the pin the browser refuses the page: trust comes from the checked fingerprint alone.
    const unpinned = await launchBrowser(cleanups, { width: 390, height: 844 });
    await expect(unpinned.page.goto(url)).rejects.toThrow(/ERR_CERT/);
    await unpinned.browser.close();
    const { page } = await launchBrowser(cleanups, { width: 390, height: 844 }, [`--ignore-certificate-errors-spki-list=${spki}`]);

    const { client } = await connectGateway(cleanups, home);
    const target = join(dir, 'from-the-phone.txt');
    const call = write(client, target, 'approved over https');
    const id = await pendingId(home);

    await page.goto(`${url}#/approvals/${id}`);
    await page.getByLabel('Pairing code').waitFor({ timeout: 10_000 });
    await page.getByLabel('Pairing code').fill(code);
    await page.getByLabel('Remember this device').check();
    await page.getByRole('button', { name: 'Pair' }).click();
    const card = page.locator(`#approval-focus li.card[data-approval-id="${id}"]`);
    await card.waitFor({ timeout: 15_000 });
    expect(await card.textContent()).toContain('from-the-phone.txt');
    expect(page.url()).toBe(`${url}#/approvals/${id}`);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: screenshotPath('lan-approval-390'), fullPage: true });

    await card.getByRole('button', { name: 'Approve once' }).click();
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('approved over https');
    await expect.poll(() => auditLines(home).filter((line) => line['tool'] === 'write_file' && line['outcome'] === 'ok').length, { timeout: 10_000 }).toBe(1);
    const decided = auditLines(home).filter((line) => line['approvalId'] === id);
    expect(decided.map((line) => [line['channel'], line['outcome']])).toEqual([['web', 'ok']]);

    // Remembered: still signed in after the daemon stops and starts again (same address, same certificate).
    const devices = (JSON.parse((await home.runCli(['web', 'devices', '--json'])).stdout) as { data: { id: string; remembered: boolean }[] }).data;
    expect(devices).toMatchObject([{ remembered: true }]);
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    await home.startDaemon();
    expect((await pairing(home)).fingerprint).toBe(fingerprint);
    await page.goto(url);
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe('live');
    expect(await page.locator('#pair').isHidden()).toBe(true);

    // Revoked from the terminal (headless): the open page is signed out.
    expect((await home.runCli(['web', 'revoke', devices[0]?.id ?? ''])).code).toBe(0);
    await expect.poll(() => page.locator('#pair').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await page.locator('#pair-error').textContent()).toContain('pair again');
  });
});
