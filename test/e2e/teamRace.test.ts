// R-J-3 R-TEAM-1 across hosts: 8 processes spread over the daemons of two hosts
// (one PostgreSQL database, handoff mode) race on one approved call's proof for
// 200 rounds; the effect file shows exactly one effect per round.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Cleanups } from '../helpers/fsStack.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { startTeam, teamServer } from '../helpers/team.js';
// @ts-expect-error the race runner is plain JavaScript, shared with `npm run bench`
import { runTeamProofRace } from '../../bench/teamRace.mjs';

const fileCleanups: Cleanups = [];
const cleanups: Cleanups = [];
let server: PostgresServer;

beforeAll(async () => {
  server = await teamServer(fileCleanups);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

describe('R-J-3 R-TEAM-1 one handoff proof, 8 processes, 2 hosts', () => {
  it('200 rounds: exactly one effect each round, every other racer gets the recorded disposition', async () => {
    const { hosts } = await startTeam(cleanups, server, ['host-a', 'host-b'], { approvals: { handoff: true }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' } } });
    const rounds = 200;
    const race = (await runTeamProofRace({ sockets: hosts.map((host) => host.home.paths.socket), rounds, workers: 8 })) as Record<string, unknown>;
    expect(race, JSON.stringify(race['errorReasons'])).toMatchObject({ doubleEffects: 0, missingEffects: 0, consumed: rounds, replays: 7 * rounds, errors: 0 });
  }, 240_000);
});
