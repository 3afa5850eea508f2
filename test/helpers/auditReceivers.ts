// Receivers for the audit export tests (R-AUD-4, R-AUD-5), all on loopback and
// each with a close(): Debian's rsyslogd on private ports with its own config,
// pid file and work dir; an OTLP/HTTP receiver decoding with the OpenTelemetry
// protobuf definitions shipped in the SDK's transformer package; and an HTTPS
// webhook receiver that checks the HMAC signature.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, timingSafeEqual, webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface LoopbackCertificate {
  cert: string;
  key: string;
}

/** A self-signed certificate for `localhost` and 127.0.0.1, so clients can connect to the address and still verify it. */
export async function makeLoopbackCertificate(): Promise<LoopbackCertificate> {
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as unknown as Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '02',
    name: [{ CN: ['localhost'] }],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
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
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey)).toString('base64');
  return { cert: cert.toString('pem'), key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n` };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

// ------------------------------------------------------------------ rsyslog

export const RSYSLOGD = '/usr/sbin/rsyslogd';
const RSYSLOG_MODULES = '/usr/lib/x86_64-linux-gnu/rsyslog';

/** Which rsyslog TLS network stream driver is installed (Debian: rsyslog-gnutls or rsyslog-openssl), if any. */
export function rsyslogTlsDriver(): 'gtls' | 'ossl' | undefined {
  const dirs = [RSYSLOG_MODULES, '/usr/lib/rsyslog', '/usr/lib64/rsyslog'].filter((dir) => existsSync(dir));
  for (const dir of dirs) {
    const names = readdirSync(dir);
    if (names.includes('lmnsd_gtls.so')) return 'gtls';
    if (names.includes('lmnsd_ossl.so')) return 'ossl';
  }
  return undefined;
}

export interface Rsyslog {
  tcpPort: number;
  tlsPort: number;
  /** Lines rsyslog wrote for each listener: `<msgid> <structured-data> <msg>` as rsyslog parsed them. */
  lines(listener: 'tcp' | 'tls'): string[];
  close(): Promise<void>;
}

/** Starts rsyslogd in the foreground with a private config: a plain TCP and a TLS listener, each writing to its own file. */
export async function startRsyslog(dir: string, ports: { tcp: number; tls: number }, certificate: LoopbackCertificate): Promise<Rsyslog> {
  const driver = rsyslogTlsDriver();
  if (driver === undefined) throw new Error('no rsyslog TLS driver (install rsyslog-gnutls; .ci/run does)');
  mkdirSync(join(dir, 'work'), { recursive: true });
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  writeFileSync(cert, certificate.cert);
  writeFileSync(key, certificate.key, { mode: 0o600 });
  const out = (listener: string): string => join(dir, `${listener}.log`);
  const config = `
global(workDirectory="${join(dir, 'work')}" defaultNetstreamDriverCAFile="${cert}" defaultNetstreamDriverCertFile="${cert}" defaultNetstreamDriverKeyFile="${key}")
module(load="imtcp" maxSessions="50")
template(name="parsed" type="string" string="%msgid% %structured-data% %msg%\\n")
ruleset(name="tcp") { action(type="omfile" file="${out('tcp')}" template="parsed" flushOnTXEnd="on") }
ruleset(name="tls") { action(type="omfile" file="${out('tls')}" template="parsed" flushOnTXEnd="on") }
input(type="imtcp" address="127.0.0.1" port="${ports.tcp}" ruleset="tcp")
input(type="imtcp" address="127.0.0.1" port="${ports.tls}" ruleset="tls" streamDriver.name="${driver}" streamDriver.mode="1" streamDriver.authMode="anon")
`;
  const configFile = join(dir, 'rsyslog.conf');
  writeFileSync(configFile, config);
  const child: ChildProcess = spawn(RSYSLOGD, ['-n', '-f', configFile, '-i', join(dir, 'rsyslog.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (output += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (output += text));
  const { connect } = await import('node:net');
  const reachable = (port: number): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  const deadline = Date.now() + 10_000;
  while (!((await reachable(ports.tcp)) && (await reachable(ports.tls)))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`rsyslogd did not start: ${output}`);
    }
    await sleep(50);
  }
  const read = (listener: 'tcp' | 'tls'): string[] => {
    try {
      return readFileSync(out(listener), 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    tcpPort: ports.tcp,
    tlsPort: ports.tls,
    lines: read,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const end = Date.now() + 5000;
      while (child.exitCode === null && child.signalCode === null && Date.now() < end) await sleep(20);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

// ------------------------------------------------------------------ OTLP/HTTP

/** A decoded log record as the OpenTelemetry protobuf definitions give it (attributes flattened to plain values). */
export interface ReceivedLogRecord {
  eventName: string | undefined;
  body: string | undefined;
  severityText: string | undefined;
  timeUnixNano: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: { toString(): string } | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

function plain(value: AnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue.toString());
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.arrayValue !== undefined && value.arrayValue !== null) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributesOf(list: { key: string; value?: AnyValue }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = plain(value);
  return out;
}

export interface OtlpReceiver {
  url: string;
  records: ReceivedLogRecord[];
  /** Every request body as received, for the secrets scan. */
  raw: Buffer[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  // The generated protobuf root of the SDK's OTLP transformer (opentelemetry-proto, compiled by protobufjs).
  const require = createRequire(import.meta.url);
  const root = require('otlp-proto-definitions/build/src/generated/root.js') as {
    opentelemetry: { proto: { collector: { logs: { v1: { ExportLogsServiceRequest: { decode(bytes: Uint8Array): unknown }; ExportLogsServiceResponse: { encode(message: object): { finish(): Uint8Array } } } } } } };
  };
  const { ExportLogsServiceRequest, ExportLogsServiceResponse } = root.opentelemetry.proto.collector.logs.v1;
  const records: ReceivedLogRecord[] = [];
  const raw: Buffer[] = [];
  const server = createHttpServer((req, res) => {
    void readBody(req).then((body) => {
      raw.push(body);
      if (req.url !== '/v1/logs' || req.headers['content-type'] !== 'application/x-protobuf') {
        res.writeHead(415).end();
        return;
      }
      const request = ExportLogsServiceRequest.decode(body) as {
        resourceLogs?: { resource?: { attributes?: { key: string; value?: AnyValue }[] }; scopeLogs?: { logRecords?: { eventName?: string; body?: AnyValue; severityText?: string; timeUnixNano?: { toString(): string }; attributes?: { key: string; value?: AnyValue }[] }[] }[] }[];
      };
      for (const resourceLogs of request.resourceLogs ?? []) {
        const resource = attributesOf(resourceLogs.resource?.attributes);
        for (const scope of resourceLogs.scopeLogs ?? []) {
          for (const record of scope.logRecords ?? []) {
            records.push({
              eventName: record.eventName === '' ? undefined : record.eventName,
              body: plain(record.body) as string | undefined,
              severityText: record.severityText,
              timeUnixNano: record.timeUnixNano?.toString() ?? '',
              attributes: attributesOf(record.attributes),
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(ExportLogsServiceResponse.encode({}).finish()));
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/v1/logs`, records, raw, close: () => closeServer(server) };
}

// ------------------------------------------------------------------ webhook

export interface WebhookBatch {
  body: string;
  timestamp: string;
  signature: string;
  /** Whether the signature verified under the receiver's key. */
  verified: boolean;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  batches: WebhookBatch[];
  /** Every record of every verified batch, in arrival order (duplicates included). */
  records(): Record<string, unknown>[];
  /** Stops listening (connections refused) until start() again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Delays each answer, to hold batches in flight. */
  delayMs: number;
  close(): Promise<void>;
}

export function verifyWebhookSignature(key: string, timestamp: string, body: string, signature: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export async function startWebhookReceiver(key: string, certificate: LoopbackCertificate, port = 0): Promise<WebhookReceiver> {
  const batches: WebhookBatch[] = [];
  let server: Server | undefined;
  const receiver: WebhookReceiver = {
    url: '',
    port,
    batches,
    delayMs: 0,
    records: () => batches.filter((batch) => batch.verified).flatMap((batch) => batch.body.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)),
    async start() {
      const created = createHttpsServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
        void readBody(req).then(async (body) => {
          const text = body.toString('utf8');
          const timestamp = String(req.headers['x-assent-timestamp'] ?? '');
          const signature = String(req.headers['x-assent-signature'] ?? '');
          const verified = verifyWebhookSignature(key, timestamp, text, signature);
          if (receiver.delayMs > 0) await sleep(receiver.delayMs);
          batches.push({ body: text, timestamp, signature, verified });
          res.writeHead(verified ? 204 : 401).end();
        });
      }) as unknown as Server;
      receiver.port = await listen(created, receiver.port);
      receiver.url = `https://127.0.0.1:${receiver.port}/hook`;
      server = created;
    },
    async stop() {
      if (server !== undefined) await closeServer(server);
      server = undefined;
    },
    close: () => receiver.stop(),
  };
  await receiver.start();
  return receiver;
}
