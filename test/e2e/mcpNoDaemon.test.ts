// Without a daemon, `assent mcp` obeys only what the operator confirmed
// (hardening 3, R-CFG-4, R-MCP-5): the configuration the daemon pinned, read
// read-only from the journal — never config.json as it is on disk. With no
// confirmed configuration at all, every call is refused and stderr says why.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';
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
