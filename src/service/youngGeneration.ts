// SPEC §14: ten thousand pending approvals within 120 MB of resident memory.
// V8 doubles its young generation whenever more bytes survive its scavenges
// than it holds, and never gives the pages back while the process is idle: a
// burst of calls that all wait for a person (each one survives) grows it from
// the 2 × 8 MB the daemon's start-up reaches to 2 × 16 MB, about 13 MB of
// resident memory kept for good. Once the daemon listens, it keeps the young
// generation at the size start-up reached by setting V8's growth factor to 1.
// That is the one V8 flag the daemon sets, and it does not slow the call path:
// a call's short-lived objects still die in the young generation, and
// `npm run bench` measures allowed calls per second and decision propagation
// with and without it, side by side (bench/approvals.bench.mjs).
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Holds V8's young generation at its present size from now on (not undone); `ASSENT_YOUNG_GENERATION=grow` leaves V8's default, for the bench's side-by-side. */
export function holdYoungGeneration(env: NodeJS.ProcessEnv = process.env): void {
  if (env['ASSENT_YOUNG_GENERATION'] === 'grow') return;
  setFlagsFromString('--semi-space-growth-factor=1');
}

/** The young generation's size in bytes (both semi-spaces), for daemon.status. */
export function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
