// Without a daemon, `assent mcp` obeys only what the operator confirmed
// (hardening 3, R-CFG-4, R-MCP-5): the configuration the daemon pinned, read
// read-only from the journal — never config.json as it is on disk. With no
// confirmed configuration at all, every call is refused and stderr says why.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome, auditLines } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';
import { runInTerminal } from '../helpers/pty.js';
import { filesystemBin } from './mcpFixtures.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

/** Confirmed: write_file denied, list_directory allowed. The edit on disk turns both around. */
const CONFIRMED = { default: 'allow', tools: { 'fs/write_file': 'deny' } };
const EDITED = { default: 'allow', tools: { 'fs/write_file': 'allow', 'fs/list_directory': 'deny' } };

async function stopDaemon(home: TempHome): Promise<void> {
  const stopped = await home.runCli(['daemon', 'stop']);
  expect(stopped.code, stopped.stderr).toBe(0);
}

describe('R-CFG-4 a gateway without a daemon obeys the confirmed configuration (hardening 3)', () => {
  it('an unconfirmed edit of config.json decides nothing: allow and deny follow the revision the daemon confirmed, and stderr says so', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: CONFIRMED });
    await stopDaemon(home);
    const config = JSON.parse(readFileSync(home.paths.config, 'utf8')) as Record<string, unknown>;
    writeFileSync(home.paths.config, JSON.stringify({ ...config, policy: EDITED }));

    const { client, stderr } = await connectGateway(cleanups, home);
    const target = join(dir, 'edited.txt');
    const write = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'the edit allowed me' } });
    expect(write.isError).toBe(true);
    expect(text(write)).toContain('policy.tools.fs/write_file');
    expect(existsSync(target)).toBe(false);
    const list = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(list.isError, text(list)).toBeFalsy();

    expect(stderr()).toContain('using the configuration last confirmed with the daemon');
    expect(stderr()).toContain('differs from the confirmed configuration');
    // The journal was only read: no daemon started, nothing migrated.
    expect((await home.runCli(['daemon', 'status', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } })).code).toBe(69);
  });

  it('with no journal (no daemon ever confirmed anything), every call is refused with a text saying why', async () => {
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    const dir = mkdtempSync(join(tmpdir(), 'assent-fs-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(
      home.paths.config,
      JSON.stringify({ notifications: false, servers: { fs: { command: process.execPath, args: [filesystemBin, dir] } }, policy: { default: 'allow' } }),
      { mode: 0o600 },
    );

    const { client, stderr } = await connectGateway(cleanups, home);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('list_directory');
    const list = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(list.isError).toBe(true);
    expect(text(list)).toContain('unavailable');
    expect(text(list)).toContain('no confirmed configuration');
    expect(text(list)).toContain('no assent daemon has run for this state directory');
    expect(stderr()).toContain('every tools/call is refused');
    expect(existsSync(home.paths.journal)).toBe(false);
  });
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Pending approvals as the operator sees them, polled until one shows (or the deadline passes). */
async function pendingWithin(home: TempHome, ms: number): Promise<{ id: string; tool: string }[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await home.runCli(['pending', '--json'], { env: { ASSENT_NO_AUTOSPAWN: '1' } });
    const list = r.code === 0 ? (JSON.parse(r.stdout) as { data: { id: string; tool: string }[] }).data : [];
    if (list.length > 0 || Date.now() > deadline) return list;
    await sleep(100);
  }
}

/** Replaces the stored confirmed configuration in journal.db's meta table, as an older version may have left it. */
function writeStoredPin(home: TempHome, pin: { revision: string; text: string | null }): void {
  const db = new Database(home.paths.journal);
  try {
    db.prepare("INSERT INTO daemon_meta (key, value) VALUES ('pinned_config', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(JSON.stringify(pin));
  } finally {
    db.close();
  }
}

describe('R-MCP-5 R-D-1 a gateway that started without a daemon attaches to one as soon as it runs (hardening pin 2)', () => {
  it('a prompt refused without a daemon is filed as an approval once `assent daemon run` starts; deny and approve reach the client; audit lines appear', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, consentTimeoutSeconds: 60 } });
    await stopDaemon(home);

    const { client, stderr } = await connectGateway(cleanups, home);
    const early = join(dir, 'early.txt');
    const refused = await client.callTool({ name: 'write_file', arguments: { path: early, content: 'nobody can approve me yet' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('no_consent_channel');
    // What is true now: the gateway picks up a daemon by itself; no client restart is needed.
    expect(text(refused)).toContain('as soon as one runs');
    expect(text(refused)).not.toContain('restart the MCP client');
    expect(existsSync(early)).toBe(false);
    // The confirmed configuration still settles allow meanwhile; it is audited once a daemon takes the record.
    const listedBefore = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(listedBefore.isError, text(listedBefore)).toBeFalsy();
    const startedAt = performance.now();

    await home.startDaemon();
    const denied = join(dir, 'denied.txt');
    const first = client.callTool({ name: 'write_file', arguments: { path: denied, content: 'deny me' } }, undefined, { timeout: 60_000 });
    const [pending] = await pendingWithin(home, 10_000);
    expect(pending?.tool, 'the gateway did not file the prompt with the daemon that started').toBe('write_file');
    expect(performance.now() - startedAt).toBeLessThan(15_000);
    expect(stderr()).toContain('attached to the assent daemon');
    const deny = await home.runCli(['deny', pending!.id]);
    expect(deny.code, deny.stderr).toBe(0);
    const deniedResult = await first;
    expect(deniedResult.isError).toBe(true);
    expect(text(deniedResult)).toContain('consent_denied');
    expect(existsSync(denied)).toBe(false);

    const approved = join(dir, 'approved.txt');
    const second = client.callTool({ name: 'write_file', arguments: { path: approved, content: 'approved at the terminal' } }, undefined, { timeout: 60_000 });
    const [next] = await pendingWithin(home, 10_000);
    expect(next?.tool).toBe('write_file');
    const approve = await runInTerminal(['approve', next!.id], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(approve.exitCode, approve.screen).toBe(0);
    const approvedResult = await second;
    expect(approvedResult.isError, text(approvedResult)).toBeFalsy();
    expect(readFileSync(approved, 'utf8')).toBe('approved at the terminal');

    await expect
      .poll(() => auditLines(home).map((l) => `${String(l['tool'])}:${String(l['outcome'])}:${String(l['approvalId'] ?? '')}`), { timeout: 10_000 })
      .toEqual(expect.arrayContaining([`write_file:consent_denied:${pending!.id}`, `write_file:ok:${next!.id}`, 'list_directory:ok:']));
  });

  it('R-CFG-4 with a stored confirmed configuration that no longer validates: refused, naming `assent config reload`; then denied by the fail-closed daemon; then the reload lets calls through', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'allow' } });
    await stopDaemon(home);
    writeStoredPin(home, { revision: `v1:sha256:${'cd'.repeat(32)}`, text: '{"policy":{"tools":{"ghost/x":"allow"}}}' });

    const { client, stderr } = await connectGateway(cleanups, home);
    const refused = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('unavailable');
    expect(text(refused)).toContain('no longer validates');
    expect(text(refused)).toContain('assent config reload');
    // Not true for a stored configuration: only a daemon's very first start confirms config.json.
    expect(text(refused)).not.toContain('first start confirms');
    expect(text(refused)).not.toContain('restart the MCP client');
    expect(stderr()).toContain('assent config reload');

    // The daemon starts fail-closed; the gateway attaches and is denied by it, with a text naming the reload.
    await home.startDaemon();
    await expect
      .poll(async () => text(await client.callTool({ name: 'list_directory', arguments: { path: dir } })), { timeout: 15_000, interval: 200 })
      .toContain('policy');
    const denied = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain('no longer validates');
    expect(text(denied)).toContain('assent config reload');

    const reload = await runInTerminal(['config', 'reload'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(reload.exitCode, reload.screen).toBe(0);
    await expect
      .poll(async () => (await client.callTool({ name: 'list_directory', arguments: { path: dir } })).isError ?? false, { timeout: 15_000, interval: 200 })
      .toBe(false);
  });
});
