// Binding the HTTP head (R-WEB-1): port 0 resolves to the bound port before the
// first request, the Host guard uses it, and bad or non-loopback addresses are named.
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpHead, type HttpHead } from '../../../../src/heads/http/httpServer.js';
import { isLoopbackAddress } from '../../../../src/service/daemonRuntime.js';

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
