// Issue 19 item 7 at the HTTP head of a real `assent daemon run`: 200 slow
// connections from one address (loopback, bounded in time), each trickling a
// request it never finishes, while a paired page on that same address keeps
// its event stream, lists approvals and approves one. The flood keeps at most
// its per-address share; the page's connections make room by dropping the
// flood's, and its authenticated event stream lives on its own budget.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import { runCliInTerminal } from '../helpers/pty.js';

const cleanups = cleanupsAfterEach();
const FLOOD = 200;
const PER_ADDRESS = 16;

async function pageSession(home: TempHome): Promise<{ url: URL; cookie: string }> {
  const web = await runCliInTerminal(home, ['web', '--json']);
  expect(web.code, web.stderr).toBe(0);
  const { url, code } = (JSON.parse(web.stdout) as { data: { url: string; code: string } }).data;
  const base = new URL(url);
  const paired = await fetch(new URL('/api/v1/pair', base), { method: 'POST', headers: { origin: base.origin, 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
  expect(paired.status).toBe(200);
  const cookie = /assent_session=[^;]+/.exec(paired.headers.get('set-cookie') ?? '')?.[0] ?? '';
  expect(cookie).not.toBe('');
  return { url: base, cookie };
}

/** One connection that sends a request line and then one header byte every 400 ms, never ending its headers. */
function slowConnection(port: number, closed: { count: number }): Socket {
  const socket = connect({ host: '127.0.0.1', port });
  let timer: ReturnType<typeof setInterval> | undefined;
  socket.on('connect', () => {
    socket.write('GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    timer = setInterval(() => socket.write('a'), 400);
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    clearInterval(timer);
    closed.count += 1;
  });
  return socket;
}

describe('issue 19 item 7: the LAN listener keeps serving under a slow-request flood', () => {
  it(
    'R-WEB-1 (hardening 19.7) 200 slow connections from one address hold at most 16; a paired page on the same address keeps its event stream, lists and approves',
    async () => {
      const home = makeTempHome();
      cleanups.push(() => home.cleanup());
      mkdirSync(home.home, { recursive: true, mode: 0o700 });
      writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { commands: { default: 'prompt', rules: [] } } }), { mode: 0o600 });
      await home.startDaemon();
      const { url, cookie } = await pageSession(home);
      const port = Number(url.port);

      // The page's event stream, opened before the flood.
      const events: string[] = [];
      const stream = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/events', headers: { host: url.host, cookie } }, resolve);
        req.on('error', reject);
        req.end();
      });
      cleanups.push(() => stream.destroy());
      expect(stream.statusCode).toBe(200);
      stream.setEncoding('utf8').on('data', (text: string) => events.push(text));

      const closed = { count: 0 };
      const flood = Array.from({ length: FLOOD }, () => slowConnection(port, closed));
      cleanups.push(() => {
        for (const socket of flood) socket.destroy();
      });
      // The flood is in place: all but the address's share are gone again.
      await expect.poll(() => closed.count, { timeout: 10_000 }).toBeGreaterThanOrEqual(FLOOD - PER_ADDRESS);

      // Legitimate requests from the same address are all answered while the flood holds its share.
      const list = (): Promise<Response> =>
        fetch(new URL('/api/v1/approvals.list', url), { method: 'POST', headers: { cookie, origin: url.origin, 'content-type': 'application/json' }, body: '{}' });
      for (let i = 0; i < 8; i += 1) expect((await list()).status).toBe(200);

      // An agent's call waits for a person; the page sees it on its stream and approves it.
      const hook = runHook(['claude-code', '--timeout', '60'], shellEvent('claude-code', 'echo flood'), home.env, 45_000);
      let id: string | undefined;
      for (let i = 0; i < 200 && id === undefined; i += 1) {
        id = ((await (await list()).json()) as { id: string }[])[0]?.id;
        if (id === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(id).toBeDefined();
      await expect.poll(() => events.join('').includes(`"id":"${id}"`), { timeout: 5000 }).toBe(true);
      const decided = await fetch(new URL('/api/v1/approvals.decide', url), {
        method: 'POST',
        headers: { cookie, origin: url.origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
        body: JSON.stringify({ id, behavior: 'allow' }),
      });
      expect(decided.status, await decided.clone().text()).toBe(200);
      const answered = await hook;
      expect(answered.code).toBe(0);
      expect(answerOf(answered.stdout).decision).toBe('allow');
      // The stream was never dropped to make room: it still carries the resolution.
      await expect.poll(() => events.join('').includes('approval_resolved'), { timeout: 5000 }).toBe(true);
      expect(stream.destroyed).toBe(false);
      // The flood kept no more than its share the whole time.
      expect(FLOOD - closed.count).toBeLessThanOrEqual(PER_ADDRESS);
    },
    60_000,
  );
});
