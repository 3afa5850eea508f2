// The traps a newcomer met on a first run, through the built binary (hardening 1):
// a config.json written after the first `npm start`, `assent mcp` typed into a
// terminal, a shared directory as ASSENT_HOME, a mistyped ASSENT_HOME, a bad
// `rules add` flag, and the order of confirmations in `assent watch`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { connectGateway, type Cleanups } from '../helpers/fsStack.js';
import { PtySession } from '../helpers/pty.js';
import { filesystemBin } from './mcpFixtures.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempHome(): TempHome {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  return home;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'assent-first-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function pty(home: TempHome, args: string[], env: Record<string, string> = {}): { session: PtySession; outFile: string } {
  const outFile = join(tempDir(), 'stdout');
  const session = new PtySession(args, { outFile, env: { ASSENT_HOME: home.home, ...env } });
  cleanups.push(() => session.kill());
  return { session, outFile };
}

async function configChangedOnDisk(home: TempHome): Promise<boolean> {
  const status = await home.runCli(['daemon', 'status', '--json']);
  return (JSON.parse(status.stdout) as { data: { config: { changedOnDisk: boolean } } }).data.config.changedOnDisk;
}

describe('R-CFG-4 (hardening 1) a config.json written after the first start', () => {
  it('assent mcp and daemon status name the unconfirmed change and `assent config reload`; after the reload the gateway fronts the server', async () => {
    const home = tempHome();
    const served = tempDir();
    // `npm start` on a fresh machine: the daemon pins the defaults (no servers).
    await home.startDaemon();
    writeFileSync(
      home.paths.config,
      JSON.stringify({ notifications: false, servers: { fs: { command: process.execPath, args: [filesystemBin, served] } }, policy: { default: 'deny' } }),
      { mode: 0o600 },
    );
    await expect.poll(() => configChangedOnDisk(home), { timeout: 5000 }).toBe(true);

    const noAutoSpawn = { env: { ASSENT_NO_AUTOSPAWN: '1' } };
    const mcp = await home.runCli(['mcp'], noAutoSpawn);
    expect(mcp.code).toBe(65);
    expect(mcp.stderr).toContain(home.paths.config);
    expect(mcp.stderr).toMatch(/changed since the daemon pinned it/);
    expect(mcp.stderr).toContain('assent config reload');
    expect(mcp.stderr).not.toMatch(/\bat .*\.js:\d+/);

    const named = await home.runCli(['mcp', '--server', 'fs'], noAutoSpawn);
    expect(named.code).toBe(64);
    expect(named.stderr).toContain('--server fs');
    expect(named.stderr).toContain('assent config reload');

    const status = await home.runCli(['daemon', 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/changed since the daemon pinned it.*assent config reload/);

    const check = await home.runCli(['config', 'check']);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('is valid');
    expect(check.stdout).toMatch(/changed since the daemon pinned it.*assent config reload/);

    // The reload shows its diff with a plain arrow (values from the file stay escaped) and applies after the code.
    const { session, outFile } = pty(home, ['config', 'reload']);
    const code = await session.waitFor(/Type ([a-z]{4}) to apply/);
    expect(session.screen).toContain('policy.default: "allow" → "deny"');
    expect(session.screen).not.toContain('\\u2192');
    expect(session.screen).toContain('servers.fs: added');
    session.type(`${code[1]}\r`);
    expect((await session.finish(outFile)).exitCode).toBe(0);
    expect(await configChangedOnDisk(home)).toBe(false);

    const { client, stderr } = await connectGateway(cleanups, home);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('read_text_file');
    // The note about an unconfirmed change is gone. (Other lines may still name the command: a
    // web port another program holds says that a changed web.listen is confirmed with it.)
    const unconfirmed = /changed since the daemon pinned it|review and apply the change/;
    expect(stderr()).not.toMatch(unconfirmed);
    const unchanged = await home.runCli(['daemon', 'status']);
    expect(unchanged.stdout).not.toMatch(unconfirmed);
    expect((await home.runCli(['config', 'check'])).stdout).not.toMatch(unconfirmed);
  });
});

describe('(hardening 1) `assent mcp` started by hand in a terminal', () => {
  it('says on stderr that an MCP client launches it, shows the client snippet and docs/mcp.md, and keeps serving until EOF', async () => {
    const home = tempHome();
    mkdirSync(home.home, { mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: process.execPath, args: [filesystemBin, tempDir()] } } }), {
      mode: 0o600,
    });
    const { session, outFile } = pty(home, ['mcp'], { ASSENT_NO_AUTOSPAWN: '1' });
    await session.waitFor(/docs\/mcp\.md/);
    expect(session.screen).toMatch(/meant to be launched by an MCP client/);
    expect(session.screen).toContain('claude mcp add');
    expect(session.screen).toMatch(/"mcpServers"/);
    expect(session.screen).toMatch(/Ctrl\+D/);
    // Still an MCP server: end of input ends it cleanly.
    await new Promise((resolve) => setTimeout(resolve, 500));
    session.type('\x04');
    expect((await session.finish(outFile)).exitCode).toBe(0);
  });

  it('an MCP client (stdin not a terminal) gets no such note', async () => {
    const home = tempHome();
    const result = await home.runCli(['mcp'], { env: { ASSENT_NO_AUTOSPAWN: '1' } });
    expect(result.code).toBe(65);
    expect(result.stderr).not.toMatch(/meant to be launched by an MCP client/);
  });
});

describe('R-STATE-1 (hardening 1) state-directory advice', () => {
  it('ASSENT_HOME=/tmp is refused without advising chmod or chown of /tmp; a private directory is suggested', async () => {
    const dir = tempDir();
    const home = tempHome();
    const result = await home.runCli(['daemon', 'status'], { env: { ASSENT_HOME: '/tmp', ASSENT_SOCKET: join(dir, 's.sock') } });
    expect(result.code).toBe(65);
    expect(result.stderr).toContain('/tmp');
    expect(result.stderr).not.toMatch(/chmod|chown/);
    expect(result.stderr).toContain('~/.assent');
    expect(existsSync('/tmp/identity.json')).toBe(false);
  });

  it('a missing parent of ASSENT_HOME is an error naming it, and nothing is created', async () => {
    const dir = tempDir();
    const home = tempHome();
    const state = join(dir, 'typo', 'deeper', 'assent');
    const result = await home.runCli(['daemon', 'status'], { env: { ASSENT_HOME: state } });
    expect(result.code).toBe(65);
    expect(result.stderr).toContain(join(dir, 'typo', 'deeper'));
    expect(existsSync(join(dir, 'typo'))).toBe(false);
  });
});

describe('R-POL-4 (hardening 1) `assent rules add` validates every flag before the preview', () => {
  it.each([
    [['--tool', 'fs/read_file', '--ttl', 'forever'], '--ttl'],
    [['--tool', 'fs/read_file', '--arg', 'path=/srv'], '--arg'],
    [['--tool', 'read_file'], '--tool'],
  ])('%j is refused (exit 64) without asking for a code', async (flags, named) => {
    const home = tempHome();
    await home.startDaemon();
    const { session, outFile } = pty(home, ['rules', 'add', ...flags]);
    const { exitCode } = await session.finish(outFile, 10_000);
    expect(exitCode).toBe(64);
    expect(session.screen).toContain(named);
    expect(session.screen).not.toMatch(/Type [a-z]{4} to add it/);
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    expect(await client.call('rules.list', { includeInactive: true })).toEqual([]);
  });
});

describe('R-CLI-3 (hardening 1) watch confirms a decision before it shows the next prompt', () => {
  it('"Approved ID." is printed before the next item\u2019s prompt', async () => {
    const home = tempHome();
    mkdirSync(home.home, { mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { tools: { 'fs/write_file': 'prompt' } } }), {
      mode: 0o600,
    });
    await home.startDaemon();
    const agent = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => agent.close());
    const calls = [1, 2].map((n) =>
      agent.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args: { n } }).then(
        () => 'allowed',
        () => 'refused',
      ),
    );
    await expect
      .poll(async () => (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] }).data.length, { timeout: 5000 })
      .toBe(2);
    const { session } = pty(home, ['watch']);
    const first = await session.waitFor(/\[([a-z]{5})\] type ([a-z]{4}) \+ Enter/);
    session.type(`${first[2]}\r`);
    const second = await session.waitFor(new RegExp(`\\[(?!${first[1]})([a-z]{5})\\] type ([a-z]{4}) \\+ Enter`));
    const screen = session.screen;
    const approvedAt = screen.indexOf(`Approved ${first[1]}.`);
    expect(approvedAt, screen).toBeGreaterThan(-1);
    expect(approvedAt).toBeLessThan(screen.indexOf(`[${second[1]}] type`));
    session.type('n');
    await session.waitFor(new RegExp(`Denied ${second[1]}\\.`));
    expect((await Promise.all(calls)).sort()).toEqual(['allowed', 'refused']);
  });
});
