// The HTTP head's own TLS (R-REM-2, R-REM-7): a self-signed certificate made
// once (key 0600) for the addresses it listens on and reused on restart, the
// operator's own files checked as a pair, plain HTTP refused off loopback, and
// https actually served with the certificate whose fingerprint is reported.
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, chmodSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpHead, type HttpHead } from '../../../../src/heads/http/httpServer.js';
import { certificateFingerprint, loadTlsMaterial, selfSignedPaths } from '../../../../src/heads/http/tlsCertificate.js';
import { fingerprintForPeople } from '../../../../src/heads/cli/commands/web.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'as-tls-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const okApp = (): { app: Hono; closeStreams: () => void; openStreams: () => number } => {
  const app = new Hono();
  app.get('/', (c) => c.text('over tls'));
  return { app, closeStreams: () => undefined, openStreams: () => 0 };
};

/** The certificate a TLS server presents, fetched without trusting it, as DER. */
function presentedCertificate(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' }, () => {
      const der = socket.getPeerCertificate().raw;
      socket.end();
      resolve(der);
    });
    socket.on('error', reject);
  });
}

describe('TLS for the web page (issue 13 item 2)', () => {
  it('R-REM-2 "self-signed" makes a key (0600) and a certificate naming the listen addresses once, and reuses them', async () => {
    const dir = tempDir();
    const first = await loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['192.0.2.2', 'localhost', '::1'] });
    expect(first.source).toBe('self-signed (new)');
    const paths = selfSignedPaths(dir);
    expect(statSync(paths.key).mode & 0o777).toBe(0o600);
    expect(statSync(paths.cert).mode & 0o777).toBe(0o600);
    const cert = new X509Certificate(readFileSync(paths.cert));
    expect(cert.subjectAltName).toContain('IP Address:192.0.2.2');
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.ca).toBe(false);
    expect(first.fingerprint).toBe(`sha256:${createHash('sha256').update(cert.raw).digest('hex')}`);
    expect(first.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(fingerprintForPeople(first.fingerprint)).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);

    const again = await loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['192.0.2.2', 'localhost', '::1'] });
    expect(again.source).toBe('self-signed (reused)');
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(again.key).toBe(first.key);
  });

  it('R-REM-2 a self-signed certificate that no longer names the listen address, or is about to expire, is replaced', async () => {
    const dir = tempDir();
    const first = await loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['192.0.2.2'] });
    const moved = await loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['192.0.2.9'] });
    expect(moved.source).toBe('self-signed (new)');
    expect(moved.fingerprint).not.toBe(first.fingerprint);
    const late = await loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['192.0.2.9'], now: () => Date.now() + 824 * 86_400_000 });
    expect(late.source).toBe('self-signed (new)');
  });

  it('R-REM-2 a self-signed key readable by others is refused with the chmod to run', async () => {
    const dir = tempDir();
    await loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['localhost'] });
    chmodSync(selfSignedPaths(dir).key, 0o644);
    await expect(loadTlsMaterial('self-signed', { stateDir: dir, hosts: ['localhost'] })).rejects.toMatchObject({
      type: 'state_insecure',
      message: expect.stringContaining(`chmod 600 ${selfSignedPaths(dir).key}`),
    });
  });

  it('R-REM-2 web.tls files are read and checked as a pair; each problem names its key', async () => {
    const mine = tempDir();
    const other = tempDir();
    await loadTlsMaterial('self-signed', { stateDir: mine, hosts: ['localhost'] });
    await loadTlsMaterial('self-signed', { stateDir: other, hosts: ['localhost'] });
    const good = selfSignedPaths(mine);
    const files = await loadTlsMaterial({ cert: good.cert, key: good.key }, { stateDir: tempDir(), hosts: [] });
    expect(files.source).toBe('files');
    expect(files.fingerprint).toBe(certificateFingerprint(new X509Certificate(readFileSync(good.cert)).raw));
    await expect(loadTlsMaterial({ cert: good.cert, key: selfSignedPaths(other).key }, { stateDir: mine, hosts: [] })).rejects.toMatchObject({
      type: 'config_invalid',
      message: expect.stringMatching(/^web\.tls\.key: .* is not the private key of the certificate/),
    });
    await expect(loadTlsMaterial({ cert: join(mine, 'missing.pem'), key: good.key }, { stateDir: mine, hosts: [] })).rejects.toMatchObject({
      type: 'config_invalid',
      message: expect.stringMatching(/^web\.tls\.cert: cannot read .*missing\.pem \(ENOENT\)/),
    });
    const garbage = join(mine, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate');
    await expect(loadTlsMaterial({ cert: garbage, key: good.key }, { stateDir: mine, hosts: [] })).rejects.toMatchObject({ message: expect.stringMatching(/^web\.tls\.cert: .* is not a PEM certificate/) });
  });

  it('R-REM-2 the head refuses to serve plain HTTP off loopback before binding, naming web.tls', async () => {
    for (const listen of ['0.0.0.0:0', '192.0.2.2:0', '[::]:0']) {
      await expect(startHttpHead(listen, okApp)).rejects.toMatchObject({ type: 'config_invalid', message: expect.stringContaining('set web.tls to "self-signed"') });
    }
  });

  it('R-REM-2 with a certificate the head serves https and presents exactly that certificate', async () => {
    const material = await loadTlsMaterial('self-signed', { stateDir: tempDir(), hosts: ['127.0.0.1', 'localhost'] });
    const head: HttpHead = await startHttpHead('127.0.0.1:0', okApp, { tls: { cert: material.cert, key: material.key } });
    cleanups.push(() => head.close());
    expect(head.url).toBe(`https://${head.address}/`);
    expect(head.scheme).toBe('https');
    const port = Number(head.address.split(':')[1]);
    expect(certificateFingerprint(await presentedCertificate(port))).toBe(material.fingerprint);
    // Plain HTTP on the TLS port gets nothing served.
    const plain = await fetch(`http://${head.address}/`).then((response) => response.status).catch(() => 'refused');
    expect(plain).not.toBe(200);
  });
});
