// Issue 20 item 5 (first part): the foreground daemon says when its web page
// cannot be served — a busy web.listen port showed only in daemon.log.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { makeTempHome } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';

const cleanups = cleanupsAfterEach();

describe('issue 20: web listener errors in the foreground daemon', () => {
  it('with the web.listen port taken, `assent daemon run` in a terminal says the page is not served and why', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = (busy.address() as AddressInfo).port;
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: `127.0.0.1:${port}` } }), { mode: 0o600 });
    const outFile = join(home.home, '..', 'daemon.out');
    const session = new PtySession(['daemon', 'run'], { outFile, env: { ASSENT_HOME: home.home } });
    cleanups.push(() => session.kill());
    await session.waitFor(/the web page is not served: .*(in use|EADDRINUSE)/, 15_000);
    await session.waitFor(/Waiting for requests/);
    session.type('q');
    expect((await session.finish(outFile)).exitCode).toBe(0);
  });
});
