// The approval, call, event, rule and audit operations (R-D-4b), declared once
// for every head (R-OPS-1). Handlers are thin: validate (by schema), call the
// approval service, return its data.
import { z } from 'zod';
import { AssentError } from '../core/base/errors.js';
import { portableJson } from '../core/base/portableJson.js';
import { newApprovalId, type RandomBytes } from '../core/base/ids.js';
import { MAX_RULE_PATTERN_LENGTH } from '../core/policy/autoApproval.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import { exportAudit, verifyAudit, verifyAuditRows } from '../journal/auditReaders.js';
import { sanitizeAuditRecord, type AuditRecord } from '../journal/auditRecords.js';
import type { AuditMirrorStore, EventStore, HostStore, StoreInfo } from '../journal/store.js';
import type { ApprovalService, DecideParams, WatchRequest } from '../service/approvalService.js';
import { EVENT_KINDS, type BusEvent, type EventBus } from '../service/eventBus.js';
import { defineOperation, type CallContext, type Operation } from './operation.js';
import { parseTtl, ruleFormOf, RuleSchema } from './ruleForms.js';

const NOT_ON_MCP_HUMAN = {
  rationale: 'human-decision operations are never exposed to a model-driven head (R-OPS-3): an agent must not approve its own calls',
};
const GATEWAY_ONLY = { rationale: 'called by a gateway head on behalf of a live call; not an operator action' };
const RPC_STREAM_ONLY = { rationale: 'a long-lived wait bound to a connection; the CLI and web page use events instead' };
const SSE_STREAM = { rationale: 'HTTP streams events as server-sent events from GET /api/v1/events with the same kinds/selector filter' };

const JsonObject = z.record(z.string(), z.unknown());
/** Free-form JSON in params: refused when readers could disagree on it (a "__proto__" key, a lone surrogate, nesting past 64). */
const PortableJsonObject = portableJson(JsonObject);

export const ApprovalViewSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  kind: z.enum(['tool', 'exec']),
  server: z.string().optional(),
  tool: z.string().optional(),
  args: JsonObject.optional(),
  action: z.unknown().optional(),
  argsSha256: z.string(),
  requestedAt: z.number(),
  expiresAt: z.number(),
  caller: JsonObject,
  state: z.enum(['pending', 'approved', 'denied', 'expired']),
  channel: z.string().optional(),
  reason: z.string().optional(),
  scope: z.enum(['call', 'session']).optional(),
  decidedAt: z.number().optional(),
  handoff: z.literal(true).optional(),
  /** Only an enrolled passkey's assertion approves it (R-REM-6); every other channel can only deny. */
  presence: z.literal('passkey').optional(),
  /** R-TEAM-3: the principal owning the agent session that asked, and the host that filed it. */
  owner: z.string().optional(),
  hostId: z.string().optional(),
  /** Filed under approvals.fourEyes: the owner may deny but not approve. */
  fourEyes: z.literal(true).optional(),
  /** Distinct principals that must approve (policy.quorum), when more than one. */
  quorum: z.number().int().optional(),
  /** Who has approved so far, oldest first. */
  approvedBy: z.array(z.string()).optional(),
  /** The principal whose decision resolved it, and the host it decided on. */
  decidedBy: z.string().optional(),
  decidedHost: z.string().optional(),
});

/** What `approvals.decide` did (R-TEAM-3): resolved it, recorded one more approval of a quorum ("k of N, still pending"), or nothing (a repeat). */
const DecisionResultSchema = z.object({
  result: z.enum(['resolved', 'partial', 'repeat']),
  principal: z.string(),
  approvals: z.number().int(),
  required: z.number().int(),
});

const EventSchema = z.object({
  kind: z.string(),
  seq: z.number(),
  ts: z.number(),
  sessionId: z.string().optional(),
  data: JsonObject,
});

const IdParams = z.strictObject({ id: z.string().min(1).max(64) });

/** What identifies a gated call: calls.authorize and calls.resume take the same fields. */
const GATED_CALL_FIELDS = {
  sessionId: z.string().min(1).max(200),
  server: z.string().min(1).max(200),
  tool: z.string().min(1).max(200),
  args: PortableJsonObject,
  annotations: PortableJsonObject.optional(),
  caller: PortableJsonObject.optional(),
};

/** A call the daemon let through. */
const AdmittedCallSchema = z.object({
  callId: z.string(),
  decision: z.literal('allow'),
  consent: z.object({ channel: z.string(), approvalId: z.string().optional(), ruleId: z.string().optional() }).optional(),
  waitedForConsentMs: z.number(),
});

/**
 * How a waiting call follows the request that carries it: a cancel from a live
 * connection withdraws it, a dropped connection gets the re-attach grace (R-D-7).
 * Heads without `onEnd` (HTTP) report the end of a request through its signal.
 */
export function watchRequest(context: CallContext): WatchRequest | undefined {
  if (context.onEnd !== undefined) return (listener) => context.onEnd?.(listener);
  const signal = context.signal;
  if (signal === undefined) return undefined;
  return (listener) => {
    const onAbort = (): void => listener.requestEnded(context.connection?.closed === true ? 'disconnected' : 'cancelled');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  };
}

function optionalWatch(context: CallContext): { watch?: WatchRequest } {
  const watch = watchRequest(context);
  return watch === undefined ? {} : { watch };
}

type ApprovalOperationStores = Pick<StoreInfo, 'hostId' | 'shared'> & EventStore & HostStore & Pick<AuditMirrorStore, 'listAuditRows'>;

export interface ApprovalOperationDeps {
  service: ApprovalService;
  /** The event log, the team's hosts and audit rows, and whether the store is shared. */
  store: ApprovalOperationStores;
  bus: EventBus;
  auditDir: string;
  random: RandomBytes;
  now: () => number;
}

/**
 * The attribution of a decision (hardening 1): the channel is the one the head
 * stamped on the call context, never what the client sent; the client's word is
 * kept as `claimedChannel`, and the deciding process as the head found it.
 */
export async function decisionFrom(
  params: { id: string; behavior: 'allow' | 'deny'; channel?: string | undefined },
  context: CallContext,
): Promise<DecideParams> {
  // R-TEAM-3: the principal is the one the head set for this call (socket: `<os user>@<host>`; HTTP: the web session or token).
  const decision: DecideParams = { id: params.id, behavior: params.behavior, channel: context.channel ?? 'cli', principal: context.principal };
  if (params.channel !== undefined) decision.claimedChannel = params.channel;
  if (context.peer !== undefined) decision.peer = await context.peer();
  return decision;
}

/** The filter of events.subscribe, shared with the HTTP head's event stream so both filter alike. */
export function eventMatches(event: BusEvent, kinds: readonly string[] | undefined, selector: string | undefined): boolean {
  if (kinds !== undefined && !kinds.includes(event.kind)) return false;
  if (selector === undefined) return true;
  if (event.sessionId === selector) return true;
  const approval = event.data['approval'] as { id?: string; server?: string; tool?: string } | undefined;
  const id = (event.data['id'] as string | undefined) ?? approval?.id;
  if (id === selector) return true;
  if (approval?.server !== undefined) {
    const toolId = `${approval.server}/${approval.tool ?? ''}`;
    return selector.endsWith('/') ? toolId.startsWith(selector) : toolId === selector;
  }
  // Resolutions carry only the id; subscribers that filter keep them so they can drop the item.
  return event.kind === 'approval_resolved';
}

export function approvalOperations(deps: ApprovalOperationDeps): Operation[] {
  const { service } = deps;
  return [
    defineOperation({
      name: 'sessions.list',
      summary: 'Sessions (gateway connections) the daemon has seen and that have not ended.',
      params: z.strictObject({}),
      result: z.array(z.object({ sessionId: z.string(), caller: JsonObject, firstSeen: z.number(), lastSeen: z.number(), calls: z.number() })),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async () => service.listSessions().map(({ ended: _ended, ...rest }) => rest),
    }),
    defineOperation({
      name: 'sessions.end',
      summary: 'A gateway reports that its client went away; calls still waiting in that session are denied.',
      params: z.strictObject({ sessionId: z.string().min(1).max(200) }),
      result: z.object({ denied: z.number() }),
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      handler: async (params) => service.endSession(params.sessionId),
    }),
    defineOperation({
      name: 'calls.authorize',
      summary: 'Decide a tool call by policy, rules, session grants and, for prompt, a human (R-D-5).',
      params: z.strictObject({
        ...GATED_CALL_FIELDS,
        /** When set, a `calls.pending {requestKey, approval}` notification tells this connection the approval id as soon as it is filed. */
        requestKey: z.string().min(1).max(100).optional(),
      }),
      result: AdmittedCallSchema,
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      // Not async: the call may wait for a person, and each async layer would hold one more promise while it does.
      handler: ({ requestKey, ...params }, context) => {
        return service.authorize(params, {
          ...optionalWatch(context),
          // On the daemon socket the result goes straight to the request: nothing else is held while a person decides.
          ...(context.reply === undefined ? {} : { reply: context.reply }),
          onApprovalFiled: (approval) => {
            if (requestKey !== undefined && context.connection !== undefined && !context.connection.closed) {
              context.connection.notify('calls.pending', { requestKey, approval: { id: approval.id, expiresAt: approval.expiresAt } });
            }
          },
        });
      },
    }),
    defineOperation({
      name: 'calls.resume',
      summary: 'Re-attach a waiting call to the approval it filed before the daemon restarted (R-D-7); then as calls.authorize.',
      params: z.strictObject({
        approvalId: z.string().min(1).max(64),
        ...GATED_CALL_FIELDS,
      }),
      result: AdmittedCallSchema,
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      handler: (params, context) => service.resume(params, optionalWatch(context)),
    }),
    defineOperation({
      name: 'calls.finish',
      summary: 'Report the end of an admitted call so it is audited with its duration.',
      params: z.strictObject({
        callId: z.string().min(1).max(100),
        outcome: z.enum(['ok', 'error', 'cancelled']),
        durationMs: z.number().nonnegative().optional(),
        /** The tool result of a handoff retry, recorded with its effect so an identical retry gets it back (R-J-4). */
        result: JsonObject.optional(),
      }),
      result: z.object({ recorded: z.boolean() }),
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      handler: async (params) => {
        const finish: Parameters<ApprovalService['finish']>[0] = { callId: params.callId, outcome: params.outcome };
        if (params.durationMs !== undefined) finish.durationMs = params.durationMs;
        if (params.result !== undefined) finish.result = params.result;
        return service.finish(finish);
      },
    }),
    defineOperation({
      name: 'approvals.list',
      summary: 'Pending approvals (or those in another state), optionally narrowed by a selector: id, session, server/tool or server/.',
      params: z.strictObject({
        selector: z.string().max(400).optional(),
        state: z.enum(['pending', 'approved', 'denied', 'expired']).optional(),
        limit: z.number().int().positive().max(100_000).optional(),
      }),
      result: z.array(ApprovalViewSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      // Pending approvals are kept serialized, so a list of thousands is written without re-encoding (SPEC §14).
      handler: async (params) => service.listAsJson(params) as never,
    }),
    defineOperation({
      name: 'approvals.get',
      summary: 'One approval by id.',
      params: IdParams,
      result: ApprovalViewSchema,
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => service.get(params.id),
    }),
    defineOperation({
      name: 'approvals.wait',
      summary: 'Wait for an approval to be resolved; used by a gateway that re-attaches after a daemon restart (R-D-7).',
      params: IdParams,
      result: ApprovalViewSchema,
      class: 'read',
      exposure: { cli: RPC_STREAM_ONLY, rpc: true, http: RPC_STREAM_ONLY, mcp: RPC_STREAM_ONLY },
      handler: async (params, context) => service.wait(params.id, watchRequest(context)),
    }),
    defineOperation({
      name: 'approvals.decide',
      summary:
        'Allow or deny a pending approval, once or for the rest of its session. The recorded channel is the head the decision came through; a `channel` param is only a claim, recorded as claimedChannel. ' +
        'The deciding principal is the caller (R-TEAM-3): under approvals.fourEyes the session owner may only deny; under policy.quorum an allow is recorded until enough distinct principals approved (`decision` says which).',
      params: z.strictObject({
        id: z.string().min(1).max(64),
        behavior: z.enum(['allow', 'deny']),
        scope: z.enum(['call', 'session']).optional(),
        reason: z.string().max(1000).optional(),
        /** What the client says it is (`watch`, `tty`…): a hint kept beside the stamped channel, never the channel. */
        channel: z.enum(['cli', 'watch', 'tty', 'elicitation']).optional(),
      }),
      result: ApprovalViewSchema.extend({ decision: DecisionResultSchema }),
      class: 'human-decision',
      exposure: { cli: true, rpc: true, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params, context) => {
        const decision = await decisionFrom(params, context);
        if (params.scope !== undefined) decision.scope = params.scope;
        if (params.reason !== undefined) decision.reason = params.reason;
        return service.decide(decision);
      },
    }),
    defineOperation({
      name: 'events.subscribe',
      summary: 'Push events to this connection as `event` notifications, optionally filtered by kind and selector.',
      params: z.strictObject({
        kinds: z.array(z.enum(EVENT_KINDS)).optional(),
        selector: z.string().max(400).optional(),
      }),
      result: z.object({ subscribed: z.boolean() }),
      class: 'read',
      exposure: { cli: true, rpc: true, http: SSE_STREAM, mcp: RPC_STREAM_ONLY },
      handler: async (params, context) => {
        const connection = context.connection;
        if (connection === undefined) throw new AssentError('invalid_params', 'events.subscribe needs a connection that can receive notifications');
        const unsubscribe = deps.bus.subscribe((event) => {
          if (connection.closed) return;
          if (eventMatches(event, params.kinds, params.selector)) connection.notify('event', event);
        });
        connection.onClose(unsubscribe);
        return { subscribed: true };
      },
    }),
    defineOperation({
      name: 'events.since',
      summary: 'Events after a cursor (their seq), oldest first, without raw arguments.',
      params: z.strictObject({ cursor: z.number().int().nonnegative(), limit: z.number().int().positive().max(10_000).optional() }),
      result: z.array(EventSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => deps.store.eventsSince(params.cursor, params.limit ?? 1000),
    }),
    defineOperation({
      name: 'rules.add',
      summary:
        'Add an auto-approval rule that turns matching prompt calls into allow (never overrides deny): a tool rule (tool, args), or a rule for one part of an agent action (command, path with access, or url; agent limits it to one agent).',
      params: z.strictObject({
        tool: z.string().regex(/^[^/\s]+\/[^\s]+$/, 'a tool id <server>/<tool>').optional(),
        args: z.array(z.string().max(2000)).max(32).optional(),
        command: z.string().max(MAX_RULE_PATTERN_LENGTH).optional(),
        path: z.string().max(MAX_RULE_PATTERN_LENGTH).optional(),
        access: z.enum(['read', 'write', 'any']).optional(),
        url: z.string().max(MAX_RULE_PATTERN_LENGTH).optional(),
        agent: z.string().max(40).optional(),
        ttl: z.string().optional(),
      }),
      result: RuleSchema,
      class: 'human-decision',
      exposure: { cli: true, rpc: true, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params) => {
        const createdAt = deps.now();
        const rule: Rule = { id: `r${newApprovalId(deps.random)}`, version: 1, ...ruleFormOf(params), createdAt };
        if (params.ttl !== undefined) rule.expiresAt = createdAt + parseTtl(params.ttl);
        const added = await service.addRule(rule);
        // Gateways settle allow locally from a policy snapshot; tell them at once (policy.get watch).
        void deps.bus.publish('config_changed', { applied: true, source: 'rules', ruleId: added.id });
        return added;
      },
    }),
    defineOperation({
      name: 'rules.list',
      summary: 'Auto-approval rules; revoked and expired ones with includeInactive.',
      params: z.strictObject({ includeInactive: z.boolean().optional() }),
      result: z.array(RuleSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => service.listRules(params.includeInactive ?? false),
    }),
    defineOperation({
      name: 'rules.revoke',
      summary: 'Revoke a rule; it stops matching at once.',
      params: IdParams,
      result: RuleSchema,
      class: 'write',
      exposure: { cli: true, rpc: true, http: true, mcp: { rationale: 'rule management stays with the operator; no MCP tool changes rules (R-POL-4)' } },
      handler: async (params) => {
        const revoked = await service.revokeRule(params.id);
        void deps.bus.publish('config_changed', { applied: true, source: 'rules', ruleId: revoked.id });
        return revoked;
      },
    }),
    defineOperation({
      name: 'audit.query',
      summary:
        'Audit records, oldest first, optionally since a time (ms since epoch); this host\u2019s, or with allHosts every host\u2019s from the team database, each with its hostId and hostName (R-TEAM-4).',
      params: z.strictObject({ since: z.number().optional(), limit: z.number().int().positive().max(100_000).optional(), allHosts: z.boolean().optional() }),
      result: z.array(JsonObject),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => {
        const since = params.since === undefined ? {} : { since: params.since };
        const records =
          params.allHosts === true && deps.store.shared ? await teamAuditRecords(deps.store, params.since) : (exportAudit(deps.auditDir, since) as unknown as Record<string, unknown>[]);
        return params.limit === undefined ? records : records.slice(-params.limit);
      },
    }),
    defineOperation({
      name: 'audit.verify',
      summary:
        'Verify the audit hash chain: this host\u2019s files, or with allHosts every host\u2019s chain recomputed from its rows in the team database (R-TEAM-4); names the first broken link of each host.',
      params: z.strictObject({ allHosts: z.boolean().optional() }),
      result: z.object({
        ok: z.boolean(),
        hosts: z.array(
          z.object({
            hostId: z.string(),
            hostName: z.string().optional(),
            ok: z.boolean(),
            lines: z.number(),
            firstBroken: z.object({ seq: z.number().optional(), file: z.string().optional(), line: z.number().optional(), reason: z.string() }).optional(),
          }),
        ),
      }),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => {
        if (params.allHosts !== true || !deps.store.shared) {
          const local = verifyAudit(deps.auditDir);
          const host: { hostId: string; ok: boolean; lines: number; firstBroken?: { file: string; line: number; reason: string } } = { hostId: deps.store.hostId, ok: local.ok, lines: local.lines };
          if (local.firstBroken !== undefined) host.firstBroken = local.firstBroken;
          return { ok: local.ok, hosts: [host] };
        }
        const [rows, known] = await Promise.all([deps.store.listAuditRows(), deps.store.listHosts()]);
        const names = new Map(known.map((host) => [host.hostId, host.name]));
        const byHost = new Map<string, { seq: number; line: string }[]>();
        for (const row of rows) {
          const list = byHost.get(row.hostId) ?? [];
          list.push(row);
          byHost.set(row.hostId, list);
        }
        const hosts = [...byHost.entries()].map(([hostId, hostRows]) => {
          const verified = verifyAuditRows(hostId, hostRows);
          const name = names.get(hostId);
          return name === undefined ? verified : { ...verified, hostName: name };
        });
        return { ok: hosts.every((host) => host.ok), hosts };
      },
    }),
  ];
}

/** Every host's audit records from the team database (R-TEAM-4): each line read back like the file's, tagged with its host; oldest first. */
async function teamAuditRecords(store: ApprovalOperationStores, since: number | undefined): Promise<Record<string, unknown>[]> {
  const [rows, hosts] = await Promise.all([store.listAuditRows(), store.listHosts()]);
  const names = new Map(hosts.map((host) => [host.hostId, host.name]));
  const records: Record<string, unknown>[] = [];
  for (const row of rows) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.line);
    } catch {
      continue;
    }
    if (parsed === null || typeof parsed !== 'object') continue;
    const record = sanitizeAuditRecord(parsed as AuditRecord) as unknown as Record<string, unknown>;
    if (since !== undefined && !(Date.parse(String(record['ts'])) >= since)) continue;
    record['hostId'] = row.hostId;
    const name = names.get(row.hostId);
    if (name !== undefined) record['hostName'] = name;
    records.push(record);
  }
  // Stable: each host's lines keep their chain order where times tie.
  return records.sort((a, b) => String(a['ts']).localeCompare(String(b['ts'])));
}
