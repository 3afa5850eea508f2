// A call the gateway settled itself (allowed or denied from its policy snapshot,
// or refused with no daemon to decide it) as the audit queue (auditQueue.ts)
// holds it, and the head of the spool lines it is written in.

/** A call the gate allowed or denied by policy itself, as it is audited. */
export interface SettledCall {
  sessionId: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  ruleId?: string;
  /** Decided by policy alone: the key that decided (`policy.tools.fs/x`, `policy.default`); the record's ruleId (R-AUD-1). */
  policyKey?: string;
  /** The call's risk level (R-POL-10): from its annotations, as the daemon rates the calls it decides. */
  risk?: 'low' | 'elevated' | 'high';
  /**
   * Why a `denied` call was refused when policy did not refuse it: `unavailable` (no daemon could decide it, in a
   * restart's gap) or `no_consent_channel` (a prompt with no daemon to ask through). Absent: refused by policy.
   */
  deniedReason?: 'unavailable' | 'no_consent_channel';
  caller: Record<string, unknown>;
  /** The length of the request's line (an upper bound of the arguments' size), when known: bounds what deferred records hold. */
  argsSize?: number;
}

/** `cancelled`: allowed, but the client withdrew it before it was forwarded; it never ran. */
export type SettledOutcome = 'ok' | 'error' | 'denied' | 'cancelled';

/** Distinct (session, server, tool, rule) record heads kept serialized; beyond it the cache starts over. */
const MAX_RECORD_HEADS = 1000;

/**
 * The fields of a spool record that are the same for every call of one session, server, tool, rule and caller,
 * serialized once as the `head` of a spool line (auditQueue.ts writes the lines, operations/auditSpool.ts reads
 * them): a burst spools call after call of one head, and re-serializing its caller each time costs more than its
 * digest.
 */
export class SpoolHeads {
  private readonly heads = new Map<string, string>();
  private headsCaller: Record<string, unknown> | undefined;
  /** The call whose head was asked for last: a burst asks for the same head call after call, and a key built per call costs more than the rest of its entry. */
  private lastHeadOf: SettledCall | undefined;
  private lastHead = '';

  headOf(call: SettledCall): string {
    const last = this.lastHeadOf;
    if (
      last !== undefined &&
      call.tool === last.tool &&
      call.server === last.server &&
      call.sessionId === last.sessionId &&
      call.ruleId === last.ruleId &&
      call.policyKey === last.policyKey &&
      call.risk === last.risk &&
      call.caller === last.caller
    ) {
      return this.lastHead;
    }
    this.lastHeadOf = call;
    this.lastHead = this.serialized(call);
    return this.lastHead;
  }

  private serialized(call: SettledCall): string {
    if (call.caller !== this.headsCaller || this.heads.size >= MAX_RECORD_HEADS) {
      this.heads.clear();
      this.headsCaller = call.caller;
    }
    const key = `${call.sessionId}\u0000${call.server}\u0000${call.tool}\u0000${call.ruleId ?? ''}\u0000${call.policyKey ?? ''}\u0000${call.risk ?? ''}`;
    let head = this.heads.get(key);
    if (head === undefined) {
      head =
        `{"sessionId":${JSON.stringify(call.sessionId)},"server":${JSON.stringify(call.server)},"tool":${JSON.stringify(call.tool)},` +
        `"caller":${JSON.stringify(call.caller)}${call.ruleId === undefined ? '' : `,"ruleId":${JSON.stringify(call.ruleId)}`}` +
        `${call.policyKey === undefined ? '' : `,"policyKey":${JSON.stringify(call.policyKey)}`}${call.risk === undefined ? '' : `,"risk":"${call.risk}"`}}`;
      this.heads.set(key, head);
    }
    return head;
  }
}
