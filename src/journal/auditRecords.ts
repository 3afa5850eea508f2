// What an audit record holds (R-AUD-1) and the order its fields are written in;
// anything else a caller passes is dropped before it reaches disk.

/**
 * `withdrawn`: an agent action whose agent went away while it waited for a person (R-HOOK-12); nothing ran.
 * `no_outcome`: an allowed agent action whose after-event did not come within hooks.timeoutSeconds (R-HOOK-12).
 * `started`: an allowed agent action whose after-event has not arrived (R-HOOK-10); its end, if reported, is a second line with the same callId.
 * `refused`: a decision that was not accepted (four-eyes, R-TEAM-3); the approval stays pending and nothing ran.
 */
export type AuditOutcome = 'ok' | 'error' | 'denied' | 'consent_denied' | 'consent_timeout' | 'cancelled' | 'withdrawn' | 'uncertain' | 'started' | 'no_outcome' | 'refused';
export type AuditChannel = 'tty' | 'cli' | 'watch' | 'web' | 'elicitation' | 'agent' | 'rule' | 'session';

/**
 * The process that sent a decision, as the daemon found it (never as the client
 * said): `ss+proc` when the kernel named it, `unavailable` with a reason otherwise.
 */
export interface AuditPeer {
  source: 'ss+proc' | 'unavailable';
  pid?: number;
  /** Several processes share the connection (an inherited or passed socket). */
  pids?: number[];
  /** Effective uid of the process(es), read from /proc when the decision arrived. */
  uid?: number;
  reason?: string;
}

/** R-AUD-1 fields. There is deliberately no field for raw arguments: only their digest. */
export interface AuditRecord {
  /** ISO 8601 time of the call. */
  ts: string;
  principal: string;
  /** Agent actions (R-HOOK-10): the hook name of the agent (`claude-code`, `codex`, `gemini`); `server` is then its alias. */
  agent?: string;
  /** The call an agent action's `started` line and its end line share (R-HOOK-10). */
  callId?: string;
  sessionId?: string;
  server?: string;
  tool?: string;
  kind?: 'exec';
  argsSha256: string;
  outcome: AuditOutcome;
  deniedReason?: string;
  channel?: AuditChannel;
  approvalId?: string;
  ruleId?: string;
  waitedForConsentMs?: number;
  durationMs?: number;
  caller?: Record<string, unknown>;
  /** The effect a proof-bound call ran as (handoff retries, exec via the daemon). */
  effectId?: string;
  /** True when an identical retry was answered with the recorded disposition and nothing ran (R-J-4). */
  replayed?: boolean;
  /** The channel the deciding client said it was; a hint beside the head-stamped `channel`, never a fact. */
  claimedChannel?: string;
  /** The process that sent the decision over the socket, found by the daemon. */
  peer?: AuditPeer;
  /** The principal whose decision resolved the approval, or whose decision was refused (R-TEAM-3). */
  decidedBy?: string;
  /** Every principal that approved, oldest first (one, or a quorum's N; R-TEAM-3). */
  approvedBy?: string[];
  /** `passkey` when the approval was confirmed by a passkey's assertion (R-REM-6), with the credential that made it. */
  presence?: 'passkey';
  credentialId?: string;
  /** The call's risk level (R-POL-10): what its approval showed, or would have shown (R-AUD-4). */
  risk?: 'low' | 'elevated' | 'high';
  /** R-SH-14: the call ran confined, in the sandbox whose profile has this sha256 digest. */
  confined?: string;
}

/** The order fields are written in; anything else a caller passes is dropped. */
export const AUDIT_FIELDS = [
  'ts',
  'principal',
  'sessionId',
  'server',
  'tool',
  'kind',
  'argsSha256',
  'outcome',
  'deniedReason',
  'channel',
  'approvalId',
  'ruleId',
  'waitedForConsentMs',
  'durationMs',
  'caller',
  'effectId',
  'replayed',
  'claimedChannel',
  'peer',
  'agent',
  'callId',
  'decidedBy',
  'approvedBy',
  'presence',
  'credentialId',
  'risk',
  'confined',
] as const satisfies readonly (keyof AuditRecord)[];

/** Copies the R-AUD-1 fields into `out` in their order and drops everything else, so a stray `args` never reaches disk. */
export function copyAuditFields(record: AuditRecord, out: Record<string, unknown>): Record<string, unknown> {
  const source = record as unknown as Record<string, unknown>;
  for (const field of AUDIT_FIELDS) {
    const value = source[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** Picks the R-AUD-1 fields and drops everything else, so a stray `args` never reaches disk. */
export function sanitizeAuditRecord(record: AuditRecord): AuditRecord {
  return copyAuditFields(record, {}) as unknown as AuditRecord;
}
