// What leaves this machine for each audit line (R-AUD-4): a projection that says
// how the call was decided, its risk, agent and host, and digests only. The
// caller block, the peer and free text never leave: they may quote arguments,
// commands or paths. Pure; docs/audit.md documents every field.

/** How a call was decided, in the words of R-AUD-4. */
export type DecidedHow = 'policy' | 'confined' | 'rule' | 'person' | 'passkey' | 'quorum' | 'session' | 'timeout' | 'withdrawn' | 'unavailable' | 'system' | 'unknown';

/** One exported record: flat, every value a string, number or list of strings. */
export interface ExportRecord {
  /** This host (identity.json) and its label: with seq, the record's identity for de-duplication. */
  hostId: string;
  hostName: string;
  seq: number;
  ts: string;
  outcome: string;
  decidedHow: DecidedHow;
  /** The principal that owns the call's host or session (`<os user>@<host>`). */
  principal?: string;
  /** The principal whose decision resolved its approval; `approvedBy` lists every approving principal (a quorum's N). */
  decidedBy?: string;
  approvedBy?: string[];
  channel?: string;
  ruleId?: string;
  approvalId?: string;
  credentialId?: string;
  /** A stable reason code (`policy`, `consent_denied`, `shutdown`…); never the operator's own words. */
  deniedReason?: string;
  risk: 'low' | 'elevated' | 'high' | 'unrated';
  agent?: string;
  server?: string;
  tool?: string;
  kind?: string;
  sessionId?: string;
  callId?: string;
  effectId?: string;
  argsSha256?: string;
  /** The digest of the audit line itself (what the next line names as `prev`), and that `prev`. */
  lineSha256: string;
  prev?: string;
  waitedForConsentMs?: number;
  durationMs?: number;
}

const HUMAN_CHANNELS = new Set(['tty', 'cli', 'watch', 'web', 'elicitation', 'agent']);
const WITHDRAWN_REASONS = new Set(['cancelled', 'withdrawn', 'session_ended', 'disconnected']);
/** `disk_full`, `disk_error`: refused because the state directory's device took no writes (issue 35). */
const SYSTEM_REASONS = new Set(['shutdown', 'unavailable', 'handoff_limit', 'approval_pending', 'no_consent_channel', 'disk_full', 'disk_error']);
/** A reason code: lower-case words and underscores. Anything else (an operator's text) is not exported. */
const REASON_CODE = /^[a-z][a-z0-9_]{0,63}$/;
/** Identifiers that are safe to export as they are: ids, principals, names. No spaces, no slashes that could form a path. */
const SAFE_ID = /^[A-Za-z0-9@._:+-]{1,200}$/;
/**
 * A policy key that decided a call (`policy.default`, `policy.commands.rules.35`,
 * `policy.tools.fs/write_file`): its one slash parts a tool id (already exported
 * as server and tool), never a path.
 */
const POLICY_KEY = /^policy\.[A-Za-z0-9@._:+-]{1,200}(?:\/[A-Za-z0-9@._:+-]{1,200})?$/;

function str(line: Record<string, unknown>, key: string): string | undefined {
  const value = line[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function num(line: Record<string, unknown>, key: string): number | undefined {
  const value = line[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function safeId(value: string | undefined): string | undefined {
  return value !== undefined && SAFE_ID.test(value) ? value : undefined;
}

/** How the line says its call was decided. */
export function decidedHowOf(line: Record<string, unknown>): DecidedHow {
  const outcome = str(line, 'outcome');
  const reason = str(line, 'deniedReason');
  const channel = str(line, 'channel');
  if (outcome === 'consent_timeout' || reason === 'consent_timeout') return 'timeout';
  if (outcome === 'cancelled' || (reason !== undefined && WITHDRAWN_REASONS.has(reason))) return 'withdrawn';
  if (line['presence'] === 'passkey') return 'passkey';
  const approvedBy = line['approvedBy'];
  if (Array.isArray(approvedBy) && approvedBy.length > 1) return 'quorum';
  if (channel === 'rule') return 'rule';
  if (channel === 'session') return 'session';
  if (channel !== undefined && HUMAN_CHANNELS.has(channel)) return 'person';
  // Refused because no daemon could decide it (a gateway or hook in a restart's gap, audited from its spool).
  if (reason === 'unavailable') return 'unavailable';
  if (reason !== undefined && SYSTEM_REASONS.has(reason)) return 'system';
  // R-SH-14: allowed by policy to run only in the sandbox its profile digest names.
  if (str(line, 'confined') !== undefined) return 'confined';
  if (reason === 'policy' || outcome === 'ok' || outcome === 'error' || outcome === 'started' || outcome === 'denied' || outcome === 'uncertain' || outcome === 'no_outcome') return 'policy';
  return 'unknown';
}

/**
 * The record exported for one audit line as written (`text`, its exact bytes' string),
 * with the host that wrote it and the line's own digest (computed by the caller,
 * which holds the hash). Never copies `caller`, `peer`, `claimedChannel` or anything unknown.
 */
export function toExportRecord(line: Record<string, unknown>, host: { id: string; name: string }, lineSha256: string): ExportRecord {
  const record: ExportRecord = {
    hostId: host.id,
    hostName: host.name,
    seq: num(line, 'seq') ?? 0,
    ts: str(line, 'ts') ?? '',
    outcome: str(line, 'outcome') ?? 'unknown',
    decidedHow: decidedHowOf(line),
    risk: riskOf(line['risk']),
    lineSha256,
  };
  const copy = <K extends keyof ExportRecord>(key: K, value: ExportRecord[K] | undefined): void => {
    if (value !== undefined) record[key] = value;
  };
  copy('principal', safeId(str(line, 'principal')));
  copy('decidedBy', safeId(str(line, 'decidedBy')));
  const approvedBy = line['approvedBy'];
  if (Array.isArray(approvedBy)) {
    const ids = approvedBy.filter((item): item is string => typeof item === 'string' && SAFE_ID.test(item));
    if (ids.length > 0) record.approvedBy = ids;
  }
  copy('channel', safeId(str(line, 'channel')));
  const ruleId = str(line, 'ruleId');
  copy('ruleId', ruleId !== undefined && POLICY_KEY.test(ruleId) && !ruleId.includes('..') ? ruleId : safeId(ruleId));
  copy('approvalId', safeId(str(line, 'approvalId')));
  copy('credentialId', safeId(str(line, 'credentialId')));
  const reason = str(line, 'deniedReason');
  if (reason !== undefined && REASON_CODE.test(reason)) record.deniedReason = reason;
  copy('agent', safeId(str(line, 'agent')));
  copy('server', safeId(str(line, 'server')));
  copy('tool', safeId(str(line, 'tool')));
  copy('kind', safeId(str(line, 'kind')));
  copy('sessionId', safeId(str(line, 'sessionId')));
  copy('callId', safeId(str(line, 'callId')));
  copy('effectId', safeId(str(line, 'effectId')));
  copy('argsSha256', safeId(str(line, 'argsSha256')));
  copy('prev', safeId(str(line, 'prev')));
  copy('waitedForConsentMs', num(line, 'waitedForConsentMs'));
  copy('durationMs', num(line, 'durationMs'));
  return record;
}

function riskOf(value: unknown): ExportRecord['risk'] {
  return value === 'low' || value === 'elevated' || value === 'high' ? value : 'unrated';
}

/** `server/tool`, the exec kind, or `-`. */
export function toolIdOf(record: ExportRecord): string {
  if (record.server !== undefined && record.tool !== undefined) return `${record.server}/${record.tool}`;
  return record.kind ?? record.tool ?? '-';
}

/** Outcomes that let the call run. */
export function wasAllowed(outcome: string): boolean {
  return outcome === 'ok' || outcome === 'error' || outcome === 'started' || outcome === 'uncertain' || outcome === 'no_outcome';
}

/** One human sentence for a record, used as a log body: no argument, command or path, only ids. */
export function summaryOf(record: ExportRecord): string {
  const who = record.decidedBy !== undefined ? ` by ${record.decidedBy}` : record.ruleId !== undefined ? ` by rule ${record.ruleId}` : '';
  return `assent ${record.outcome} ${toolIdOf(record)} (${record.decidedHow}${who}, risk ${record.risk})`;
}

/** The record's fields as ordered pairs, lists joined with commas: the one flattening every format maps from. */
export function exportFields(record: ExportRecord): [string, string | number][] {
  const out: [string, string | number][] = [];
  for (const [key, value] of Object.entries(record) as [string, unknown][]) {
    if (value === undefined) continue;
    if (Array.isArray(value)) out.push([key, value.join(',')]);
    else if (typeof value === 'string' || typeof value === 'number') out.push([key, value]);
  }
  return out;
}
