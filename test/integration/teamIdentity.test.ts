// Host identity and principals through a real daemon (SPEC §20, R-TEAM-3):
// identity.json's hostId and `host.name` in `daemon status`, the principal of
// every decision, four-eyes and quorum checked in the deciding transaction.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';

const homes: TempHome[] = [];

afterEach(async () => {
  for (const home of homes.splice(0)) await home.cleanup();
});

async function setup(config: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, ...config }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

describe('R-TEAM-3 host identity', () => {
  it('R-TEAM-3 identity.json holds a random hostId (0600), and daemon status shows host.name beside it with the local principal', async () => {
    const home = await setup({ host: { name: 'build-01' } });
    const identity = JSON.parse(readFileSync(home.paths.identity, 'utf8')) as { hostId: string };
    expect(identity.hostId).toMatch(/^[0-9a-f]{32}$/);
    expect(statSync(home.paths.identity).mode & 0o777).toBe(0o600);
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { host: unknown } };
    const user = userInfo().username;
    expect(status.data.host).toEqual({ id: identity.hostId, name: 'build-01', principal: `${user}@build-01` });
    const human = await home.runCli(['daemon', 'status']);
    expect(human.stdout).toContain(`host         build-01 (hostId ${identity.hostId})`);
    expect(human.stdout).toContain(`principal    ${user}@build-01`);
  });

  it('R-TEAM-3 without host.name the host is labelled with the OS host name', async () => {
    const home = await setup({});
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { host: { name: string; principal: string } } };
    expect(status.data.host.name).toBe(hostname());
    expect(status.data.host.principal).toBe(`${userInfo().username}@${hostname()}`);
  });
});
