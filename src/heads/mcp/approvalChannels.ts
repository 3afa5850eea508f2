// The gateway's own channels for a call that waits for approval: the MCP client's
// elicitation form (R-MCP-6) and the controlling terminal (R-MCP-7).
import { randomBytes } from 'node:crypto';
import { errorText } from '../../core/base/errors.js';
import { escapedJson, escapeText } from '../../core/base/escape.js';
import type { Logger } from '../../service/logger.js';
import type { GateCall } from './gate.js';

/** The form an MCP client shows for the elicitation channel: the complete escaped call and one yes/no. */
export function elicitationRequest(call: GateCall, approvalId: string): Record<string, unknown> {
  return {
    message:
      `assent: approval ${approvalId}. ${escapeText(`${call.server}/${call.tool}`)} wants to run with exactly these arguments:\n` +
      `${escapedJson(call.args, 2)}\nApprove this exact call once?`,
    requestedSchema: {
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Approve this exact call', description: 'true runs it once; false denies it' } },
      required: ['approve'],
    },
  };
}

export interface ApprovalChannelsOptions {
  /** The gateway's session, for a call that names none. */
  sessionId: string;
  logger: Logger;
  now: () => number;
  /** Sends the operator's answer to the daemon (`approvals.decide`); rejects when there is no daemon connection. */
  decide: (params: Record<string, unknown>) => Promise<unknown>;
}

/** Each ask runs until it has an answer or `signal` aborts (another channel won); it never rejects. */
export interface ApprovalChannels {
  askThroughElicitation(elicit: NonNullable<GateCall['elicit']>, call: GateCall, approvalId: string, signal: AbortSignal): Promise<void>;
  askThroughTerminal(call: GateCall, approvalId: string, expiresAt: number, signal: AbortSignal): Promise<void>;
}

export function createApprovalChannels(options: ApprovalChannelsOptions): ApprovalChannels {
  const { sessionId, logger, now, decide } = options;
  return {
    async askThroughElicitation(elicit, call, approvalId, signal) {
      try {
        const answer = await elicit(elicitationRequest(call, approvalId), signal);
        if (signal.aborted || answer['action'] === 'cancel') return;
        const content = answer['content'] as Record<string, unknown> | undefined;
        const approve = answer['action'] === 'accept' && content?.['approve'] === true;
        await decide({ id: approvalId, behavior: approve ? 'allow' : 'deny', channel: 'elicitation' });
      } catch (error) {
        // Cancelled because another channel won, or the client failed: the other channels still decide.
        if (!signal.aborted) logger.info('elicitation channel gave no decision', { approvalId, error: errorText(error) });
      }
    },

    async askThroughTerminal(call, approvalId, expiresAt, signal) {
      try {
        // The terminal channel and its preview load with the first call that asks there, not with every gateway.
        const [{ askOnControllingTerminal }, { renderApprovalPreview }] = await Promise.all([
          import('../../channels/ttyApproval.js'),
          import('../../core/approval/approvalPreview.js'),
        ]);
        const preview = renderApprovalPreview(
          { id: approvalId, sessionId: call.sessionId || sessionId, kind: 'tool', server: call.server, tool: call.tool, args: call.args, requestedAt: now(), expiresAt, caller: call.caller },
          now(),
        );
        const answer = await askOnControllingTerminal({ preview, random: (n) => randomBytes(n), signal });
        if (answer !== 'allow' || signal.aborted) return;
        await decide({ id: approvalId, behavior: 'allow', channel: 'tty' });
      } catch (error) {
        logger.info('tty channel could not decide', { approvalId, error: errorText(error) });
      }
    },
  };
}
