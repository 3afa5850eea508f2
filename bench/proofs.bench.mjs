// SPEC §14 durable proof row: consumptions per second from one process (each a
// fsync'd transaction) and double effects from 8 racing processes × 200 rounds.
import { measureConsumptionRate, runProofRace } from './proofRace.mjs';

export async function benchProofs() {
  const rate = await measureConsumptionRate({ count: 2000 });
  const race = await runProofRace({ rounds: 200, workers: 8 });
  return [
    { name: 'durable proof consumptions per second (one process, fsync)', value: rate.perSecond, unit: '/s', target: 1000, targetText: '>= 1000', ok: rate.perSecond >= 1000 },
    {
      name: `double effects, ${race.workers} processes x ${race.rounds} rounds on one proof each`,
      value: race.doubleEffects,
      unit: 'effects',
      target: 0,
      targetText: '0',
      ok: race.doubleEffects === 0 && race.missingEffects === 0 && race.errors === 0,
    },
  ];
}
