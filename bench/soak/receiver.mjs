// The soak's export receiver: an HTTPS webhook on loopback, in the soak's own
// process, with a self-signed certificate for 127.0.0.1. It checks each batch's
// HMAC signature, answers 204 (the webhook sink counts a batch delivered only on
// a 2xx, so its cursor moves only past what arrived here) and counts every record
// by its identity (hostId, seq). stop() closes the port, dropping open
// connections; start() listens again on the same port.
import { createHmac, timingSafeEqual, webcrypto } from 'node:crypto';
import { createServer } from 'node:https';

/** A self-signed certificate for `localhost` and 127.0.0.1 (ECDSA P-256), as PEM. */
export async function makeLoopbackCertificate() {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '03',
    name: [{ CN: ['localhost'] }],
    // Valid well before and after the soak: the machine's clock may be set back or forward meanwhile.
    notBefore: new Date(Date.now() - 30 * 86_400_000),
    notAfter: new Date(Date.now() + 30 * 86_400_000),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return { cert: cert.toString('pem'), key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n` };
}

function verified(key, timestamp, body, signature) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * Starts the receiver. `received` maps `hostId:seq` to how many times it arrived;
 * `batches`, `unverified` and `outages` count what came and how often it was down.
 */
export async function startWebhookReceiver(key, certificate) {
  const receiver = {
    url: '',
    port: 0,
    up: false,
    received: new Map(),
    batches: 0,
    unverified: 0,
    outages: 0,
    async start() {
      if (this.up) return;
      const server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (!verified(key, String(req.headers['x-assent-timestamp'] ?? ''), body, String(req.headers['x-assent-signature'] ?? ''))) {
            receiver.unverified += 1;
            res.writeHead(401).end();
            return;
          }
          receiver.batches += 1;
          for (const line of body.split('\n')) {
            if (line === '') continue;
            const record = JSON.parse(line);
            const identity = `${String(record.hostId)}:${String(record.seq)}`;
            receiver.received.set(identity, (receiver.received.get(identity) ?? 0) + 1);
          }
          res.writeHead(204).end();
        });
      });
      // Idle connections close after 1 s, so the daemon's descriptors settle soon after its last batch.
      server.keepAliveTimeout = 1000;
      await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.port, '127.0.0.1', () => resolve());
      });
      this.port = server.address().port;
      this.url = `https://127.0.0.1:${this.port}/soak`;
      this.server = server;
      this.up = true;
    },
    async stop() {
      if (!this.up) return;
      this.up = false;
      this.outages += 1;
      const server = this.server;
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
    },
    duplicates() {
      let count = 0;
      for (const times of this.received.values()) count += times - 1;
      return count;
    },
  };
  await receiver.start();
  return receiver;
}
