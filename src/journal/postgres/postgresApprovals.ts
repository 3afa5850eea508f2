// The team store's approvals and their votes (R-D-4, R-D-6, R-TEAM-3).
import type pg from 'pg';
import { AssentError } from '../../core/base/errors.js';
import { rowToApprovalVote, type ApprovalRecord, type ApprovalResolution, type ApprovalState, type ApprovalVote, type ApprovalVoteRow } from '../journalRecords.js';
import type { ApprovalStore, DecisionJudge } from '../store.js';
import { isUniqueViolation, type PgContext, type PgQuery } from './postgresQuery.js';

interface ApprovalRow {
  id: string;
  host_id: string;
  session_id: string;
  kind: string;
  server: string | null;
  tool: string | null;
  args: string | null;
  action: string | null;
  args_sha256: string;
  requested_at: number;
  expires_at: number;
  caller: string;
  handoff: boolean;
  state: string;
  channel: string | null;
  reason: string | null;
  scope: string | null;
  decided_at: number | null;
  owner: string | null;
  four_eyes: boolean;
  quorum: number;
  decided_by: string | null;
  decided_host: string | null;
  presence: string | null;
}

function rowToApproval(row: ApprovalRow): ApprovalRecord {
  const record: ApprovalRecord = {
    id: row.id,
    sessionId: row.session_id,
    kind: row.kind as ApprovalRecord['kind'],
    argsSha256: row.args_sha256,
    requestedAt: row.requested_at,
    expiresAt: row.expires_at,
    caller: JSON.parse(row.caller) as Record<string, unknown>,
    handoff: row.handoff,
    state: row.state as ApprovalState,
    hostId: row.host_id,
  };
  if (row.server !== null) record.server = row.server;
  if (row.tool !== null) record.tool = row.tool;
  if (row.args !== null) record.args = JSON.parse(row.args) as Record<string, unknown>;
  if (row.action !== null) record.action = JSON.parse(row.action) as unknown;
  if (row.channel !== null) record.channel = row.channel;
  if (row.reason !== null) record.reason = row.reason;
  if (row.scope !== null) record.scope = row.scope as 'call' | 'session';
  if (row.decided_at !== null) record.decidedAt = row.decided_at;
  if (row.owner !== null) record.owner = row.owner;
  if (row.four_eyes) record.fourEyes = true;
  if (row.quorum > 1) record.quorum = row.quorum;
  if (row.decided_by !== null) record.decidedBy = row.decided_by;
  if (row.decided_host !== null) record.decidedHost = row.decided_host;
  if (row.presence === 'passkey') record.presence = row.presence;
  return record;
}

// ------------------------------------------------------------ approvals

async function insertApproval(db: PgContext, record: ApprovalRecord): Promise<void> {
  try {
    await db.query(
      `INSERT INTO approvals (id, host_id, session_id, kind, server, tool, args, action, args_sha256, requested_at, expires_at, caller, handoff, state, channel, reason, scope, decided_at,
                              decided_by, owner, four_eyes, quorum, decided_host, presence)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`,
      [
        record.id,
        record.hostId ?? db.hostId,
        record.sessionId,
        record.kind,
        record.server ?? null,
        record.tool ?? null,
        record.args === undefined ? null : JSON.stringify(record.args),
        record.action === undefined ? null : JSON.stringify(record.action),
        record.argsSha256,
        record.requestedAt,
        record.expiresAt,
        JSON.stringify(record.caller),
        record.handoff,
        record.state,
        record.channel ?? null,
        record.reason ?? null,
        record.scope ?? null,
        record.decidedAt ?? null,
        record.decidedBy ?? null,
        record.owner ?? null,
        record.fourEyes === true,
        record.quorum ?? 1,
        record.decidedHost ?? null,
        record.presence ?? null,
      ],
    );
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AssentError('conflict', `approval id ${record.id} already exists in the journal; draw a new id and retry`, { details: { id: record.id } });
    }
    throw error;
  }
}

async function getApproval(db: PgContext, id: string): Promise<ApprovalRecord | undefined> {
  const row = (await db.query<ApprovalRow>('SELECT * FROM approvals WHERE id = $1', [id])).rows[0];
  return row === undefined ? undefined : rowToApproval(row);
}

async function listApprovals(db: PgContext, filter: { state?: ApprovalState; limit?: number } = {}): Promise<ApprovalRecord[]> {
  const limit = filter.limit === undefined ? null : Math.max(0, Math.floor(filter.limit));
  const result =
    filter.state === undefined
      ? await db.query<ApprovalRow>('SELECT * FROM approvals ORDER BY requested_at, id LIMIT $1', [limit])
      : await db.query<ApprovalRow>('SELECT * FROM approvals WHERE state = $1 ORDER BY requested_at, id LIMIT $2', [filter.state, limit]);
  return result.rows.map(rowToApproval);
}

/**
 * The deciding transaction across hosts: the approval's row is locked
 * (SELECT … FOR UPDATE) while its votes are read, the judge decides and the
 * vote and resolution are written, then the judge's local write (a passkey
 * counter in this host's journal) just before COMMIT; a racing decider on any
 * host waits on the lock, then reads the outcome.
 */
function decideApproval<T>(db: PgContext, id: string, judge: DecisionJudge<T>): Promise<T> {
  return db.transaction(async (client) => {
    const row = (await client.query<ApprovalRow>('SELECT * FROM approvals WHERE id = $1 FOR UPDATE', [id])).rows[0];
    const record = row === undefined ? undefined : rowToApproval(row);
    const votes =
      record === undefined
        ? []
        : (await client.query<ApprovalVoteRow>('SELECT * FROM approval_votes WHERE approval_id = $1 ORDER BY voted_at, principal', [id])).rows.map(rowToApprovalVote);
    const { writes, result } = judge({ record, votes });
    if (writes.vote !== undefined) await insertVote(client, writes.vote);
    if (writes.resolution !== undefined && !(await resolveIn((text, values) => client.query(text, values), id, writes.resolution))) {
      throw new AssentError('conflict', `approval ${id} was already resolved`);
    }
    // This host's own write (a passkey counter) goes last, before COMMIT: a throw rolls the decision back.
    if (writes.localWrite !== undefined && (writes.vote !== undefined || writes.resolution !== undefined)) writes.localWrite();
    return result;
  });
}

async function listApprovalVotes(db: PgContext, approvalId: string): Promise<ApprovalVote[]> {
  const result = await db.query<ApprovalVoteRow>('SELECT * FROM approval_votes WHERE approval_id = $1 ORDER BY voted_at, principal', [approvalId]);
  return result.rows.map(rowToApprovalVote);
}

async function listPendingApprovalVotes(db: PgContext): Promise<ApprovalVote[]> {
  const result = await db.query<ApprovalVoteRow>(
    "SELECT v.* FROM approval_votes v JOIN approvals a ON a.id = v.approval_id WHERE a.state = 'pending' ORDER BY v.voted_at, v.principal",
  );
  return result.rows.map(rowToApprovalVote);
}

/** The compare-and-set from pending; the raw arguments go in the same statement (R-TEAM-6). */
async function resolveIn(query: PgQuery, id: string, resolution: ApprovalResolution): Promise<boolean> {
  const result = await query(
    `UPDATE approvals SET state = $2, channel = $3, reason = $4, scope = $5, decided_at = $6, decided_by = $7, decided_host = $8, args = NULL, action = NULL
     WHERE id = $1 AND state = 'pending'`,
    [id, resolution.state, resolution.channel ?? null, resolution.reason ?? null, resolution.scope ?? null, resolution.decidedAt, resolution.decidedBy ?? null, resolution.decidedHost ?? null],
  );
  return result.rowCount === 1;
}

/** Records one principal's approval; a repeat by the same principal changes nothing. */
async function insertVote(client: pg.PoolClient, vote: ApprovalVote): Promise<void> {
  await client.query(
    'INSERT INTO approval_votes (approval_id, principal, host_id, channel, scope, voted_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (approval_id, principal) DO NOTHING',
    [vote.approvalId, vote.principal, vote.hostId ?? null, vote.channel, vote.scope, vote.votedAt],
  );
}

export function postgresApprovals(db: PgContext): ApprovalStore {
  return {
    insertApproval: (record) => insertApproval(db, record),
    getApproval: (id) => getApproval(db, id),
    listApprovals: (filter) => listApprovals(db, filter),
    resolveApproval: (id, resolution) => resolveIn(db.query, id, resolution),
    decideApproval: (id, judge) => decideApproval(db, id, judge),
    listApprovalVotes: (approvalId) => listApprovalVotes(db, approvalId),
    listPendingApprovalVotes: () => listPendingApprovalVotes(db),
  };
}
