// The records the journal stores, and how its rows map to them: approvals,
// events, rules, calls in progress and bearer tokens. Rows are read as SQLite
// returns them; these functions are the only place that knows both shapes.
import type { ArgMatcher, Rule } from '../core/toolPolicy.js';

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'expired';

export interface ApprovalRecord {
  id: string;
  sessionId: string;
  kind: 'tool' | 'exec';
  server?: string;
  tool?: string;
  args?: Record<string, unknown>;
  action?: unknown;
  argsSha256: string;
  requestedAt: number;
  expiresAt: number;
  caller: Record<string, unknown>;
  handoff: boolean;
  state: ApprovalState;
  channel?: string;
  reason?: string;
  scope?: 'call' | 'session';
  decidedAt?: number;
  /** The host that filed it, in a store shared by several hosts (R-TEAM-2); absent in the embedded journal. */
  hostId?: string;
  /** Who resolved it, as recorded by a shared store: the deciding principal, or the host that expired it. */
  decidedBy?: string;
}

export interface ApprovalResolution {
  state: 'approved' | 'denied' | 'expired';
  channel?: string;
  reason?: string;
  scope?: 'call' | 'session';
  decidedAt: number;
  /** Who resolved it (a principal, or `host <name>` for a lifecycle resolution); kept by a shared store. */
  decidedBy?: string;
}

export interface EventRecord {
  seq: number;
  kind: string;
  ts: number;
  sessionId?: string;
  data: Record<string, unknown>;
}

/** A call the daemon admitted whose end it has not been told yet (kept durably, so a crash cannot hide it). */
export interface CallInProgressRecord {
  callId: string;
  sessionId: string;
  server: string;
  tool: string;
  argsSha256: string;
  caller: Record<string, unknown>;
  channel?: string;
  approvalId?: string;
  ruleId?: string;
  waitedForConsentMs: number;
  /** Wall-clock ms when the daemon admitted it. */
  authorizedAt: number;
}

export interface CallInProgressRow {
  call_id: string;
  session_id: string;
  server: string;
  tool: string;
  args_sha256: string;
  caller: string;
  channel: string | null;
  approval_id: string | null;
  rule_id: string | null;
  waited_ms: number;
  authorized_at: number;
}

export function rowToCallInProgress(row: CallInProgressRow): CallInProgressRecord {
  const record: CallInProgressRecord = {
    callId: row.call_id,
    sessionId: row.session_id,
    server: row.server,
    tool: row.tool,
    argsSha256: row.args_sha256,
    caller: JSON.parse(row.caller) as Record<string, unknown>,
    waitedForConsentMs: row.waited_ms,
    authorizedAt: row.authorized_at,
  };
  if (row.channel !== null) record.channel = row.channel;
  if (row.approval_id !== null) record.approvalId = row.approval_id;
  if (row.rule_id !== null) record.ruleId = row.rule_id;
  return record;
}

/**
 * Approval rows are read in raw (array) mode with this fixed column order:
 * building a named-key object per row costs several times more, and the
 * pending list must stay fast with 10,000 rows (SPEC §14).
 */
export const APPROVAL_COLUMNS =
  'id, session_id, kind, server, tool, args, action, args_sha256, requested_at, expires_at, caller, handoff, state, channel, reason, scope, decided_at';

export type ApprovalRow = [
  id: string,
  sessionId: string,
  kind: string,
  server: string | null,
  tool: string | null,
  args: string | null,
  action: string | null,
  argsSha256: string,
  requestedAt: number,
  expiresAt: number,
  caller: string,
  handoff: number,
  state: string,
  channel: string | null,
  reason: string | null,
  scope: string | null,
  decidedAt: number | null,
];

export interface EventRow {
  seq: number;
  kind: string;
  ts: number;
  session_id: string | null;
  data: string;
}

export interface RuleRow {
  id: string;
  version: number;
  tool: string;
  args: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export function rowToApproval(row: ApprovalRow): ApprovalRecord {
  const [id, sessionId, kind, server, tool, args, action, argsSha256, requestedAt, expiresAt, caller, handoff, state, channel, reason, scope, decidedAt] =
    row;
  const record: ApprovalRecord = {
    id,
    sessionId,
    kind: kind as ApprovalRecord['kind'],
    argsSha256,
    requestedAt,
    expiresAt,
    caller: JSON.parse(caller) as Record<string, unknown>,
    handoff: handoff === 1,
    state: state as ApprovalState,
  };
  if (server !== null) record.server = server;
  if (tool !== null) record.tool = tool;
  if (args !== null) record.args = JSON.parse(args) as Record<string, unknown>;
  if (action !== null) record.action = JSON.parse(action) as unknown;
  if (channel !== null) record.channel = channel;
  if (reason !== null) record.reason = reason;
  if (scope !== null) record.scope = scope as 'call' | 'session';
  if (decidedAt !== null) record.decidedAt = decidedAt;
  return record;
}

export function rowToEvent(row: EventRow): EventRecord {
  const event: EventRecord = { seq: row.seq, kind: row.kind, ts: row.ts, data: JSON.parse(row.data) as Record<string, unknown> };
  if (row.session_id !== null) event.sessionId = row.session_id;
  return event;
}

export function rowToRule(row: RuleRow): Rule {
  const rule: Rule = {
    id: row.id,
    version: row.version,
    tool: row.tool,
    args: JSON.parse(row.args) as ArgMatcher[],
    createdAt: row.created_at,
  };
  if (row.expires_at !== null) rule.expiresAt = row.expires_at;
  if (row.revoked_at !== null) rule.revokedAt = row.revoked_at;
  return rule;
}

/** A bearer token as stored: metadata and the SHA-256 of the secret (R-WEB-4). */
export interface TokenRecord {
  id: string;
  name: string;
  tokenSha256: string;
  audience: string;
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
}

export interface TokenRow {
  id: string;
  name: string;
  token_sha256: string;
  audience: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export function rowToToken(row: TokenRow): TokenRecord {
  const token: TokenRecord = {
    id: row.id,
    name: row.name,
    tokenSha256: row.token_sha256,
    audience: row.audience,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
  if (row.revoked_at !== null) token.revokedAt = row.revoked_at;
  return token;
}
