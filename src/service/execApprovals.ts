// Exec approvals (`assent action run --via-daemon`): a command the CLI wants to
// start is filed like a tool call and waits for any human channel; an allow
// issues the one proof (audience `cli`) the waiting CLI consumes right before it
// spawns (R-J-3, R-J-6).
import { nativeDigestOf } from '../journal/nativeHash.js';
import { AssentError } from '../core/base/errors.js';
import { DENIAL_HELP, type ApprovalQueue } from './approvalQueue.js';
import { decidedByOf, recordDecidedBy, type WatchRequest } from './pendingApproval.js';
import { refuseWhileStopping, requireProofs, writeAudit, type ServiceContext } from './serviceContext.js';

export interface ExecApprovalRequest {
  sessionId: string;
  action: unknown;
  /** The revision of the policy file the CLI read; the proof binds it. */
  revision: string;
  caller?: Record<string, unknown>;
}

export interface ExecApprovalGrant {
  approvalId: string;
  proof: string;
  proofId: string;
  expiresAt: number;
}

export class ExecApprovals {
  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: ApprovalQueue,
  ) {}

  /** Files the exec approval and waits for it; refusals throw `policy_denied` and start nothing. */
  async request(params: ExecApprovalRequest, watch?: WatchRequest): Promise<ExecApprovalGrant> {
    const { ctx } = this;
    const proofs = requireProofs(ctx);
    refuseWhileStopping(ctx, 'command');
    // Issue 35: nothing is filed or started that the state directory's device could not record.
    const refusal = ctx.storage?.callRefusal('the command');
    if (refusal !== undefined) throw refusal;
    const record = await this.queue.file({
      sessionId: params.sessionId,
      kind: 'exec',
      action: params.action,
      argsSha256: nativeDigestOf(params.action),
      caller: { ...(params.caller ?? {}), policyRevision: params.revision },
    });
    const resolution = await this.queue.waitForResolution(record.id, watch);
    if (resolution.state !== 'approved') {
      const reason = resolution.state === 'expired' ? 'consent_timeout' : 'consent_denied';
      const line: Parameters<typeof writeAudit>[1] = { sessionId: params.sessionId, kind: 'exec', argsSha256: record.argsSha256, outcome: reason, deniedReason: resolution.reason ?? reason, approvalId: record.id };
      recordDecidedBy(line, decidedByOf(resolution));
      writeAudit(ctx, line);
      throw new AssentError('policy_denied', `${DENIAL_HELP[reason] ?? 'The action was denied.'} Approval ${record.id}; nothing was started.`, {
        details: { reason, approvalId: record.id },
      });
    }
    // The filed record still has the action (a shared store drops it once resolved); the proof binds its digest.
    const approved = { ...record, state: 'approved' as const };
    const issued = await proofs.issue(approved, { audience: 'cli', revision: params.revision, channel: resolution.channel ?? 'cli' });
    return { approvalId: record.id, proof: issued.proof, proofId: issued.view.id, expiresAt: issued.view.expiresAt };
  }
}
