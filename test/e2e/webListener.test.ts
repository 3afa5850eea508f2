// Issue 20 item 5: the foreground daemon says when its web page cannot be
// served — a busy web.listen port showed only in daemon.log; a confirmed
// change of web.listen moves the page without a restart; what applies only
// from the next daemon start says so in the reload diff and in daemon status.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { makeTempHome } from '../helpers/daemon.js';
import { PtySession, runInTerminal } from '../helpers/pty.js';

const cleanups = cleanupsAfterEach();

/** A port that was free a moment ago on 127.0.0.1. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function pageAnswers(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

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
    // Issue 37 item 3: the cause once, the fix once, one sentence with one full stop.
    await session.waitFor(/the web page is not served: cannot listen on 127\.0\.0\.1:\d+ because another program uses that port \(EADDRINUSE\); stop that program and restart the daemon, or set web\.listen/, 15_000);
    await session.waitFor(/Waiting for requests/);
    session.type('q');
    expect((await session.finish(outFile)).exitCode).toBe(0);
    const screen = session.screen.replace(/\s+/g, ' ');
    expect(screen).toContain('confirm it with `assent config reload`.');
    expect(screen).not.toMatch(/reload`\.\.|Free that port|stop what uses it/);
    expect(screen.split('restart the daemon').length - 1).toBe(1);
  });

  it('a confirmed reload that changes web.listen serves the page on the new port without a restart and closes the old one; a busy new port leaves the page where it was and says why', async () => {
    const [first, second] = [await freePort(), await freePort()];
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    const write = (config: object): void => writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
    write({ notifications: false, web: { listen: `127.0.0.1:${first}` } });
    await home.startDaemon();
    await expect.poll(() => pageAnswers(first), { timeout: 10_000 }).toBe(true);

    write({ notifications: false, web: { listen: `127.0.0.1:${second}` }, host: { name: 'renamed-host' } });
    const reload = await runInTerminal(['config', 'reload'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(reload.exitCode, reload.screen).toBe(0);
    // The diff marks what waits for a restart, and only that.
    expect(reload.screen).toMatch(/host\.name: .* → "renamed-host" \(from the next daemon start\)/);
    expect(reload.screen).toMatch(new RegExp(`web\\.listen: "127\\.0\\.0\\.1:${first}" → "127\\.0\\.0\\.1:${second}"\\s*$`, 'm'));
    await expect.poll(() => pageAnswers(second), { timeout: 10_000 }).toBe(true);
    expect(await pageAnswers(first)).toBe(false);
    // `assent web` (a pairing code: a terminal only) names the new address.
    const web = await runInTerminal(['web'], { env: { ASSENT_HOME: home.home } });
    expect(`${web.stdout}${web.screen}`).toContain(`127.0.0.1:${second}`);
    const status = await home.runCli(['daemon', 'status', '--json']);
    expect(JSON.parse(status.stdout).data.config.fromNextStart).toEqual(['host.name']);
    expect((await home.runCli(['daemon', 'status'])).stdout).toContain('note: confirmed, used from the next daemon start: host.name');

    // A busy port: the page stays on the one it has, and status says why.
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const taken = (busy.address() as AddressInfo).port;
    write({ ...JSON.parse(readFileSync(home.paths.config, 'utf8')), web: { listen: `127.0.0.1:${taken}` } });
    expect((await runInTerminal(['config', 'reload'], { env: { ASSENT_HOME: home.home }, typeCode: true })).exitCode).toBe(0);
    await expect
      .poll(async () => JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout).data.web.error ?? '', { timeout: 10_000 })
      .toContain(`127.0.0.1:${taken} could not be served`);
    expect(await pageAnswers(second)).toBe(true);
  });
});
