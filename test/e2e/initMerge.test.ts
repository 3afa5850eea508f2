// Issue 20 item 6 (and item 5's rule diff): `assent init --merge` adds the
// default sections a config.json lacks and keeps everything it has; `--force`
// says what it would discard and asks for a typed code; a reload after a
// change of key order only shows no rule changes.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { PtySession } from '../helpers/pty.js';

const cleanups = cleanupsAfterEach();

/** The README's config.json (its quick-start step 3). */
const README_CONFIG = {
  servers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/data'] } },
  policy: { default: 'allow', destructive: 'prompt', tools: { 'fs/move_file': 'deny' } },
};

function state(config: unknown): TempHome {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return home;
}

function pty(home: TempHome, args: string[]): PtySession {
  const session = new PtySession(args, { outFile: join(home.home, `${args.join('-')}.out`), env: { ASSENT_HOME: home.home } });
  cleanups.push(() => session.kill());
  return session;
}

const readConfig = (home: TempHome): Record<string, Record<string, unknown>> => JSON.parse(readFileSync(home.paths.config, 'utf8')) as Record<string, Record<string, unknown>>;

describe('issue 20: init --merge and --force', () => {
  it('`assent init --merge` on the README\'s config.json keeps servers.fs and fs/move_file: deny and adds the default policy.commands, paths and urls; a second merge changes nothing', async () => {
    const home = state(README_CONFIG);
    const merged = await home.runCli(['init', '--merge']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toContain('added $schema, policy.consentTimeoutSeconds, policy.commands, policy.paths, policy.urls');
    const config = readConfig(home);
    // Issue 37 item 5: the editor's schema is the file this installation ships.
    expect(config['$schema']).toMatch(/^file:\/\/.*\/schema\/config\.schema\.json$/);
    expect(config['servers']).toEqual(README_CONFIG.servers);
    expect(config['policy']).toMatchObject({ default: 'allow', destructive: 'prompt', tools: { 'fs/move_file': 'deny' } });
    expect((config['policy']?.['paths'] as { rules: { glob: string }[] }).rules.map((rule) => rule.glob)).toContain('~/.ssh/**');
    expect(config['policy']?.['commands']).toMatchObject({ default: 'prompt', networkIntoShell: 'deny' });
    expect(config['policy']?.['urls']).toEqual({ default: 'prompt', rules: [] });
    expect(readdirSync(home.home).some((name) => name.startsWith('config.json.assent-backup-'))).toBe(true);
    expect((await home.runCli(['config', 'check'])).stdout).toMatch(/is valid/);
    const again = await home.runCli(['init', '--merge']);
    expect(again.stdout).toContain('already has every default section; nothing was changed');
  });

  it('`assent init --force` over settings of the user\'s refuses headless (77, nothing changed) and in a terminal lists what it discards and asks for a code; Ctrl+C keeps the file', async () => {
    const home = state(README_CONFIG);
    const before = readFileSync(home.paths.config, 'utf8');
    const headless = await home.runCli(['init', '--force']);
    expect(headless.code).toBe(77);
    expect(headless.stderr).toContain('--merge');
    expect(readFileSync(home.paths.config, 'utf8')).toBe(before);
    const session = pty(home, ['init', '--force']);
    await session.waitFor(/Type [a-z]{4} to replace it/);
    expect(session.screen).toContain('  - servers.fs');
    expect(session.screen).toContain('  - policy.tools.fs/move_file');
    session.type('\u0003');
    await session.waitFor(/cancelled; .*config\.json was not changed/);
    expect(readFileSync(home.paths.config, 'utf8')).toBe(before);
  });

  it('a reload after reordering the keys of every rule shows no rule as added or removed', async () => {
    const home = state({ notifications: false, web: { listen: '127.0.0.1:0' } });
    expect((await home.runCli(['init', '--merge'])).code).toBe(0);
    await home.startDaemon();
    const config = readConfig(home);
    const policy = config['policy'] as Record<string, { rules: Record<string, unknown>[] } & Record<string, unknown>>;
    for (const section of ['commands', 'paths'] as const) {
      policy[section] = { ...policy[section], rules: (policy[section]?.rules ?? []).map((rule) => Object.fromEntries(Object.entries(rule).reverse())) };
    }
    writeFileSync(home.paths.config, `${JSON.stringify({ ...config, auditRetentionDays: 31 }, null, 2)}\n`);
    const session = pty(home, ['config', 'reload']);
    await session.waitFor(/Type [a-z]{4} to apply/);
    expect(session.screen).toContain('auditRetentionDays');
    expect(session.screen).not.toMatch(/rules: (added|removed)/);
    session.type('\u0003');
  });
});
