// Proofs and effects on the service side (R-J-2..7): issue a proof for an
// approved action, consume it through the journal's one transaction, record the
// effect's outcome, reconcile unfinished intents at start, revoke. Every head
// that runs an approved effect goes through here; the raw token never reaches
// an event, a log line or an error.
import { canonicalJson } from '../core/base/canonical.js';
import { nativeDigestOf, nativeSha256Hex } from '../journal/nativeHash.js';
import type { Clock } from '../core/base/clock.js';
import { AssentError } from '../core/base/errors.js';
import type { RandomBytes } from '../core/base/ids.js';
import { newEffectId, newProof, newProofId, proofHash } from '../core/approval/proof.js';
import { keptRiskLevel } from '../core/approval/approvalRisk.js';
import type { EffectRecord, ProofAudience, ProofRecord } from '../core/approval/proof.js';
import type { AuditLog } from '../journal/auditLog.js';
import type { AuditRecord } from '../journal/auditRecords.js';
import type { ApprovalRecord } from '../journal/journal.js';
import { toProofView } from '../journal/proofs.js';
import type { ConsumptionOutcome, ProofView } from '../journal/proofs.js';
import type { ApprovalStore, ProofEffectStore, StoreInfo } from '../journal/store.js';
import type { EventBus } from './eventBus.js';
import type { Logger } from './logger.js';

export interface ProofServiceOptions {
  /** Proofs and effects, the approvals they come from (and their votes), and this host. */
  store: ProofEffectStore & Pick<ApprovalStore, 'getApproval' | 'listApprovalVotes'> & Pick<StoreInfo, 'hostId' | 'shared'>;
  audit: AuditLog;
  bus: EventBus;
  clock: Clock;
  random: RandomBytes;
  logger: Logger;
  principal: string;
  /**
   * Who a proof is bound to when this host's principal issues or presents it.
   * Alone, that principal; in team mode the team itself (`team:<database id>`),
   * so a proof issued by any host is consumable by any host of the team (R-TEAM-6).
   */
  proofPrincipal?: string;
  /** `approvals.proofTtlSeconds` of the pinned config, read at issue time. */
  ttlSeconds: () => number;
}

/** The exact action an approval is about, as the digest a proof binds (SPEC §1). */
export function actionDigestOf(approval: Pick<ApprovalRecord, 'kind' | 'server' | 'tool' | 'args' | 'action'>): string {
  if (approval.kind === 'tool') return nativeDigestOf({ kind: 'tool', server: approval.server ?? '', tool: approval.tool ?? '', args: approval.args ?? {} });
  return nativeDigestOf(approval.action ?? null);
}

export interface IssuedProof {
  proof: string;
  view: ProofView;
}

export class ProofService {
  private readonly proofPrincipal: string;
  /**
   * Proofs by hash: their expiry on the monotonic clock beside the wall time
   * they record. A proof is expired once either has passed, so setting the wall
   * clock back does not revive one (sudo keeps its timestamps the same way).
   * Those this process issued are here from the start; where the clock names
   * its boot, the embedded journal keeps the monotonic expiry too, so a daemon
   * restarted in the same boot reads it back (and keeps it here). After a
   * reboot, or for a team proof (the server's clock judges it), only the
   * recorded wall time is left.
   */
  private readonly monotonicExpiry = new Map<string, { at: number; wallExpiresAt: number }>();

  constructor(private readonly options: ProofServiceOptions) {
    this.proofPrincipal = options.proofPrincipal ?? options.principal;
  }

  /** The principal a proof binds for a presenter: this host's own principal stands for the team's in team mode. */
  private bindingFor(principal: string): string {
    return principal === this.options.principal ? this.proofPrincipal : principal;
  }

  /**
   * R-J-5: intents left by a crash become `uncertain`, with an event and an
   * audit line each; none is retried. Only this host's by default (R-TEAM-6);
   * `hostId` names another host of the team that will not come back.
   */
  async reconcile(hostId?: string): Promise<EffectRecord[]> {
    const { store, bus, clock } = this.options;
    const uncertain = await store.reconcileIntents(clock.now(), hostId);
    for (const effect of uncertain) {
      const approval = await store.getApproval(effect.approvalId);
      void bus.publish('effect_uncertain', { effectId: effect.id, proofId: effect.proofId, approvalId: effect.approvalId }, approval?.sessionId);
      await this.writeAudit(effect, approval, { outcome: 'uncertain' });
      this.options.logger.warn('effect left without an outcome is now uncertain; it is not retried', { effectId: effect.id, ...(hostId === undefined ? {} : { hostId }) });
    }
    return uncertain;
  }

  /**
   * Issues the one proof an approved approval may produce, bound to principal,
   * exact action digest, revision and audience. The token is returned once and
   * only its hash is kept.
   */
  async issue(approval: ApprovalRecord, params: { audience: ProofAudience; revision: string; channel: string }): Promise<IssuedProof> {
    const { clock, random, store, bus } = this.options;
    const principal = this.proofPrincipal;
    if (approval.state !== 'approved') {
      throw new AssentError('conflict', `approval ${approval.id} is ${approval.state}, not approved; only an approved action gets a proof`, {
        details: { state: approval.state },
      });
    }
    const proof = newProof(random);
    const issuedAt = clock.now();
    const record: ProofRecord = {
      id: newProofId(random),
      hash: proofHash(proof),
      approvalId: approval.id,
      principal,
      sessionId: approval.sessionId,
      actionKind: approval.kind,
      actionDigest: actionDigestOf(approval),
      revision: params.revision,
      decision: 'allow',
      channel: params.channel,
      audience: params.audience,
      issuedAt,
      expiresAt: issuedAt + this.options.ttlSeconds() * 1000,
      state: 'issued',
    };
    // The embedded journal keeps the monotonic expiry where the clock names its boot; a team's proofs are judged by the server's clock.
    const bootId = store.shared ? undefined : clock.bootId?.();
    const monotonicAt = this.rememberExpiry(record.hash, record.expiresAt, bootId !== undefined);
    await store.insertProof(record, bootId === undefined ? undefined : { bootId, at: monotonicAt });
    void bus.publish('proof_issued', { proofId: record.id, approvalId: approval.id, audience: record.audience, expiresAt: record.expiresAt }, approval.sessionId);
    return { proof, view: toProofView(record) };
  }

  /** Consumes a presented token for one exact action (R-J-3), or finds its recorded effect (R-J-4). */
  consume(params: { proof: string; audience: ProofAudience; actionDigest: string; revision: string; principal?: string }): Promise<ConsumptionOutcome> {
    return this.consumeHash(proofHash(params.proof), params);
  }

  /**
   * Keeps the monotonic expiry of a proof issued here, and returns it. Those
   * already past are forgotten only when the journal keeps them (`kept`):
   * otherwise this map is their one record, and dropping one would let a wall
   * clock set back revive its proof.
   */
  private rememberExpiry(hash: string, wallExpiresAt: number, kept: boolean): number {
    const { clock } = this.options;
    const now = clock.monotonic();
    if (kept) for (const [known, expiry] of this.monotonicExpiry) if (expiry.at <= now) this.monotonicExpiry.delete(known);
    const at = now + (wallExpiresAt - clock.now());
    this.monotonicExpiry.set(hash, { at, wallExpiresAt });
    return at;
  }

  /** A proof's monotonic expiry: this process's, or the one the journal kept in this boot (not one of an earlier boot). */
  private async expiryOf(hash: string): Promise<{ at: number; wallExpiresAt: number } | undefined> {
    const known = this.monotonicExpiry.get(hash);
    if (known !== undefined) return known;
    const bootId = this.options.clock.bootId?.();
    if (bootId === undefined) return undefined;
    const kept = await this.options.store.proofMonotonicExpiry(hash);
    if (kept === undefined || kept.bootId !== bootId) return undefined;
    const expiry = { at: kept.at, wallExpiresAt: kept.wallExpiresAt };
    if (expiry.at > this.options.clock.monotonic()) this.monotonicExpiry.set(hash, expiry);
    return expiry;
  }

  /** The time a consumption is judged at: the wall time, or the recorded expiry once the monotonic clock says the proof has expired. */
  private async judgedNow(hash: string): Promise<number> {
    const { clock } = this.options;
    const expiry = await this.expiryOf(hash);
    const now = clock.now();
    return expiry !== undefined && clock.monotonic() >= expiry.at ? Math.max(now, expiry.wallExpiresAt) : now;
  }

  private async consumeHash(hash: string, params: { audience: ProofAudience; actionDigest: string; revision: string; principal?: string }): Promise<ConsumptionOutcome> {
    const outcome = await this.options.store.consume(
      hash,
      {
        principal: this.bindingFor(params.principal ?? this.options.principal),
        audience: params.audience,
        actionDigest: params.actionDigest,
        revision: params.revision,
        now: await this.judgedNow(hash),
      },
      newEffectId(this.options.random),
    );
    if (outcome.kind === 'consumed') {
      void this.options.bus.publish(
        'proof_consumed',
        { proofId: outcome.proof.id, approvalId: outcome.proof.approvalId, effectId: outcome.effect.id, audience: outcome.proof.audience },
        outcome.proof.sessionId,
      );
    }
    return outcome;
  }

  /**
   * The handoff retry (R-MCP-8): the daemon holds no token for the agent, so the
   * identical call finds its proof by (principal, audience, exact digest) and
   * consumes it through the same transaction. Proofs that no longer authorize
   * (expired, revoked, revision changed) are skipped: a new approval is needed.
   * Returns undefined when nothing matches.
   */
  async consumeForRetry(params: { actionDigest: string; revision: string }): Promise<ConsumptionOutcome | undefined> {
    const now = this.options.clock.now();
    const candidates = await this.options.store.proofsForAction(this.proofPrincipal, 'mcp', params.actionDigest);
    for (const candidate of candidates) {
      // A proof another host of the team issued binds that host's revision; the store checks it (R-TEAM-6).
      const ours = candidate.hostId === undefined || candidate.hostId === this.options.store.hostId || candidate.actionKind !== 'tool';
      const usable =
        (candidate.state === 'issued' && candidate.expiresAt > now && (!ours || candidate.revision === params.revision)) ||
        (candidate.state === 'consumed' && candidate.expiresAt > now);
      if (!usable) continue;
      try {
        return await this.consumeHash(candidate.hash, { audience: 'mcp', actionDigest: params.actionDigest, revision: params.revision });
      } catch (error) {
        if (error instanceof AssentError && error.type === 'proof_invalid') continue;
        throw error;
      }
    }
    return undefined;
  }

  /** Records an effect's outcome and, for effects no call record audits (exec), its audit line. */
  async finishEffect(effectId: string, outcome: { ok: boolean; result?: unknown; audit?: { durationMs?: number } }): Promise<EffectRecord> {
    const { store, clock } = this.options;
    const effect = await store.getEffect(effectId);
    if (effect === undefined) throw new AssentError('not_found', `no effect ${effectId}; list effects with: assent proofs list`);
    const finish: { state: 'completed' | 'failed'; at: number; resultDigest?: string; result?: unknown } = {
      state: outcome.ok ? 'completed' : 'failed',
      at: clock.now(),
    };
    if (outcome.result !== undefined) {
      finish.result = outcome.result;
      finish.resultDigest = `v1:sha256:${nativeSha256Hex(canonicalJson(outcome.result))}`;
    }
    if (!(await store.finishEffect(effectId, finish))) {
      throw new AssentError('conflict', `effect ${effectId} already has an outcome (${effect.state}); it is not changed`, { details: { state: effect.state } });
    }
    if (outcome.audit !== undefined) {
      const approval = await store.getApproval(effect.approvalId);
      const extra: Partial<AuditRecord> = { outcome: outcome.ok ? 'ok' : 'error' };
      if (outcome.audit.durationMs !== undefined) extra.durationMs = outcome.audit.durationMs;
      await this.writeAudit(effect, approval, extra);
    }
    return (await store.getEffect(effectId)) ?? effect;
  }

  async getEffect(id: string): Promise<EffectRecord> {
    const effect = await this.options.store.getEffect(id);
    if (effect === undefined) throw new AssentError('not_found', `no effect ${id}; effect ids are printed when an approved action runs`);
    return effect;
  }

  /** Proofs newest first; an issued proof past its deadline, by the wall or the monotonic clock, is shown as `expired` (it authorizes nothing). */
  async list(limit?: number): Promise<ProofView[]> {
    const now = this.options.clock.now();
    const views: ProofView[] = [];
    for (const proof of await this.options.store.listProofs(limit)) {
      const expired = proof.state === 'issued' && (proof.expiresAt <= now || proof.expiresAt <= (await this.judgedNow(proof.hash)));
      views.push(toProofView(expired ? { ...proof, state: 'expired' } : proof));
    }
    return views;
  }

  /** Revokes a proof by its id, or the proof an approval produced (by approval id) (R-J-6). */
  async revoke(id: string): Promise<ProofView> {
    const { store, clock, bus } = this.options;
    const proof = (await store.getProof(id)) ?? (await store.getProofForApproval(id));
    if (proof === undefined) throw new AssentError('not_found', `no proof or approval ${id} with a proof; list them with: assent proofs list`);
    if (!(await store.revokeProof(proof.id, clock.now()))) {
      throw new AssentError('conflict', `proof ${proof.id} is ${proof.state} and can no longer be revoked`, { details: { state: proof.state } });
    }
    void bus.publish('proof_revoked', { proofId: proof.id, approvalId: proof.approvalId }, proof.sessionId);
    return toProofView((await store.getProof(proof.id)) ?? proof);
  }

  private async writeAudit(effect: EffectRecord, approval: ApprovalRecord | undefined, extra: Partial<AuditRecord>): Promise<void> {
    const record: Record<string, unknown> = {
      ts: new Date(this.options.clock.now()).toISOString(),
      principal: this.options.principal,
      argsSha256: approval?.argsSha256 ?? effect.actionDigest,
      approvalId: effect.approvalId,
      // The approval's risk is the effect's: every record carries a level (R-POL-10).
      risk: keptRiskLevel(approval?.caller),
      ...extra,
    };
    if (approval !== undefined) {
      record['sessionId'] = approval.sessionId;
      if (approval.kind === 'tool') {
        record['server'] = approval.server;
        record['tool'] = approval.tool;
      } else {
        record['kind'] = 'exec';
      }
      if (approval.channel !== undefined) record['channel'] = approval.channel;
      // R-TEAM-3: who resolved the approval this effect ran under, and everyone who approved it.
      if (approval.decidedBy !== undefined) record['decidedBy'] = approval.decidedBy;
      const approvedBy = (await this.options.store.listApprovalVotes(approval.id)).map((vote) => vote.principal);
      if (approvedBy.length > 0) record['approvedBy'] = approvedBy;
    }
    this.options.audit.append(record as unknown as AuditRecord);
  }
}
