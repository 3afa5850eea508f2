// Issue 37 item 3: with web.listen's port taken, the foreground daemon said the
// advice twice with a double period ("…or stop what uses it.. Free that port and
// restart the daemon, or change web.listen…"). The cause and the fix now come
// once each, in one sentence, from the listener's own error.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { webNotServedNotice } from '../../../../src/heads/cli/commands/daemon.js';
import { listenFailureMessage, startHttpHead } from '../../../../src/heads/http/httpServer.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}`), { code });
}

describe('the web page is not served: one sentence, the cause once and the fix once', () => {
  it('a taken web.listen port: the foreground line names the port and EADDRINUSE once, says to stop the other program or change web.listen once, with one full stop', async () => {
    const busy = createServer();
    servers.push(busy);
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const listen = `127.0.0.1:${(busy.address() as AddressInfo).port}`;
    const failure = await startHttpHead(listen, () => ({ app: new Hono(), closeStreams: () => undefined, openStreams: () => 0 })).then(
      () => undefined,
      (error: unknown) => error as Error & { type?: string },
    );
    expect(failure?.type).toBe('unavailable');
    const line = webNotServedNotice(failure?.message ?? '');
    expect(line).toBe(
      `assent: the web page is not served: cannot listen on ${listen} because another program uses that port (EADDRINUSE); ` +
        'stop that program and restart the daemon, or set web.listen in config.json to a free port (0 picks one) and confirm it with `assent config reload`.',
    );
    expect(line).not.toMatch(/\.\./);
    for (const part of ['EADDRINUSE', 'web.listen', 'restart the daemon', 'config reload', listen]) expect(occurrences(line, part), part).toBe(1);
  });

  it('other listen failures name their own cause and a fix that fits it, each once', () => {
    expect(listenFailureMessage('127.0.0.1:80', errno('EACCES'))).toBe(
      'cannot listen on 127.0.0.1:80 because this user may not open that port (EACCES); set web.listen in config.json to a port above 1023 (0 picks one) and confirm it with `assent config reload`.',
    );
    expect(listenFailureMessage('10.9.9.9:7788', errno('EADDRNOTAVAIL'))).toMatch(/no network interface of this machine has that address \(EADDRNOTAVAIL\); set web\.listen .* such as 127\.0\.0\.1, and confirm it with `assent config reload`\.$/);
    expect(listenFailureMessage('127.0.0.1:7788', errno('EMFILE'))).toBe(
      'cannot listen on 127.0.0.1:7788 (EMFILE); set web.listen in config.json to a free port (0 picks one) and confirm it with `assent config reload`.',
    );
  });

  it('a listener error that has no full stop of its own gets one, never two', () => {
    expect(webNotServedNotice('web.listen "0.0.0.0:7788" is not a loopback address and no TLS is configured; see docs/remote.md')).toBe(
      'assent: the web page is not served: web.listen "0.0.0.0:7788" is not a loopback address and no TLS is configured; see docs/remote.md.',
    );
    expect(webNotServedNotice('cannot listen on x.')).toBe('assent: the web page is not served: cannot listen on x.');
  });
});
