// Issue 35 item 3, across hosts: in team mode a host whose wall clock is 2
// minutes off still cannot use a proof past its expiry. Three real daemons on
// one real PostgreSQL database: one on the true clock, one running 2 minutes
// behind and one 2 minutes ahead (libfaketime, monotonic clock untouched). The
// database server's clock is the one they share: a proof's expiry is judged
// against the later of the consuming host's time and the server's, and stored
// no later than the server's time plus its lifetime
// (src/journal/postgres/postgresProofs.ts). Handoff mode: an approved call's
// identical retry consumes the proof, on any host of the team.
import { existsSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import type { Cleanups } from '../helpers/fsStack.js';
import type { PostgresServer } from '../helpers/postgres.js';
import { startTeam, teamServer, type TeamHost } from '../helpers/team.js';

const FAKETIME_LIB = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1'].find((path) => existsSync(path));
if (FAKETIME_LIB === undefined && process.env['CI'] !== 'true') process.stderr.write('skipping the team clock-skew test: libfaketime is not installed (apt install faketime)\n');

const TTL_SECONDS = 2;
const SKEW = '120s';
const faketime = (offset: string): NodeJS.ProcessEnv => ({ LD_PRELOAD: FAKETIME_LIB, FAKETIME: offset, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const fileCleanups: Cleanups = [];
const cleanups: Cleanups = [];
let server: PostgresServer;

beforeAll(async () => {
  if (FAKETIME_LIB !== undefined) server = await teamServer(fileCleanups);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

type Authorized = { allowed: true; callId: string } | { allowed: false; reason: string; approvalId?: string; message: string };

/** `calls.authorize` for a write, as a gateway sends it: allowed (a call id), or refused with its reason. */
async function authorize(client: DaemonClient, n: number): Promise<Authorized> {
  const args = { path: `/srv/skew/${n}.txt`, content: `call ${n}` };
  try {
    const result = await client.call<{ callId: string }>('calls.authorize', { sessionId: 'skew-agent', server: 'fs', tool: 'write_file', args });
    return { allowed: true, callId: result.callId };
  } catch (error) {
    const details = (error as { details?: { reason?: string; approvalId?: string } }).details ?? {};
    return { allowed: false, reason: details.reason ?? 'unknown', ...(details.approvalId === undefined ? {} : { approvalId: details.approvalId }), message: (error as Error).message };
  }
}

/** Files a handoff approval on `filer` for call `n` and approves it on `approver`; the proof is issued by the approver's daemon. */
async function approvedOn(filer: DaemonClient, approver: DaemonClient, n: number): Promise<void> {
  const first = await authorize(filer, n);
  if (first.allowed || first.reason !== 'approval_pending' || first.approvalId === undefined) throw new Error(`call ${n}: no handoff approval was filed: ${JSON.stringify(first)}`);
  await approver.call('approvals.decide', { id: first.approvalId, behavior: 'allow' });
}

describe.skipIf(FAKETIME_LIB === undefined && process.env['CI'] !== 'true')('a team host whose clock is 2 minutes off (issue 35 item 3)', () => {
  it('cannot use a proof past its expiry, whether it consumes it (clock behind) or issued it (clock ahead); within the lifetime the retry runs on any host', async () => {
    if (FAKETIME_LIB === undefined) throw new Error('libfaketime is required under CI: apt install faketime');
    const { hosts } = await startTeam(
      cleanups,
      server,
      ['true-clock', 'behind', 'ahead'],
      // The approvals themselves wait long enough that the host ahead does not already see them expired.
      { approvals: { handoff: true, proofTtlSeconds: TTL_SECONDS }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt' }, consentTimeoutSeconds: 600 } },
      { daemonEnv: { behind: faketime(`-${SKEW}`), ahead: faketime(`+${SKEW}`) } },
    );
    const [trueClock, behind, ahead] = await Promise.all(hosts.map((host: TeamHost) => host.connect()));

    // Within the lifetime: a proof the true-clock host issued is consumed by the host behind, and one the host ahead issued by the true-clock host.
    await approvedOn(trueClock!, trueClock!, 1);
    expect(await authorize(behind!, 1)).toMatchObject({ allowed: true });
    await approvedOn(trueClock!, ahead!, 2);
    expect(await authorize(trueClock!, 2)).toMatchObject({ allowed: true });

    // Past the lifetime, by the true clock. The host behind still thinks the proof has 2 minutes left.
    await approvedOn(trueClock!, trueClock!, 3);
    await approvedOn(trueClock!, ahead!, 4);
    await sleep(TTL_SECONDS * 1000 + 1500);
    const lateBehind = await authorize(behind!, 3);
    expect(lateBehind, 'the host whose clock runs behind used an expired proof').toMatchObject({ allowed: false, reason: 'approval_pending' });
    // The host ahead issued a proof its own clock dates 2 minutes on: it is stored to expire by the server's time.
    const lateAfterAhead = await authorize(trueClock!, 4);
    expect(lateAfterAhead, 'a proof issued by the host whose clock runs ahead outlived its lifetime').toMatchObject({ allowed: false, reason: 'approval_pending' });
    // Each refused retry filed a fresh approval instead: the person decides again.
    expect([lateBehind, lateAfterAhead].every((answer) => !answer.allowed && answer.approvalId !== undefined)).toBe(true);
  }, 120_000);
});
