// R-AUD-6: /metrics on the HTTP head parses with an OpenMetrics parser (Python
// prometheus_client's, a strict one) and counts what the daemon decided; a head
// reachable off this machine (here: behind a proxy, web.publicUrl) refuses it
// without a bearer token.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { runCliInTerminal } from '../helpers/pty.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function get(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path, method: 'GET', headers: { host: target.host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Parses OpenMetrics text with prometheus_client's OpenMetrics parser: `{family: [[sample, labels, value]]}`, or throws what it rejected. */
function parseOpenMetrics(text: string): Record<string, [string, Record<string, string>, number][]> {
  const script = [
    'import sys, json',
    'from prometheus_client.openmetrics.parser import text_string_to_metric_families',
    'families = list(text_string_to_metric_families(sys.stdin.read()))',
    'print(json.dumps({f.name: [[s.name, s.labels, s.value] for s in f.samples] for f in families}))',
  ].join('\n');
  // Debian's interpreter, where python3-prometheus-client installs the parser (.ci/run), whatever python3 PATH finds first.
  const run = spawnSync('/usr/bin/python3', ['-c', script], { input: text, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`OpenMetrics parser refused the text: ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, [string, Record<string, string>, number][]>;
}

async function startDaemon(web: Record<string, unknown>): Promise<{ home: TempHome; url: string; client: DaemonClient }> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  const config = {
    notifications: false,
    servers: { fs: { command: 'true' } },
    policy: { default: 'allow', tools: { 'fs/move_file': 'deny' } },
    web,
    audit: { export: [{ kind: 'cef', name: 'cef', file: join(home.home, 'cef.log') }] },
  };
  writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
  await home.startDaemon();
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => client.close());
  let url = '';
  await expect
    .poll(async () => {
      url = (await client.call<{ web: { url: string | null } }>('daemon.status', {})).web.url ?? '';
      return url;
    }, { timeout: 5000 })
    .not.toBe('');
  return { home, url, client };
}

describe('R-AUD-6 /metrics', () => {
  it('on a loopback head: OpenMetrics text that a strict parser accepts, counting decisions by outcome and channel, pending approvals and export lag', async () => {
    const { url, client } = await startDaemon({ listen: '127.0.0.1:0' });
    const { callId } = await client.call<{ callId: string }>('calls.authorize', { sessionId: 's-m', server: 'fs', tool: 'read_file', args: { path: '/x' }, annotations: { readOnlyHint: true } });
    await client.call('calls.finish', { callId, outcome: 'ok' });
    await expect(client.call('calls.authorize', { sessionId: 's-m', server: 'fs', tool: 'move_file', args: {} })).rejects.toMatchObject({ type: 'policy_denied' });

    let families: ReturnType<typeof parseOpenMetrics> = {};
    await expect
      .poll(async () => {
        const reply = await get(url, '/metrics');
        expect(reply.status).toBe(200);
        expect(reply.type).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
        expect(reply.body.trimEnd().endsWith('# EOF')).toBe(true);
        families = parseOpenMetrics(reply.body);
        return (families['assent_decisions'] ?? []).filter(([name]) => name === 'assent_decisions_total').length;
      }, { timeout: 5000 })
      .toBe(2);
    const decisions = families['assent_decisions']!.filter(([name]) => name === 'assent_decisions_total');
    expect(decisions).toEqual(expect.arrayContaining([['assent_decisions_total', { outcome: 'ok', channel: 'none' }, 1], ['assent_decisions_total', { outcome: 'denied', channel: 'none' }, 1]]));
    expect(families['assent_pending_approvals']).toEqual([['assent_pending_approvals', {}, 0]]);
    expect(families['assent_export_lag_records']?.[0]?.[1]).toEqual({ sink: 'cef' });
    expect(Object.keys(families)).toEqual(expect.arrayContaining(['assent_consent_wait_seconds', 'assent_decision_latency_seconds', 'assent_hook_decisions', 'assent_confined_runs']));
    const latency = families['assent_decision_latency_seconds']!.find(([name]) => name === 'assent_decision_latency_seconds_count');
    expect(latency?.[2]).toBe(2);
  });

  it('behind a proxy (web.publicUrl), where requests reach it from afar: refused without the bearer token, served with it', async () => {
    const { home, url } = await startDaemon({ listen: '127.0.0.1:0', publicUrl: 'https://assent.example.test' });
    const refused = await get(url, '/metrics');
    expect(refused.status).toBe(401);
    expect(refused.body).not.toContain('assent_decisions');
    expect((await get(url, '/metrics', { authorization: 'Bearer ast1_not-a-real-token-aaaaaaaaaaaaaaaaaaaaaaaaaaa' })).status).toBe(401);
    const tokenFile = join(home.home, '..', 'metrics.token');
    expect((await runCliInTerminal(home, ['token', 'create', '--name', 'metrics', '--ttl', '1h', '--out', tokenFile])).code).toBe(0);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const served = await get(url, '/metrics', { authorization: `Bearer ${token}` });
    expect(served.status).toBe(200);
    expect(parseOpenMetrics(served.body)['assent_pending_approvals']).toBeDefined();
  });
});
