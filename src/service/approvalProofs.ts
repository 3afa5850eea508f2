// Handoff mode and the proofs an approval issues (R-MCP-8, R-J-3..7): a prompt
// call that never waits, the proof an allow leaves for the agent's identical
// retry (kept inside the daemon), and the proof an operator exports to a file.
import { AssentError } from '../core/base/errors.js';
import type { AuditRecord } from '../journal/auditRecords.js';
import type { ApprovalRecord } from '../journal/journal.js';
import type { ApprovalQueue, DecideParams } from './approvalQueue.js';
import type { ApprovalView } from './approvalViews.js';
import { actionDigestOf, type IssuedProof, type ProofService } from './proofService.js';
import { requireProofs, writeAudit, type ServiceContext } from './serviceContext.js';
import type { AuthorizeParams, AuthorizeResult, CallBase, Consent } from './toolCallTypes.js';

/** Handoff approvals one session may keep pending before further prompt calls are refused (R-MCP-8). */
export const MAX_PENDING_HANDOFF_PER_SESSION = 32;

/** A handoff call that may go ahead: run it under this consent and effect, or answer the recorded disposition. */
export type HandoffAdmission = { kind: 'run'; consent: Consent; effectId: string } | { kind: 'replay'; result: AuthorizeResult };

export interface ApprovalProofsOptions {
  /** Cap of pending handoff approvals per session (default MAX_PENDING_HANDOFF_PER_SESSION). */
  maxPendingHandoffPerSession?: number;
}

export class ApprovalProofs {
  private readonly maxPendingHandoffPerSession: number;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: ApprovalQueue,
    options: ApprovalProofsOptions = {},
  ) {
    this.maxPendingHandoffPerSession = options.maxPendingHandoffPerSession ?? MAX_PENDING_HANDOFF_PER_SESSION;
  }

  /** The proof service when handoff mode is on (configured, and the daemon has proofs); prompt calls wait otherwise. */
  handoffProofs(): ProofService | undefined {
    return this.ctx.pinned().config.approvals.handoff ? this.ctx.proofs : undefined;
  }

  /**
   * Handoff mode (R-MCP-8): a prompt call never waits. The identical retry of an
   * approved call consumes its proof inside the daemon (the agent never holds a
   * token, R-MCP-9) and runs once; a later identical retry gets the recorded
   * disposition; otherwise the call files (or reuses) a handoff approval and is
   * refused at once with its id so the agent can retry after the operator decides.
   */
  async authorizeHandoff(params: AuthorizeParams, base: CallBase, proofs: ProofService, filedCaller: Record<string, unknown> = base.caller): Promise<HandoffAdmission> {
    const { ctx } = this;
    const actionDigest = actionDigestOf({ kind: 'tool', server: params.server, tool: params.tool, args: params.args });
    const outcome = await proofs.consumeForRetry({ actionDigest, revision: ctx.pinned().revision });
    if (outcome !== undefined) {
      const consent: Consent = { channel: outcome.proof.channel, approvalId: outcome.proof.approvalId };
      if (outcome.kind === 'consumed') return { kind: 'run', consent, effectId: outcome.effect.id };
      const replay: NonNullable<AuthorizeResult['replay']> = { effectId: outcome.effect.id, state: outcome.effect.state };
      if (outcome.result !== undefined) replay.result = outcome.result;
      ctx.logger.info('identical retry answered with the recorded disposition; nothing run', { effectId: outcome.effect.id, approvalId: outcome.proof.approvalId });
      const state = outcome.effect.state;
      writeAudit(ctx, {
        ...base,
        outcome: state === 'completed' ? 'ok' : state === 'uncertain' ? 'uncertain' : 'error',
        channel: consent.channel as NonNullable<AuditRecord['channel']>,
        approvalId: outcome.proof.approvalId,
        effectId: outcome.effect.id,
        replayed: true,
        waitedForConsentMs: 0,
        durationMs: 0,
      });
      return { kind: 'replay', result: { callId: '', decision: 'allow', consent, waitedForConsentMs: 0, replay } };
    }
    const found = this.queue.findHandoff(base);
    let approvalId = found.approvalId;
    const { pendingInSession } = found;
    if (approvalId === undefined && pendingInSession >= this.maxPendingHandoffPerSession) {
      // R-MCP-8: no call waits on a handoff approval, so without a cap one session could file thousands.
      writeAudit(ctx, { ...base, outcome: 'denied', deniedReason: 'handoff_limit' });
      throw new AssentError(
        'limit_reached',
        `assent did not file an approval for ${params.server}/${params.tool}: session ${params.sessionId} already has ${pendingInSession} handoff approvals ` +
          `pending (the limit is ${this.maxPendingHandoffPerSession}), and none of them is for this exact call. The operator can list them with \`assent pending\` ` +
          `and approve or deny some (\`assent deny ID\`), or they expire after policy.consentTimeoutSeconds; retry this call after that.`,
        { details: { reason: 'handoff_limit', sessionId: params.sessionId, pending: pendingInSession, limit: this.maxPendingHandoffPerSession } },
      );
    }
    approvalId ??= (
      await this.queue.file({
      sessionId: params.sessionId,
      kind: 'tool',
      server: params.server,
      tool: params.tool,
      args: params.args,
      argsSha256: base.argsSha256,
        caller: filedCaller,
        handoff: true,
      })
    ).id;
    writeAudit(ctx, { ...base, outcome: 'denied', deniedReason: 'approval_pending', approvalId });
    throw new AssentError(
      'policy_denied',
      `assent did not run ${params.server}/${params.tool}: approval_pending (approval ${approvalId}). The operator must approve it first ` +
        `(\`assent approve ${approvalId}\`, the watch queue or the web page). After it is approved, retry this identical call ` +
        `(same tool, same arguments) once; it then runs once. A call with different arguments needs its own approval.`,
      { details: { reason: 'approval_pending', approvalId } },
    );
  }

  /**
   * After an allow of a handoff tool approval: the proof its identical retry
   * consumes (R-MCP-8); its token stays inside the daemon. Run before the
   * decision is announced, so a retry that hears of it finds the proof.
   */
  async issueRetryProof(decided: ApprovalRecord, decision: DecideParams): Promise<void> {
    const proofs = this.ctx.proofs;
    if (decision.behavior !== 'allow' || !decided.handoff || decided.kind !== 'tool' || proofs === undefined) return;
    await proofs.issue(decided, { audience: 'mcp', revision: this.ctx.pinned().revision, channel: decision.channel });
  }

  /**
   * `assent approve ID --export-proof FILE` (R-J-7): the operator's allow issues a
   * proof of audience `cli` that the caller writes to a new 0600 file. Returns the
   * token once; it is never stored, logged or sent as an event. Issued before the
   * allow is announced, so it is the approval's one proof even when a command waits on it.
   */
  async approveWithProof(params: DecideParams): Promise<{ approval: ApprovalView; proof: string; proofId: string; expiresAt: number }> {
    const proofs = requireProofs(this.ctx);
    let issued: IssuedProof | undefined;
    // A proof needs the approval resolved: a vote that leaves a quorum short is refused before anything is recorded.
    await this.queue.decide({ ...params, behavior: 'allow', mustResolve: true }, async (decided) => {
      issued = await proofs.issue(decided, { audience: 'cli', revision: this.revisionFor(decided), channel: params.channel });
    });
    if (issued === undefined) throw new AssentError('internal', `approval ${params.id} was approved but no proof was issued; run \`assent proofs list\``);
    const view = await this.queue.get(params.id);
    return { approval: view, proof: issued.proof, proofId: issued.view.id, expiresAt: issued.view.expiresAt };
  }

  /** The revision a proof for this approval binds: the daemon's pinned config for tools, the policy file the CLI read for exec. */
  private revisionFor(record: ApprovalRecord): string {
    if (record.kind === 'tool') return this.ctx.pinned().revision;
    const revision = record.caller['policyRevision'];
    return typeof revision === 'string' ? revision : '';
  }
}
