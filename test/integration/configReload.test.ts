// R-CFG-4: the daemon runs the config revision it pinned. Editing config.json
// changes nothing until `assent config reload` is confirmed at the terminal;
// the pending change shows in `daemon status`. Also R-AUD-2 through the CLI.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];
const ptys: PtySession[] = [];
afterEach(async () => {
  for (const pty of ptys.splice(0)) pty.kill();
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

async function start(config: Record<string, unknown>): Promise<{ home: TempHome; client: DaemonClient }> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
  await home.startDaemon();
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return { home, client };
}

async function decisionFor(client: DaemonClient, tool: string): Promise<string> {
  try {
    const result = await client.call<{ callId: string }>('calls.authorize', { sessionId: 's', server: 'fs', tool, args: {}, annotations: { readOnlyHint: true } });
    await client.call('calls.finish', { callId: result.callId, outcome: 'ok' });
    return 'allow';
  } catch (error) {
    return String((error as { details?: Record<string, unknown> }).details?.['reason']);
  }
}

async function status(home: TempHome): Promise<{ pinnedRevision: string; fileRevision: string; changedOnDisk: boolean }> {
  const result = await home.runCli(['daemon', 'status', '--json']);
  return (JSON.parse(result.stdout) as { data: { config: { pinnedRevision: string; fileRevision: string; changedOnDisk: boolean } } }).data.config;
}

// `servers.fs` names the alias the policy keys use (R-CFG-1); no gateway starts it here.
const BEFORE = { notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/delete': 'deny' } } };
const AFTER = { notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/delete': 'allow' } } };

describe('R-CFG-4 config revision pinning', () => {
  it('an edited config.json is reported but not applied until `assent config reload` is confirmed at the terminal', async () => {
    const { home, client } = await start(BEFORE);
    expect(await decisionFor(client, 'delete')).toBe('policy');
    const pinned = (await status(home)).pinnedRevision;

    writeFileSync(home.paths.config, JSON.stringify(AFTER));
    await expect.poll(async () => (await status(home)).changedOnDisk, { timeout: 5000 }).toBe(true);
    expect((await status(home)).pinnedRevision).toBe(pinned);
    expect(await decisionFor(client, 'delete')).toBe('policy');

    // Without a terminal the reload is refused and nothing changes.
    const headless = await home.runCli(['config', 'reload', '--json']);
    expect(headless.code).toBe(77);
    expect(JSON.parse(headless.stdout)).toMatchObject({ ok: false, error: { type: 'terminal_required' } });
    expect(await decisionFor(client, 'delete')).toBe('policy');

    // A wrong code keeps the pinned policy.
    const wrong = new PtySession(['config', 'reload'], { outFile: join(home.home, 'wrong.out'), env: { ASSENT_HOME: home.home } });
    ptys.push(wrong);
    await wrong.waitFor(/Type ([a-z]{4}) to apply/);
    expect(wrong.screen).toContain('policy.tools');
    wrong.type('zzzz\r');
    expect((await wrong.finish(join(home.home, 'wrong.out'))).exitCode).toBe(77);
    expect(await decisionFor(client, 'delete')).toBe('policy');

    const pty = new PtySession(['config', 'reload'], { outFile: join(home.home, 'reload.out'), env: { ASSENT_HOME: home.home } });
    ptys.push(pty);
    const code = await pty.waitFor(/Type ([a-z]{4}) to apply/);
    pty.type(`${code[1]}\r`);
    expect((await pty.finish(join(home.home, 'reload.out'))).exitCode).toBe(0);
    expect(await decisionFor(client, 'delete')).toBe('allow');
    const after = await status(home);
    expect(after.changedOnDisk).toBe(false);
    expect(after.pinnedRevision).not.toBe(pinned);
  });
});

describe('R-CFG-4 across restarts', () => {
  it('stopping the daemon is no way around the review: a restarted daemon runs the confirmed revision until a reload', async () => {
    const { home, client } = await start(BEFORE);
    expect(await decisionFor(client, 'delete')).toBe('policy');
    client.close();
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);

    writeFileSync(home.paths.config, JSON.stringify(AFTER));
    await home.startDaemon();
    const again = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    clients.push(again);
    expect(await decisionFor(again, 'delete')).toBe('policy');
    expect((await status(home)).changedOnDisk).toBe(true);

    const pty = new PtySession(['config', 'reload'], { outFile: join(home.home, 'reload.out'), env: { ASSENT_HOME: home.home } });
    ptys.push(pty);
    const code = await pty.waitFor(/Type ([a-z]{4}) to apply/);
    pty.type(`${code[1]}\r`);
    expect((await pty.finish(join(home.home, 'reload.out'))).exitCode).toBe(0);
    expect(await decisionFor(again, 'delete')).toBe('allow');

    // The confirmed revision is what a later restart runs.
    again.close();
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    await home.startDaemon();
    const third = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    clients.push(third);
    expect(await decisionFor(third, 'delete')).toBe('allow');
    expect((await status(home)).changedOnDisk).toBe(false);
  });
});

describe('R-AUD-2 audit verify through the CLI', () => {
  it('passes on an intact log and names the first broken line after one line is edited', async () => {
    const { home, client } = await start(BEFORE);
    for (let i = 0; i < 3; i += 1) await decisionFor(client, 'read');
    await decisionFor(client, 'delete');
    await expect.poll(() => readdirSync(home.paths.auditDir).some((f) => f.endsWith('.jsonl')), { timeout: 5000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const intact = await home.runCli(['audit', 'verify', '--json']);
    expect(intact.code, intact.stdout + intact.stderr).toBe(0);
    expect(JSON.parse(intact.stdout)).toMatchObject({ ok: true, data: { ok: true, lines: 4 } });

    const file = join(home.paths.auditDir, readdirSync(home.paths.auditDir).filter((f) => f.endsWith('.jsonl')).sort()[0] ?? '');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = (lines[1] ?? '').replace('"outcome":"ok"', '"outcome":"error"');
    writeFileSync(file, lines.join('\n'));
    const broken = await home.runCli(['audit', 'verify']);
    expect(broken.code).toBe(65);
    expect(broken.stderr).toMatch(/:2 /);
  });
});

/** Replaces the stored confirmed configuration in journal.db's meta table, as an older version may have left it. */
function writeStoredPin(home: TempHome, pin: { revision: string; text: string | null }): void {
  const db = new Database(home.paths.journal);
  try {
    db.prepare("INSERT INTO daemon_meta (key, value) VALUES ('pinned_config', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(JSON.stringify(pin));
  } finally {
    db.close();
  }
}

/** Valid JSON that today's rules refuse: a policy key naming a server alias that is not configured (R-CFG-1). */
const STALE_PIN = { revision: `v1:sha256:${'ab'.repeat(32)}`, text: '{"policy":{"tools":{"ghost/x":"allow"}}}' };

describe('R-CFG-4 R-D-1 a confirmed configuration that no longer validates (hardening pin 1)', () => {
  it('the daemon starts fail-closed, says so in daemon.status and as an event, denies every call, and `assent config reload` at the terminal applies config.json', async () => {
    const { home, client } = await start(BEFORE);
    client.close();
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    writeStoredPin(home, STALE_PIN);

    // It starts anyway (before, decodePin threw and `daemon run` exited).
    await home.startDaemon();
    const again = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    clients.push(again);

    const json = await home.runCli(['daemon', 'status', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const config = (JSON.parse(json.stdout) as { data: { config: Record<string, unknown> } }).data.config;
    const invalid = config['confirmedInvalid'] as { revision: string; problems: { path: string }[]; message: string };
    expect(invalid.revision).toBe(STALE_PIN.revision);
    expect(invalid.problems.map((p) => p.path)).toContain('policy.tools.ghost/x');
    expect(invalid.message).toContain('assent config reload');
    expect(config['pinnedRevision']).not.toBe(STALE_PIN.revision);
    const human = await home.runCli(['daemon', 'status']);
    expect(human.stdout).toContain('no longer validates');
    expect(human.stdout).toContain('policy.tools.ghost/x');
    expect(human.stdout).toContain('assent config reload');

    // The config-changed event names it too.
    const events = await again.call<{ kind: string; data: Record<string, unknown> }[]>('events.since', { cursor: 0 });
    const reported = events.filter((e) => e.kind === 'config_changed' && e.data['confirmedInvalid'] !== undefined);
    expect(reported.length).toBeGreaterThan(0);
    expect(JSON.stringify(reported.at(-1)?.data)).toContain('assent config reload');

    // Fail closed: `fs/read` is `allow` in config.json and in the stored text's intent, yet denied; so is everything.
    expect(await decisionFor(again, 'read')).toBe('policy');
    expect(await decisionFor(again, 'delete')).toBe('policy');
    const refusal = await again.call('calls.authorize', { sessionId: 's', server: 'ghost', tool: 'x', args: {} }).catch((error: unknown) => error as { message: string; details: Record<string, unknown> });
    expect(JSON.stringify(refusal)).toContain('assent config reload');
    const log = readFileSync(home.paths.log, 'utf8');
    expect(log).toContain('no longer validates');

    // The reload shows the diff from the fail-closed state and applies config.json after the typed code.
    const pty = new PtySession(['config', 'reload'], { outFile: join(home.home, 'reload.out'), env: { ASSENT_HOME: home.home } });
    ptys.push(pty);
    const code = await pty.waitFor(/Type ([a-z]{4}) to apply/);
    expect(pty.screen).toContain('no longer validates');
    expect(pty.screen).toMatch(/policy\.default: "deny" → "allow"/);
    expect(pty.screen).toContain('servers.fs: added');
    pty.type(`${code[1]}\r`);
    expect((await pty.finish(join(home.home, 'reload.out'))).exitCode).toBe(0);
    expect(await decisionFor(again, 'read')).toBe('allow');
    expect(await decisionFor(again, 'delete')).toBe('policy');
    const after = await home.runCli(['daemon', 'status', '--json']);
    const afterConfig = (JSON.parse(after.stdout) as { data: { config: Record<string, unknown> } }).data.config;
    expect(afterConfig['confirmedInvalid']).toBeUndefined();
    expect(afterConfig['changedOnDisk']).toBe(false);

    // What was applied is the new confirmed configuration: a restart runs it.
    again.close();
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    await home.startDaemon();
    const third = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    clients.push(third);
    expect(await decisionFor(third, 'read')).toBe('allow');
  });

  it('when config.json is the very text that no longer validates, the reload refuses and names `assent config check`; the daemon stays fail-closed', async () => {
    const { home, client } = await start(BEFORE);
    client.close();
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    writeStoredPin(home, STALE_PIN);
    writeFileSync(home.paths.config, STALE_PIN.text);
    await home.startDaemon();
    const again = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    clients.push(again);
    const reload = await home.runCli(['config', 'reload', '--json']);
    expect(reload.code).toBe(65);
    expect(reload.stdout).toContain('assent config check');
    expect(await decisionFor(again, 'read')).toBe('policy');
  });
});
