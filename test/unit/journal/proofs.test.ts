// R-J-2..6 at the store and service level with an injected clock: issue, the
// one-transaction consumption, replay, every refusal reason, reconciliation.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/core/canonical.js';
import { FakeClock } from '../../../src/core/clock.js';
import { AssentError } from '../../../src/core/errors.js';
import { isProofShaped, newProof, proofHash } from '../../../src/core/proof.js';
import type { AuditLog, AuditRecord } from '../../../src/journal/auditLog.js';
import { Journal, type ApprovalRecord } from '../../../src/journal/journal.js';
import { ProofStore } from '../../../src/journal/proofs.js';
import { EventBus } from '../../../src/service/eventBus.js';
import { silentLogger } from '../../../src/service/logger.js';
import { ProofService, actionDigestOf } from '../../../src/service/proofService.js';

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

describe('proofs and effects in the journal', () => {
  let tmp: string;
  let clock: FakeClock;
  let journal: Journal;
  let store: ProofStore;
  let service: ProofService;
  let audit: AuditRecord[];
  let bus: EventBus;
  let events: { kind: string; data: Record<string, unknown> }[];

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-proofs-'));
    const file = path.join(tmp, 'journal.db');
    clock = new FakeClock();
    journal = Journal.open(file, { clock });
    store = ProofStore.open(file);
    audit = [];
    events = [];
    bus = new EventBus(journal, () => clock.now());
    bus.subscribe((event) => events.push(event));
    service = new ProofService({
      store,
      journal,
      audit: { append: (record: AuditRecord) => audit.push(record) } as unknown as AuditLog,
      bus,
      clock,
      random,
      logger: silentLogger,
      principal: 'owner',
      ttlSeconds: () => 300,
    });
  });

  afterEach(() => {
    store.close();
    journal.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  function issue(id = 'abcde', audience: 'cli' | 'mcp' = 'cli', revision = 'rev1'): string {
    const approval = execApproval(id);
    journal.insertApproval(approval);
    return service.issue(approval, { audience, revision, channel: 'cli' }).proof;
  }

  function refusalOf(fn: () => unknown): string | undefined {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(AssentError);
      expect((error as AssentError).type).toBe('proof_invalid');
      return (error as AssentError).details?.['reason'] as string;
    }
    return undefined;
  }

  const present = (proof: string, overrides: Partial<{ audience: 'cli' | 'mcp'; actionDigest: string; revision: string; principal: string }> = {}) =>
    service.consume({ proof, audience: 'cli', actionDigest: digestOf(ACTION), revision: 'rev1', ...overrides });

  it('R-J-2 a proof is asp1_ + 256 bits and only its SHA-256 is stored', () => {
    const proof = issue();
    expect(isProofShaped(proof)).toBe(true);
    expect(proof).toMatch(/^asp1_[A-Za-z0-9_-]{43}$/);
    const bytes = fs.readFileSync(path.join(tmp, 'journal.db'));
    const wal = fs.existsSync(path.join(tmp, 'journal.db-wal')) ? fs.readFileSync(path.join(tmp, 'journal.db-wal')) : Buffer.alloc(0);
    const all = Buffer.concat([bytes, wal]).toString('latin1');
    expect(all).not.toContain(proof);
    expect(all).toContain(proofHash(proof));
    const [record] = store.listProofs();
    expect(record).toMatchObject({ principal: 'owner', audience: 'cli', actionKind: 'exec', actionDigest: digestOf(ACTION), revision: 'rev1', state: 'issued' });
    expect(JSON.stringify(events)).not.toContain(proof);
    expect(events.map((e) => e.kind)).toContain('proof_issued');
  });

  it('R-J-3 consumption records the intent in the same transaction; R-J-4 a second presentation replays it', () => {
    const proof = issue();
    const first = present(proof);
    expect(first.kind).toBe('consumed');
    expect(store.getEffect(first.effect.id)?.state).toBe('intent');
    expect(store.getProofByHash(proofHash(proof))?.state).toBe('consumed');
    service.finishEffect(first.effect.id, { ok: true, result: { content: [] } });
    const again = present(proof);
    expect(again.kind).toBe('replay');
    expect(again.effect.id).toBe(first.effect.id);
    expect(again.effect.state).toBe('completed');
    expect(again.effect.resultDigest).toMatch(/^v1:sha256:[0-9a-f]{64}$/);
  });

  it('R-J-4 each refusal has its own reason and records no effect', () => {
    expect(refusalOf(() => present(newProof(random)))).toBe('unknown');

    const expiring = issue('bbbbb');
    clock.advance(301_000);
    expect(refusalOf(() => present(expiring))).toBe('expired');

    const revoked = issue('ccccc');
    const revokedId = store.getProofByHash(proofHash(revoked))!.id;
    service.revoke(revokedId);
    expect(refusalOf(() => present(revoked))).toBe('revoked');

    const byApproval = issue('ccccd');
    service.revoke('ccccd');
    expect(refusalOf(() => present(byApproval))).toBe('revoked');

    const used = issue('ddddd');
    present(used);
    expect(refusalOf(() => present(used, { actionDigest: digestOf(OTHER_ACTION) }))).toBe('consumed-for-other-action');

    const fresh = issue('eeeee');
    expect(refusalOf(() => present(fresh, { actionDigest: digestOf(OTHER_ACTION) }))).toBe('other-action');
    expect(refusalOf(() => present(fresh, { principal: 'someone-else' }))).toBe('other-principal');
    expect(refusalOf(() => present(fresh, { audience: 'mcp' }))).toBe('other-audience');
    expect(refusalOf(() => present(fresh, { revision: 'rev2' }))).toBe('revision-changed');
    // None of the refusals consumed it: the right presentation still works once.
    expect(present(fresh).kind).toBe('consumed');

    const effects = store.listProofs().filter((p) => p.effectId !== undefined);
    expect(effects.map((p) => p.approvalId).sort()).toEqual(['ddddd', 'eeeee']);
  });

  it('R-J-4 refusal messages never contain the token', () => {
    const proof = issue();
    try {
      present(proof, { revision: 'other' });
    } catch (error) {
      expect(JSON.stringify((error as AssentError).toJSON())).not.toContain(proof);
      expect((error as AssentError).message).toMatch(/revision-changed/);
    }
  });

  it('R-J-5 an intent without an outcome becomes uncertain with an event and an audit line; replay runs nothing', () => {
    const proof = issue();
    const { effect } = present(proof);
    const uncertain = service.reconcile();
    expect(uncertain.map((e) => e.id)).toEqual([effect.id]);
    expect(store.getEffect(effect.id)?.state).toBe('uncertain');
    expect(events.some((e) => e.kind === 'effect_uncertain' && e.data['effectId'] === effect.id)).toBe(true);
    expect(audit).toEqual([expect.objectContaining({ outcome: 'uncertain', approvalId: 'abcde', kind: 'exec' })]);
    const replay = present(proof);
    expect(replay).toMatchObject({ kind: 'replay', effect: { state: 'uncertain' } });
    expect(() => service.finishEffect(effect.id, { ok: true })).toThrow(/already has an outcome/);
    expect(service.reconcile()).toEqual([]);
  });

  it('R-MCP-8 handoff proofs are found by exact digest; other arguments do not match', () => {
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
    journal.insertApproval(approval);
    service.issue(approval, { audience: 'mcp', revision: 'rev1', channel: 'cli' });
    const digest = actionDigestOf({ kind: 'tool', server: 'fs', tool: 'write_file', args });
    expect(service.consumeForRetry({ actionDigest: actionDigestOf({ kind: 'tool', server: 'fs', tool: 'write_file', args: { ...args, content: 'b' } }), revision: 'rev1' })).toBeUndefined();
    expect(service.consumeForRetry({ actionDigest: digest, revision: 'rev2' })).toBeUndefined();
    expect(service.consumeForRetry({ actionDigest: digest, revision: 'rev1' })?.kind).toBe('consumed');
    expect(service.consumeForRetry({ actionDigest: digest, revision: 'rev1' })?.kind).toBe('replay');
  });
});
