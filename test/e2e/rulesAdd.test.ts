// R-POL-6 (issue 12 item 5): `assent rules add --command | --path | --url
// [--access] [--agent] [--ttl]` through the built binary in a real terminal:
// the preview says what the rule lets through, only the typed code adds it, and
// a bad flag is refused before any code is shown.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function daemonHome(): Promise<{ home: TempHome; client: DaemonClient }> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  await home.startDaemon();
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  cleanups.push(() => client.close());
  return { home, client };
}

function pty(home: TempHome, args: string[]): { session: PtySession; outFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'assent-rules-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const outFile = join(dir, 'stdout');
  const session = new PtySession(['rules', 'add', ...args], { outFile, env: { ASSENT_HOME: home.home } });
  cleanups.push(() => session.kill());
  return { session, outFile };
}

describe('R-POL-6 (issue 12 item 5) `assent rules add --command|--path|--url` at a terminal', () => {
  it('--command "npm test" --ttl 1h: the preview says what passes, the typed code adds it, rules list shows the form and its expiry', async () => {
    const { home, client } = await daemonHome();
    const before = Date.now();
    const { session, outFile } = pty(home, ['--command', 'npm test', '--ttl', '1h']);
    const code = await session.waitFor(/Type ([a-z]{4}) to add it, anything else cancels: /);
    expect(session.screen).toContain('Add a rule: simple commands matching "npm test" word for word');
    expect(session.screen).toContain('where the policy would ask, for any agent; every other part of a command line is still judged on its own.');
    expect(session.screen).toContain('It lasts 1h; deny still wins.');
    session.type(`${code[1]}\r`);
    const { exitCode, stdout } = await session.finish(outFile);
    expect(exitCode, session.screen).toBe(0);
    const id = /^Added rule (r[a-z]{5})\.$/m.exec(stdout)?.[1];
    expect(id, stdout).toBeDefined();
    const [rule] = await client.call<Record<string, unknown>[]>('rules.list', {});
    expect(rule).toMatchObject({ id, command: 'npm test', args: [] });
    expect(rule?.['tool']).toBeUndefined();
    expect(rule?.['expiresAt']).toBeGreaterThanOrEqual(before + 3_600_000);
    const listed = await home.runCli(['rules', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`^${String(id)}  --command "npm test" \\(expires \\d{4}-`, 'm'));
  });

  it('--path with --access write and --agent claude is stored for claude-code; --url with a wrong code adds nothing', async () => {
    const { home, client } = await daemonHome();
    const path = pty(home, ['--path', '${cwd}/dist/**', '--access', 'write', '--agent', 'claude', '--json']);
    const code = await path.session.waitFor(/Type ([a-z]{4}) to add it/);
    expect(path.session.screen).toContain('writes of paths matching "${cwd}/dist/**" (wherever a path resolves to, symlinks followed) will run without asking where the policy would ask, for claude only.');
    path.session.type(`${code[1]}\r`);
    const added = await path.session.finish(path.outFile);
    expect(added.exitCode, path.session.screen).toBe(0);
    expect((JSON.parse(added.stdout) as { data: unknown }).data).toMatchObject({ path: '${cwd}/dist/**', access: 'write', agent: 'claude-code' });

    const url = pty(home, ['--url', 'https://docs.example.com/*']);
    await url.session.waitFor(/Type ([a-z]{4}) to add it/);
    expect(url.session.screen).toContain('fetches of URLs matching "https://docs.example.com/*" will run without asking where the policy would ask, for any agent.');
    url.session.type('zzzz\r');
    expect((await url.session.finish(url.outFile)).exitCode).toBe(77);
    expect((await client.call<Record<string, unknown>[]>('rules.list', {})).map((r) => r['url'] ?? r['path'])).toEqual(['${cwd}/dist/**']);
  });

  it.each([
    [['--command', "npm 'test"], '--command'],
    [['--command', '  '], '--command'],
    [['--path', 'dist/**'], '--path'],
    [['--url', 'docs.example.com/*'], '--url'],
    [['--command', 'npm test', '--agent', 'cursor'], '--agent'],
    [['--command', 'npm test', '--access', 'read'], '--access'],
    [['--path', '/srv/**', '--access', 'exec'], '--access'],
    [['--command', 'npm test', '--arg', '/command=x'], '--arg'],
    [['--tool', 'claude/Bash', '--agent', 'codex'], '--agent'],
    [['--command', 'npm test', '--url', 'https://x/*'], 'exactly one of'],
    [[], 'exactly one of'],
  ])('%j is refused (exit 64) without asking for a code', async (flags, named) => {
    const { home, client } = await daemonHome();
    const { session, outFile } = pty(home, flags);
    const { exitCode } = await session.finish(outFile, 10_000);
    expect(exitCode, session.screen).toBe(64);
    expect(session.screen).toContain(named);
    expect(session.screen).not.toMatch(/Type [a-z]{4} to add it/);
    expect(await client.call('rules.list', { includeInactive: true })).toEqual([]);
  });
});
