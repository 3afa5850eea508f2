// Request bodies at the HTTP head of a real `assent daemon run` (built binary,
// temp ASSENT_HOME, web.listen on port 0): the 1 MiB cap holds while a body
// streams, on every route and before authentication, and a flood of endless
// chunked bodies neither grows the daemon nor stops it answering (hardening 1).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type CliResult, type TempHome } from '../helpers/daemon.js';
import { sendRaw, type RawResult } from '../helpers/httpStream.js';
import { runCliInTerminal } from '../helpers/pty.js';

const MiB = 1024 * 1024;
const RSS_LIMIT_BYTES = 200 * MiB;

const homes: TempHome[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await home.cleanup();
});

interface WebDaemon {
  home: TempHome;
  pid: number;
  host: string;
  port: number;
}

async function startWebDaemon(): Promise<WebDaemon> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
  const child = await home.startDaemon();
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code).toBe(0);
  const url = new URL((JSON.parse(web.stdout) as { data: { url: string } }).data.url);
  expect(child.pid).toBeDefined();
  return { home, pid: child.pid ?? 0, host: url.host, port: Number(url.port) };
}

async function createToken(daemon: WebDaemon): Promise<string> {
  const out = join(daemon.home.home, '..', 'limits.token');
  expect((await runCliInTerminal(daemon.home, ['token', 'create', '--name', 'limits', '--ttl', '1h', '--out', out])).code).toBe(0);
  return readFileSync(out, 'utf8').trim();
}

function rssBytes(pid: number): number {
  const kib = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib ?? 'NaN') * 1024;
}

function expectCutAtCap(result: RawResult, what: string): void {
  expect(result.status, what).toBe(413);
  expect(result.closedByServer, what).toBe(true);
  expect(result.text, what).toContain('"code":"frame_too_large"');
  // The answer came once the cap was passed, not before, and long before the client's 64 MiB.
  expect(result.sentBytes, what).toBeGreaterThan(MiB);
  expect(result.sentBytes, what).toBeLessThan(32 * MiB);
}

describe('HTTP request body limits in a running daemon (hardening 1)', () => {
  it(
    'R-WEB-4 (hardening 1) 4 unauthenticated connections streaming chunked bodies for 20 s: the daemon stays under 200 MB RSS, each is cut with 413 at the cap, and `assent pending` answers throughout',
    async () => {
      const daemon = await startWebDaemon();
      const baseline = rssBytes(daemon.pid);
      const deadline = Date.now() + 20_000;
      let maxRss = baseline;
      let overLimit = false;
      const sample = (): void => {
        try {
          maxRss = Math.max(maxRss, rssBytes(daemon.pid));
        } catch {
          overLimit = true; // the daemon is gone
        }
        if (maxRss >= RSS_LIMIT_BYTES) overLimit = true;
      };
      const sampler = setInterval(sample, 100);
      const results: RawResult[] = [];
      // Each worker streams an endless chunked body to the pairing route with a forged Origin,
      // then reconnects, until the 20 s are over; it abandons the flood once the daemon passes the limit.
      const flood = async (): Promise<void> => {
        while (Date.now() < deadline && !overLimit) {
          results.push(
            await sendRaw({
              host: '127.0.0.1',
              port: daemon.port,
              method: 'POST',
              path: '/api/v1/pair',
              headers: { Host: daemon.host, Origin: `http://${daemon.host}`, 'Content-Type': 'application/json' },
              chunked: { chunkBytes: 64 * 1024, maxBytes: 64 * MiB, paceMs: 5 },
              timeoutMs: 15_000,
              onChunk: () => !overLimit && Date.now() < deadline + 5000,
            }),
          );
        }
      };
      const answers: CliResult[] = [];
      const probe = async (): Promise<void> => {
        while (Date.now() < deadline && !overLimit) answers.push(await daemon.home.runCli(['pending', '--json'], { timeoutMs: 15_000 }));
      };
      try {
        await Promise.all([flood(), flood(), flood(), flood(), probe()]);
      } finally {
        clearInterval(sampler);
      }
      sample();
      expect(maxRss, `daemon RSS peaked at ${Math.round(maxRss / MiB)} MB (baseline ${Math.round(baseline / MiB)} MB)`).toBeLessThan(RSS_LIMIT_BYTES);
      expect(results.length).toBeGreaterThanOrEqual(8);
      for (const [index, result] of results.entries()) expectCutAtCap(result, `flood connection ${index}`);
      expect(answers.length).toBeGreaterThanOrEqual(2);
      for (const answer of answers) {
        expect(answer.code).toBe(0);
        expect(JSON.parse(answer.stdout)).toMatchObject({ ok: true, data: [] });
      }
      const log = readFileSync(daemon.home.paths.log, 'utf8');
      expect(log).toMatch(/"status":413/);
    },
    60_000,
  );

  it('R-WEB-4 (hardening 1) the event stream route cuts a chunked body at the cap with 413, authenticated or not', async () => {
    const daemon = await startWebDaemon();
    const token = await createToken(daemon);
    for (const authorization of [undefined, `Bearer ${token}`]) {
      const headers: Record<string, string> = { Host: daemon.host };
      if (authorization !== undefined) headers['Authorization'] = authorization;
      const result = await sendRaw({
        host: '127.0.0.1',
        port: daemon.port,
        method: 'GET',
        path: '/api/v1/events',
        headers,
        chunked: { chunkBytes: 64 * 1024, maxBytes: 64 * MiB, paceMs: 1 },
        timeoutMs: 15_000,
      });
      expectCutAtCap(result, authorization === undefined ? 'unauthenticated' : 'with a token');
      expect(result.text).not.toContain('text/event-stream');
    }
  });

  it('R-WEB-4 (hardening 1) a declared Content-Length over 1 MiB gets 413 at once; a chunked body just under the cap works on an authenticated route', async () => {
    const daemon = await startWebDaemon();
    const token = await createToken(daemon);
    for (const [path, extra] of [
      ['/api/v1/pair', { Origin: `http://${daemon.host}` }],
      ['/api/v1/approvals.list', { Authorization: `Bearer ${token}` }],
    ] as const) {
      const declared = await sendRaw({
        host: '127.0.0.1',
        port: daemon.port,
        method: 'POST',
        path,
        headers: { Host: daemon.host, 'Content-Type': 'application/json', 'Content-Length': String(MiB + 1), ...extra },
        timeoutMs: 10_000,
      });
      expect(declared.status, path).toBe(413);
      expect(declared.closedByServer, path).toBe(true);
      expect(declared.text).toContain('"code":"frame_too_large"');
    }

    // `{}` followed by whitespace is valid JSON: the whole body is read and parsed, and the operation runs.
    const padded = `{}${' '.repeat(MiB - 12)}`;
    const chunks: string[] = [];
    for (let at = 0; at < padded.length; at += 50_000) chunks.push(padded.slice(at, at + 50_000));
    const body = `${chunks.map((chunk) => `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`).join('')}0\r\n\r\n`;
    const ok = await sendRaw({
      host: '127.0.0.1',
      port: daemon.port,
      method: 'POST',
      path: '/api/v1/approvals.list',
      headers: { Host: daemon.host, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', Authorization: `Bearer ${token}`, Connection: 'close' },
      body,
      timeoutMs: 10_000,
    });
    expect(ok.status).toBe(200);
    expect(ok.text.split('\r\n\r\n')[1]).toBe('[]');
  });
});
