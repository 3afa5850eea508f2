// Binding the HTTP head (R-WEB-1): port 0 resolves to the bound port before the
// first request, the Host guard uses it, and bad or non-loopback addresses are named.
// Request bodies are capped and timed at the listener, before any route (hardening 1).
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../../../src/heads/http/httpApp.js';
import { startHttpHead, type HttpHead } from '../../../../src/heads/http/httpServer.js';
import { isLoopbackAddress } from '../../../../src/heads/http/httpServer.js';
import { sendRaw } from '../../../helpers/httpStream.js';

const heads: HttpHead[] = [];
afterEach(async () => {
  for (const head of heads.splice(0)) await head.close();
});

describe('startHttpHead', () => {
  it('R-WEB-1 port 0 binds a free port and the app sees the bound address', async () => {
    let seen = '';
    const head = await startHttpHead('127.0.0.1:0', (address) => {
      const app = new Hono();
      app.get('/', (c) => {
        seen = address();
        return c.text('ok');
      });
      return { app, closeStreams: () => undefined, openStreams: () => 0 };
    });
    heads.push(head);
    expect(head.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(head.address).not.toBe('127.0.0.1:0');
    expect(head.url).toBe(`http://${head.address}/`);
    const response = await fetch(head.url);
    expect(await response.text()).toBe('ok');
    expect(seen).toBe(head.address);
  });

  it('R-WEB-1 an invalid listen value is a config error naming web.listen', async () => {
    await expect(startHttpHead('nonsense', () => ({ app: new Hono(), closeStreams: () => undefined, openStreams: () => 0 }))).rejects.toMatchObject({
      type: 'config_invalid',
      message: expect.stringContaining('web.listen'),
    });
  });

  it('R-WEB-1 only loopback addresses count as loopback', () => {
    for (const address of ['127.0.0.1:7788', '127.1.2.3:1', '[::1]:7788', 'localhost:7788']) expect(isLoopbackAddress(address)).toBe(true);
    for (const address of ['0.0.0.0:7788', '192.168.1.20:7788', '[::]:7788', 'example.com:80']) expect(isLoopbackAddress(address)).toBe(false);
  });
});

describe('request body limits at the listener (hardening 1)', () => {
  const MiB = 1024 * 1024;

  /** A test app with a body-reading route, an SSE-like route that never reads its body, and a 404. */
  async function startLimitedHead(options: Parameters<typeof startHttpHead>[2] = {}): Promise<{ head: HttpHead; port: number; reached: string[] }> {
    const reached: string[] = [];
    const head = await startHttpHead(
      '127.0.0.1:0',
      () => {
        const app = new Hono();
        app.post('/read', async (c) => {
          reached.push('read');
          const text = await c.req.text();
          return c.json({ bytes: Buffer.byteLength(text), allA: /^a*$/.test(text) });
        });
        app.get('/events', (c) => {
          reached.push('events');
          return c.body(new ReadableStream({ start: (controller) => controller.enqueue(new TextEncoder().encode('data: {}\n\n')) }), 200, {
            'Content-Type': 'text/event-stream',
          });
        });
        app.all('*', (c) => {
          reached.push('other');
          return c.text('nothing here', 404);
        });
        return { app, closeStreams: () => undefined, openStreams: () => 0 };
      },
      options,
    );
    heads.push(head);
    return { head, port: Number(head.address.split(':').pop()), reached };
  }

  it('R-WEB-4 (hardening 1) a chunked body is answered 413 at 1 MiB and the connection closed, on a reading route, an SSE route and an unknown route, before any handler runs', async () => {
    const { head, port, reached } = await startLimitedHead();
    for (const [method, path] of [
      ['POST', '/read'],
      ['GET', '/events'],
      ['PUT', '/nowhere'],
    ] as const) {
      // An unbounded client would send forever; this one stops at 8 MiB and ends the body, so a
      // listener that reads everything answers 200 (or streams) instead of 413 and the test fails.
      const result = await sendRaw({
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { Host: head.address, 'Content-Type': 'application/json' },
        chunked: { chunkBytes: 64 * 1024, maxBytes: 8 * MiB, end: true },
        timeoutMs: 10_000,
      });
      expect(result.status, `${method} ${path}`).toBe(413);
      expect(result.closedByServer, `${method} ${path}`).toBe(true);
      expect(result.text).toContain('"code":"frame_too_large"');
      expect(result.text).toContain(`Content-Security-Policy: ${CONTENT_SECURITY_POLICY}`);
    }
    expect(reached).toEqual([]);
  });

  it('R-WEB-4 (hardening 1) a declared Content-Length over 1 MiB is answered 413 before any byte of the body is read', async () => {
    const { head, port, reached } = await startLimitedHead();
    const result = await sendRaw({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/read',
      headers: { Host: head.address, 'Content-Type': 'application/json', 'Content-Length': String(MiB + 1) },
      timeoutMs: 5000,
    });
    expect(result.status).toBe(413);
    expect(result.closedByServer).toBe(true);
    expect(reached).toEqual([]);
  });

  it('R-WEB-4 (hardening 1) a chunked body just under 1 MiB reaches the handler whole', async () => {
    const { head, port, reached } = await startLimitedHead();
    const result = await sendRaw({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/read',
      headers: { Host: head.address, 'Content-Type': 'application/json', Connection: 'close' },
      chunked: { chunkBytes: 60_000, maxBytes: MiB - 10, end: true },
      timeoutMs: 10_000,
    });
    expect(result.status).toBe(200);
    expect(result.text).toContain(`{"bytes":${MiB - 10},"allA":true}`);
    expect(reached).toEqual(['read']);
  });

  it('R-WEB-4 (hardening 1) a body that trickles forever is cut by the request timeout', async () => {
    const { head, port, reached } = await startLimitedHead({ requestTimeoutMs: 1000 });
    const result = await sendRaw({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/read',
      headers: { Host: head.address, 'Content-Type': 'application/json' },
      chunked: { chunkBytes: 1, maxBytes: 10_000, paceMs: 100 },
      timeoutMs: 8000,
    });
    expect(result.closedByServer).toBe(true);
    expect(result.status).toBe(408);
    expect(result.elapsedMs).toBeLessThan(6000);
    expect(result.sentBytes).toBeLessThan(100);
    expect(reached).toEqual([]);
  });

  it('R-WEB-4 (hardening 1, issue 19 item 7) at the limit a new connection makes room by dropping the oldest unauthenticated one still sending its request, so held bodies bound the memory and a slow client cannot crowd others out', async () => {
    const { head, port } = await startLimitedHead({ maxConnections: 2 });
    const held = [0, 1].map((index) =>
      sendRaw({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/read',
        headers: { Host: head.address, 'Content-Type': 'application/json' },
        chunked: { chunkBytes: 1, maxBytes: 20, paceMs: 100 + index * 10 },
        timeoutMs: 1500,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(head.connections().connections).toBe(2);
    const third = await sendRaw({ host: '127.0.0.1', port, method: 'GET', path: '/nowhere', headers: { Host: head.address, Connection: 'close' }, timeoutMs: 3000 });
    expect(third.status).toBe(404);
    const [first] = await Promise.all(held);
    expect(first?.closedByServer).toBe(true);
    expect(head.connections().dropped).toBeGreaterThanOrEqual(1);
    const later = await sendRaw({ host: '127.0.0.1', port, method: 'GET', path: '/nowhere', headers: { Host: head.address, Connection: 'close' }, timeoutMs: 3000 });
    expect(later.status).toBe(404);
  });
});
