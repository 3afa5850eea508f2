// The records the journal stores, and how its rows map to them: approvals,
// events, rules, calls in progress and bearer tokens. Rows are read as SQLite
// returns them (approvals and their votes come back in the same shape from both
// engines, sql/approvalQueries.ts); these functions are the only place that knows both shapes.
import { parseAgentName } from '../core/agent/agentAction.js';
import type { ArgMatcher, Rule } from '../core/policy/toolPolicy.js';

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
  /** The principal that owns the agent session which asked (R-TEAM-3): `<os user>@<host name>` of the filing host. */
  owner?: string;
  /** The host that filed it (identity.json's hostId). */
  hostId?: string;
  /** Filed under `approvals.fourEyes: true`: the owner may deny it but not approve it. */
  fourEyes?: true;
  /** Distinct principals that must approve it (`policy.quorum`), when more than one. */
  quorum?: number;
  /** The principal whose decision resolved it (the last approver of a quorum, or the denier). */
  decidedBy?: string;
  /** The host that principal decided on. */
  decidedHost?: string;
  /**
   * Filed under `policy.presence` (R-REM-6): only an enrolled passkey's assertion approves it. Stored
   * when it is filed and judged from here on every host, never from the deciding host's configuration.
   */
  presence?: 'passkey';
}

export interface ApprovalResolution {
  state: 'approved' | 'denied' | 'expired';
  channel?: string;
  reason?: string;
  scope?: 'call' | 'session';
  decidedAt: number;
  decidedBy?: string;
  decidedHost?: string;
}

/** One principal's approval of an approval (R-TEAM-3); a quorum counts these, one per principal. */
export interface ApprovalVote {
  approvalId: string;
  principal: string;
  hostId?: string;
  channel: string;
  scope: 'call' | 'session';
  votedAt: number;
}

export interface ApprovalVoteRow {
  approval_id: string;
  principal: string;
  host_id: string | null;
  channel: string;
  scope: string;
  voted_at: number;
}

export function rowToApprovalVote(row: ApprovalVoteRow): ApprovalVote {
  const vote: ApprovalVote = { approvalId: row.approval_id, principal: row.principal, channel: row.channel, scope: row.scope === 'session' ? 'session' : 'call', votedAt: row.voted_at };
  if (row.host_id !== null) vote.hostId = row.host_id;
  return vote;
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
 * Approval rows are read in raw (array) mode with this fixed column order, on
 * both engines: building a named-key object per row costs several times more,
 * and the pending list must stay fast with 10,000 rows (SPEC §14).
 */
export const APPROVAL_COLUMN_NAMES = [
  'id', 'session_id', 'kind', 'server', 'tool', 'args', 'action', 'args_sha256', 'requested_at', 'expires_at', 'caller', 'handoff', 'state', 'channel', 'reason',
  'scope', 'decided_at', 'owner', 'host_id', 'four_eyes', 'quorum', 'decided_by', 'decided_host', 'presence',
] as const;

/**
 * A flag column as an engine returns it: SQLite stores 0/1, PostgreSQL a
 * boolean. Both take 0/1 when written (PostgreSQL reads the text '1' as true),
 * so `toFlag` and `isSet` are the one place that knows.
 */
export type StoredFlag = number | boolean;

export function toFlag(value: boolean): 0 | 1 {
  return value ? 1 : 0;
}

export function isSet(flag: StoredFlag): boolean {
  return flag === true || flag === 1;
}

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
  handoff: StoredFlag,
  state: string,
  channel: string | null,
  reason: string | null,
  scope: string | null,
  decidedAt: number | null,
  owner: string | null,
  hostId: string | null,
  fourEyes: StoredFlag,
  quorum: number,
  decidedBy: string | null,
  decidedHost: string | null,
  presence: string | null,
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
  form: string;
  pattern: string | null;
  access: string | null;
  agent: string | null;
}

/** How a rule is stored: its form and, for the agent-action forms, its pattern. */
export function ruleForm(rule: Rule): { form: 'tool' | 'command' | 'path' | 'url'; pattern: string | null } {
  if (rule.command !== undefined) return { form: 'command', pattern: rule.command };
  if (rule.path !== undefined) return { form: 'path', pattern: rule.path };
  if (rule.url !== undefined) return { form: 'url', pattern: rule.url };
  return { form: 'tool', pattern: null };
}

export function rowToApproval(row: ApprovalRow): ApprovalRecord {
  const [
    id,
    sessionId,
    kind,
    server,
    tool,
    args,
    action,
    argsSha256,
    requestedAt,
    expiresAt,
    caller,
    handoff,
    state,
    channel,
    reason,
    scope,
    decidedAt,
    owner,
    hostId,
    fourEyes,
    quorum,
    decidedBy,
    decidedHost,
    presence,
  ] = row;
  const record: ApprovalRecord = {
    id,
    sessionId,
    kind: kind as ApprovalRecord['kind'],
    argsSha256,
    requestedAt,
    expiresAt,
    caller: JSON.parse(caller) as Record<string, unknown>,
    handoff: isSet(handoff),
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
  if (owner !== null) record.owner = owner;
  if (hostId !== null) record.hostId = hostId;
  if (isSet(fourEyes)) record.fourEyes = true;
  if (quorum > 1) record.quorum = quorum;
  if (decidedBy !== null) record.decidedBy = decidedBy;
  if (decidedHost !== null) record.decidedHost = decidedHost;
  if (presence === 'passkey') record.presence = presence;
  return record;
}

export function rowToEvent(row: EventRow): EventRecord {
  const event: EventRecord = { seq: row.seq, kind: row.kind, ts: row.ts, data: JSON.parse(row.data) as Record<string, unknown> };
  if (row.session_id !== null) event.sessionId = row.session_id;
  return event;
}

/**
 * A stored rule. One whose form, pattern or agent this version cannot read
 * comes back as a command rule with an empty pattern, which matches nothing:
 * never as a tool rule that might match calls.
 */
export function rowToRule(row: RuleRow): Rule {
  const rule: Rule = { id: row.id, version: row.version, args: JSON.parse(row.args) as ArgMatcher[], createdAt: row.created_at };
  const agent = row.agent === null ? undefined : parseAgentName(row.agent);
  const readable = row.agent === null || agent !== undefined;
  if (row.form === 'tool') rule.tool = row.tool;
  else if (row.form === 'path' && row.pattern !== null && readable) rule.path = row.pattern;
  else if (row.form === 'url' && row.pattern !== null && readable) rule.url = row.pattern;
  else rule.command = row.form === 'command' && row.pattern !== null && readable ? row.pattern : '';
  if (row.access === 'read' || row.access === 'write' || row.access === 'any') rule.access = row.access;
  if (agent !== undefined) rule.agent = agent;
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

/** A browser paired with "remember this device" (R-REM-3): the SHA-256 of its session cookie, never the cookie. */
export interface WebDeviceRecord {
  id: string;
  cookieSha256: string;
  name: string;
  userAgent: string;
  pairedAt: number;
  lastSeenAt: number;
  expiresAt: number;
  revokedAt?: number;
}

export interface WebDeviceRow {
  id: string;
  cookie_sha256: string;
  name: string;
  user_agent: string;
  paired_at: number;
  last_seen_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export function rowToWebDevice(row: WebDeviceRow): WebDeviceRecord {
  const device: WebDeviceRecord = {
    id: row.id,
    cookieSha256: row.cookie_sha256,
    name: row.name,
    userAgent: row.user_agent,
    pairedAt: row.paired_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
  };
  if (row.revoked_at !== null) device.revokedAt = row.revoked_at;
  return device;
}
