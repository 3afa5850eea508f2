// TLS for tests that need a real secure origin with a DNS name (WebAuthn
// refuses IP origins): a self-signed certificate for one name, made with the
// X.509 library the daemon uses, and a free loopback port to serve it on.
import { webcrypto, createHash, X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { createServer } from 'node:net';

export interface TestCertificate {
  cert: string;
  key: string;
  /** base64 SHA-256 of the SubjectPublicKeyInfo, for Chromium's --ignore-certificate-errors-spki-list. */
  spki: string;
}

export async function makeCertificate(name: string): Promise<TestCertificate> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: [{ CN: [name] }],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: name }]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey)).toString('base64');
  const pem = cert.toString('pem');
  const spkiDer = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return {
    cert: pem,
    key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`,
    spki: createHash('sha256').update(spkiDer).digest('base64'),
  };
}

/** A loopback port free right now (the kernel's pick, released again). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface HttpsReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** POSTs JSON to 127.0.0.1:port as a client of `name` would: SNI and Host name it, and the test's certificate is the only one trusted. */
export function httpsPost(target: { name: string; port: number; ca: string }, path: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpsReply> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        servername: target.name,
        ca: target.ca,
        method: 'POST',
        path,
        headers: { host: `${target.name}:${target.port}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = data === '' ? {} : JSON.parse(data);
          } catch {
            parsed = { text: data };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: (Array.isArray(parsed) ? { list: parsed } : parsed) as Record<string, unknown> });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}
