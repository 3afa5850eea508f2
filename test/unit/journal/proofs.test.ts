// R-J-2..6 at the store and service level with an injected clock: issue, the
// one-transaction consumption, replay, every refusal reason, reconciliation;
// against each store (R-TEAM-1).
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/core/base/canonical.js';
import { FakeClock } from '../../../src/core/base/clock.js';
import { AssentError } from '../../../src/core/base/errors.js';
import { isProofShaped, newProof, proofHash } from '../../../src/core/approval/proof.js';
import type { AuditLog, AuditRecord } from '../../../src/journal/auditLog.js';
import type { ApprovalRecord } from '../../../src/journal/journal.js';
import type { Store } from '../../../src/journal/store.js';
import { EventBus } from '../../../src/service/eventBus.js';
import { silentLogger } from '../../../src/service/logger.js';
import { ProofService, actionDigestOf } from '../../../src/service/proofService.js';
import { closeStoreServers, HOST_A, HOST_B, openStoreFixture, STORE_KINDS, type StoreFixture } from '../../helpers/stores.js';

let counter = 0;
const random = (n: number): Uint8Array => {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += 1) bytes[i] = (counter * 31 + i * 7 + 13) & 0xff;
  counter += 1;
  return bytes;
};

const ACTION = { executable: '/bin/echo', cwd: '/tmp', args: ['hi'], env: { LANG: 'C.UTF-8' } };
const OTHER_ACTION = { ...ACTION, args: ['bye'] };

function execApproval(id: string, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id,
    sessionId: 's1',
    kind: 'exec',
    action: ACTION,
    argsSha256: digestOf(ACTION),
    requestedAt: 0,
    expiresAt: Date.UTC(2030, 0, 1),
    caller: {},
    handoff: false,
    state: 'approved',
    channel: 'cli',
    ...overrides,
  };
}

afterAll(closeStoreServers);

describe.each(STORE_KINDS)('proofs and effects in the journal (%s)', (kind) => {
  let fixture: StoreFixture;
  let clock: FakeClock;
  let store: Store;
  let service: ProofService;
  let audit: AuditRecord[];
  let bus: EventBus;
  let events: { kind: string; data: Record<string, unknown> }[];

  beforeEach(async () => {
    clock = new FakeClock();
    fixture = await openStoreFixture(kind, clock);
    store = fixture.store;
    // The issuing host runs rev1: what a proof issued here binds, wherever it is presented (R-TEAM-6).
    await store.announceHost({ name: 'host-a', revision: 'rev1', at: 0 });
    audit = [];
    events = [];
    bus = new EventBus(store, () => clock.now());
    bus.subscribe((event) => events.push(event));
    service = new ProofService({
      store,
      audit: { append: (record: AuditRecord) => audit.push(record) } as unknown as AuditLog,
      bus,
      clock,
      random,
      logger: silentLogger,
      principal: 'owner',
      ttlSeconds: () => 300,
    });
  });

  afterEach(async () => {
    await fixture.close();
  });

  async function issue(id = 'abcde', audience: 'cli' | 'mcp' = 'cli', revision = 'rev1'): Promise<string> {
    const approval = execApproval(id);
    await store.insertApproval(approval);
    return (await service.issue(approval, { audience, revision, channel: 'cli' })).proof;
  }

  async function refusalOf(attempt: Promise<unknown>): Promise<string | undefined> {
    try {
      await attempt;
    } catch (error) {
      expect(error).toBeInstanceOf(AssentError);
      expect((error as AssentError).type).toBe('proof_invalid');
      return (error as AssentError).details?.['reason'] as string;
    }
    return undefined;
  }

  const present = (proof: string, overrides: Partial<{ audience: 'cli' | 'mcp'; actionDigest: string; revision: string; principal: string }> = {}) =>
    service.consume({ proof, audience: 'cli', actionDigest: digestOf(ACTION), revision: 'rev1', ...overrides });

  it('R-J-2 a proof is asp1_ + 256 bits and only its SHA-256 is stored', async () => {
    const proof = await issue();
    expect(isProofShaped(proof)).toBe(true);
    expect(proof).toMatch(/^asp1_[A-Za-z0-9_-]{43}$/);
    const all = await fixture.dump();
    expect(all).not.toContain(proof);
    expect(all).toContain(proofHash(proof));
    const [record] = await store.listProofs();
    expect(record).toMatchObject({ principal: 'owner', audience: 'cli', actionKind: 'exec', actionDigest: digestOf(ACTION), revision: 'rev1', state: 'issued' });
    await expect.poll(() => events.map((e) => e.kind)).toContain('proof_issued');
    expect(JSON.stringify(events)).not.toContain(proof);
  });

  it('R-J-3 consumption records the intent in the same transaction; R-J-4 a second presentation replays it', async () => {
    const proof = await issue();
    const first = await present(proof);
    expect(first.kind).toBe('consumed');
    expect((await store.getEffect(first.effect.id))?.state).toBe('intent');
    expect((await store.getProofByHash(proofHash(proof)))?.state).toBe('consumed');
    await service.finishEffect(first.effect.id, { ok: true, result: { content: [] } });
    const again = await present(proof);
    expect(again.kind).toBe('replay');
    expect(again.effect.id).toBe(first.effect.id);
    expect(again.effect.state).toBe('completed');
    expect(again.effect.resultDigest).toMatch(/^v1:sha256:[0-9a-f]{64}$/);
    expect(again.kind === 'replay' ? again.result : undefined).toEqual({ content: [] });
  });

  it('a wall clock set back 1 h does not revive an expired proof; set forward 1 h, a proof expires at once (fail closed)', async () => {
    const expired = await issue('bbbbc');
    clock.advance(301_000);
    clock.jumpWall(-3_600_000);
    // By its recorded wall time it would be valid for another hour: the monotonic clock says it expired.
    expect(await refusalOf(present(expired))).toBe('expired');
    const fresh = await issue('bbbbd');
    clock.jumpWall(3_600_000);
    expect(await refusalOf(present(fresh))).toBe('expired');
    const unaffected = await issue('bbbbe');
    clock.jumpWall(-3_600_000);
    expect((await present(unaffected)).kind).toBe('consumed');
  });

  it('a proof issued after another expired does not make the expired one forget its monotonic expiry: set the wall clock back, it stays expired', async () => {
    // Once with the clock that names its boot (the journal keeps the expiry), once with one that does not (only this process knows it).
    for (const [first, second, useClock] of [['cccca', 'ccccb', clock], ['ccccc', 'ccccd', { now: () => clock.now(), monotonic: () => clock.monotonic() }]] as const) {
      service = new ProofService({ store, audit: { append: () => undefined } as unknown as AuditLog, bus, clock: useClock, random, logger: silentLogger, principal: 'owner', ttlSeconds: () => 300 });
      const expired = await issue(first);
      clock.advance(301_000);
      await issue(second);
      clock.jumpWall(-3_600_000);
      expect(await refusalOf(present(expired))).toBe('expired');
      clock.jumpWall(3_600_000);
    }
  });

  it('R-J-4 each refusal has its own reason and records no effect', async () => {
    expect(await refusalOf(present(newProof(random)))).toBe('unknown');

    const expiring = await issue('bbbbb');
    clock.advance(301_000);
    expect(await refusalOf(present(expiring))).toBe('expired');

    const revoked = await issue('ccccc');
    const revokedId = (await store.getProofByHash(proofHash(revoked)))!.id;
    await service.revoke(revokedId);
    expect(await refusalOf(present(revoked))).toBe('revoked');

    const byApproval = await issue('ccccd');
    await service.revoke('ccccd');
    expect(await refusalOf(present(byApproval))).toBe('revoked');

    const used = await issue('ddddd');
    await present(used);
    expect(await refusalOf(present(used, { actionDigest: digestOf(OTHER_ACTION) }))).toBe('consumed-for-other-action');

    const fresh = await issue('eeeee');
    expect(await refusalOf(present(fresh, { actionDigest: digestOf(OTHER_ACTION) }))).toBe('other-action');
    expect(await refusalOf(present(fresh, { principal: 'someone-else' }))).toBe('other-principal');
    expect(await refusalOf(present(fresh, { audience: 'mcp' }))).toBe('other-audience');
    expect(await refusalOf(present(fresh, { revision: 'rev2' }))).toBe('revision-changed');
    // None of the refusals consumed it: the right presentation still works once.
    expect((await present(fresh)).kind).toBe('consumed');

    const effects = (await store.listProofs()).filter((p) => p.effectId !== undefined);
    expect(effects.map((p) => p.approvalId).sort()).toEqual(['ddddd', 'eeeee']);
  });

  it('R-J-4 refusal messages never contain the token', async () => {
    const proof = await issue();
    const error = await present(proof, { revision: 'other' }).then(
      () => undefined,
      (refusal: unknown) => refusal,
    );
    expect(error).toBeInstanceOf(AssentError);
    expect(JSON.stringify((error as AssentError).toJSON())).not.toContain(proof);
    expect((error as AssentError).message).toMatch(/revision-changed/);
  });

  it('R-J-5 an intent without an outcome becomes uncertain with an event and an audit line; replay runs nothing', async () => {
    const proof = await issue();
    const { effect } = await present(proof);
    const uncertain = await service.reconcile();
    expect(uncertain.map((e) => e.id)).toEqual([effect.id]);
    expect((await store.getEffect(effect.id))?.state).toBe('uncertain');
    await expect.poll(() => events.some((e) => e.kind === 'effect_uncertain' && e.data['effectId'] === effect.id)).toBe(true);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'uncertain', approvalId: 'abcde', kind: 'exec' })]);
    const replay = await present(proof);
    expect(replay).toMatchObject({ kind: 'replay', effect: { state: 'uncertain' } });
    await expect(service.finishEffect(effect.id, { ok: true })).rejects.toThrow(/already has an outcome/);
    expect(await service.reconcile()).toEqual([]);
  });

  it('R-MCP-8 handoff proofs are found by exact digest; other arguments do not match', async () => {
    const args = { path: '/tmp/x', content: 'a' };
    const approval: ApprovalRecord = {
      ...execApproval('fffff'),
      kind: 'tool',
      server: 'fs',
      tool: 'write_file',
      args,
      argsSha256: digestOf(args),
      handoff: true,
    };
    delete approval.action;
    await store.insertApproval(approval);
    await service.issue(approval, { audience: 'mcp', revision: 'rev1', channel: 'cli' });
    const digest = actionDigestOf({ kind: 'tool', server: 'fs', tool: 'write_file', args });
    expect(await service.consumeForRetry({ actionDigest: actionDigestOf({ kind: 'tool', server: 'fs', tool: 'write_file', args: { ...args, content: 'b' } }), revision: 'rev1' })).toBeUndefined();
    expect(await service.consumeForRetry({ actionDigest: digest, revision: 'rev2' })).toBeUndefined();
    expect((await service.consumeForRetry({ actionDigest: digest, revision: 'rev1' }))?.kind).toBe('consumed');
    expect((await service.consumeForRetry({ actionDigest: digest, revision: 'rev1' }))?.kind).toBe('replay');
  });

  it('R-J-3 R-TEAM-1 eight connections (two hosts) racing on one proof: exactly one consumes, the others replay its effect', async () => {
    const proof = await issue();
    const racers = await Promise.all(Array.from({ length: 8 }, (_, i) => fixture.openAnother(i % 2 === 0 ? HOST_A : HOST_B)));
    const request = { principal: 'owner', audience: 'cli' as const, actionDigest: digestOf(ACTION), revision: 'rev1', now: clock.now() };
    const outcomes = await Promise.all(racers.map((racer, i) => racer.consume(proofHash(proof), request, `effect${i}`)));
    const consumed = outcomes.filter((outcome) => outcome.kind === 'consumed');
    expect(consumed).toHaveLength(1);
    expect(new Set(outcomes.map((outcome) => outcome.effect.id))).toEqual(new Set([consumed[0]?.effect.id]));
  });

  it('R-J-5 R-TEAM-6 reconciling marks only the named host\u2019s open intents uncertain', async () => {
    const mine = await issue('mine1');
    const request = { principal: 'owner', audience: 'cli' as const, actionDigest: digestOf(ACTION), revision: 'rev1', now: clock.now() };
    const a = await store.consume(proofHash(mine), request, 'effectA');
    // Another host's reconciliation leaves this host's intent alone.
    expect(await store.reconcileIntents(clock.now(), HOST_B)).toEqual([]);
    expect((await store.getEffect(a.effect.id))?.state).toBe('intent');
    if (kind === 'postgres') {
      const theirs = await issue('their');
      const other = await fixture.openAnother(HOST_B);
      const b = await other.consume(proofHash(theirs), request, 'effectB');
      expect((await store.reconcileIntents(clock.now())).map((effect) => effect.id)).toEqual([a.effect.id]);
      expect((await store.getEffect(b.effect.id))?.state).toBe('intent');
      expect((await store.reconcileIntents(clock.now(), HOST_B)).map((effect) => effect.id)).toEqual([b.effect.id]);
      expect((await store.getEffect(b.effect.id))?.state).toBe('uncertain');
    } else {
      expect((await store.reconcileIntents(clock.now())).map((effect) => effect.id)).toEqual([a.effect.id]);
    }
  });
});

// The gap docs/SECURITY.md used to list: a proof issued before a daemon restart
// had only its recorded wall time. The embedded journal now keeps its expiry on
// the machine's monotonic clock with the boot id, so a daemon reopened in the
// same boot refuses it however far the wall clock is set back. A team proof is
// judged by the database server's clock instead (test/e2e/teamClockSkew.test.ts),
// so this is the SQLite store's alone.
describe('a solo proof across a daemon restart (sqlite)', () => {
  let clock: FakeClock;
  let fixture: StoreFixture;

  const daemon = (store: Store): ProofService =>
    new ProofService({ store, audit: { append: () => undefined } as unknown as AuditLog, bus: new EventBus(store, () => clock.now()), clock, random, logger: silentLogger, principal: 'owner', ttlSeconds: () => 300 });

  /** Files an approved action and issues its proof on a daemon; returns the token. */
  async function issueOn(store: Store, service: ProofService, id: string): Promise<string> {
    const approval = execApproval(id);
    await store.insertApproval(approval);
    return (await service.issue(approval, { audience: 'cli', revision: 'rev1', channel: 'cli' })).proof;
  }

  async function presentOn(service: ProofService, proof: string): Promise<string> {
    try {
      return (await service.consume({ proof, audience: 'cli', actionDigest: digestOf(ACTION), revision: 'rev1' })).kind;
    } catch (error) {
      expect((error as AssentError).type).toBe('proof_invalid');
      return `refused: ${String((error as AssentError).details?.['reason'])}`;
    }
  }

  /** The daemon stopped and started again: a new store on the same journal.db and a new proof service, nothing kept in memory. */
  async function restart(): Promise<{ store: Store; service: ProofService }> {
    const store = await fixture.openAnother(HOST_A);
    return { store, service: daemon(store) };
  }

  beforeEach(async () => {
    clock = new FakeClock();
    fixture = await openStoreFixture('sqlite', clock);
  });

  afterEach(async () => {
    await fixture.close();
  });

  it('restarted in the same boot, a proof past its expiry stays refused with the wall clock set back 1 h; one within its lifetime still runs', async () => {
    const first = daemon(fixture.store);
    const expiring = await issueOn(fixture.store, first, 'ddddd');
    clock.advance(240_000);
    const fresh = await issueOn(fixture.store, first, 'dddde');
    clock.advance(61_000);
    const { store, service } = await restart();
    clock.jumpWall(-3_600_000);
    // By its recorded wall time it would be valid for almost another hour: its monotonic expiry, kept in the journal, has passed.
    expect(await presentOn(service, expiring)).toBe('refused: expired');
    expect((await service.list()).find((proof) => proof.approvalId === 'ddddd')?.state).toBe('expired');
    expect(await presentOn(service, fresh)).toBe('consumed');
    // Never longer than its wall time either: a proof issued at the set-back time, read by a daemon restarted once more, expires at once when the clock is set right.
    const late = await issueOn(store, first, 'ddddf');
    const again = await restart();
    clock.jumpWall(3_600_000);
    expect(await presentOn(again.service, late)).toBe('refused: expired');
  });

  it('after a reboot (another boot id) only the wall time is left: set back 1 h, a proof past its expiry runs again (docs/SECURITY.md, "Not covered")', async () => {
    const expiring = await issueOn(fixture.store, daemon(fixture.store), 'eeeee');
    clock.advance(301_000);
    clock.reboot();
    // The new boot's monotonic clock is past the reading kept in the old one, which means nothing now.
    clock.advance(400_000);
    const { service } = await restart();
    clock.jumpWall(-3_600_000);
    expect(await presentOn(service, expiring)).toBe('consumed');
  });
});
