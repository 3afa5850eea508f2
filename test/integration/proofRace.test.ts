// R-J-3 / SPEC §14: 8 OS processes, each with its own connection to journal.db,
// race to consume one proof per round for 200 rounds. The effect is a line the
// winner appends to a file; the count comes from that file, not from reports.
import { describe, expect, it } from 'vitest';
import { requireBuiltCli } from '../helpers/daemon.js';
// @ts-expect-error plain ESM helper shared with `npm run bench`, no type declarations
import { runProofRace } from '../../bench/proofRace.mjs';

interface RaceResult {
  rounds: number;
  workers: number;
  doubleEffects: number;
  missingEffects: number;
  consumed: number;
  replays: number;
  errors: number;
}

describe('R-J-3 racing consumers', () => {
  it('R-J-3 8 processes racing on one proof x 200 rounds: exactly one effect per round, the others get the recorded disposition', async () => {
    requireBuiltCli();
    const result = (await runProofRace({ rounds: 200, workers: 8 })) as RaceResult;
    expect(result.doubleEffects).toBe(0);
    expect(result.missingEffects).toBe(0);
    expect(result.errors).toBe(0);
    expect(result.consumed).toBe(200);
    expect(result.replays).toBe(200 * 7);
  }, 120_000);
});
