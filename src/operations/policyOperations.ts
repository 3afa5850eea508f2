// Policy snapshots for gateways (SPEC §10 design note, R-D-5): a gateway holds
// the daemon's pinned policy and active rules, settles allow and deny itself
// with the same pure evaluation, and reports those calls here for audit. Only
// `prompt` waits on the daemon. A gateway never re-reads config.json.
import { z } from 'zod';
import { AssentError, errorText } from '../core/base/errors.js';
import type { AuditLog } from '../journal/auditLog.js';
import type { ApprovalService } from '../service/approvalService.js';
import type { EventBus } from '../service/eventBus.js';
import type { AuditSpoolReader, SpoolIngestion } from './auditSpool.js';
import { RuleSchema } from './ruleForms.js';
import { acceptsSettledBatch, CallsRecordParamsSchema, toAuditRecord } from './settledCalls.js';
import { defineOperation, type Operation } from './operation.js';

const GATEWAY_ONLY = { rationale: 'called by a gateway head on behalf of live calls; not an operator action' };

export const PolicySnapshotDataSchema = z.object({
  revision: z.string(),
  path: z.string(),
  policy: z.object({
    default: z.enum(['allow', 'deny', 'prompt']),
    destructive: z.enum(['allow', 'deny', 'prompt']),
    tools: z.record(z.string(), z.enum(['allow', 'deny', 'prompt'])),
    consentTimeoutSeconds: z.number(),
    toolRisk: z.record(z.string(), z.enum(['low', 'elevated', 'high'])).optional(),
  }),
  rules: z.array(RuleSchema),
});
export type PolicySnapshotData = z.infer<typeof PolicySnapshotDataSchema>;

export interface PolicyOperationDeps {
  service: ApprovalService;
  bus: EventBus;
  audit: AuditLog;
  principal: string;
  now: () => number;
  /** Reads gateways' audit spools (auditSpool.ts); absent, `calls.ingestSpool` is refused. */
  spool?: AuditSpoolReader;
}

export function policySnapshotData(service: ApprovalService): PolicySnapshotData {
  const pinned = service.config;
  // Rules for tools that need a passkey never settle a call (R-REM-6), so a gateway does not get them.
  return { revision: pinned.revision, path: pinned.path, policy: pinned.config.policy, rules: service.rulesWithoutPresence() };
}

export function policyOperations(deps: PolicyOperationDeps): Operation[] {
  const reportListeners = new WeakMap<object, Map<string, () => void>>();
  /** The spool files each connection named: read once more when it closes, so a gateway killed -9 leaves nothing unread. */
  const spoolsOf = new WeakMap<object, Set<string>>();
  return [
    defineOperation({
      name: 'policy.get',
      summary: 'The pinned policy and the active rules, for a gateway that settles allow and deny itself; with watch, pushes `policy` notifications on every change.',
      params: z.strictObject({ watch: z.boolean().optional() }),
      result: PolicySnapshotDataSchema,
      class: 'read',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      handler: async (params, context) => {
        const connection = context.connection;
        if (params.watch === true && connection !== undefined) {
          const unsubscribe = deps.bus.subscribe((event) => {
            if (event.kind !== 'config_changed' || event.data['applied'] !== true || connection.closed) return;
            connection.notify('policy', policySnapshotData(deps.service));
          });
          connection.onClose(unsubscribe);
        }
        return policySnapshotData(deps.service);
      },
    }),
    defineOperation({
      name: 'sessions.report',
      summary:
        'A gateway reports `policy.tools` keys that name a tool its upstream does not list (such a key never decides anything; daemon.status lists them under approvals.policyToolsNotListed) and the tool names it lists to its client (a hook passes a call under the `assent` entry only for a tool a live gateway lists, R-HOOK-13), both while the gateway stays connected.',
      params: z.strictObject({
        sessionId: z.string().min(1).max(200),
        policyToolsNotListed: z
          .array(z.strictObject({ key: z.string().min(1).max(401), server: z.string().min(1).max(200), listed: z.array(z.string().max(200)).max(1000) }))
          .max(1000),
        /** Every tool name the gateway lists to its MCP client, as the client names them (`<alias>__<tool>` with several upstreams). */
        tools: z.array(z.string().min(1).max(401)).max(10_000).optional(),
      }),
      result: z.object({ recorded: z.number() }),
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      handler: async ({ sessionId, policyToolsNotListed, tools }, context) => {
        const withdrawUnlisted = deps.service.reportUnlistedPolicyTools(sessionId, policyToolsNotListed);
        // Each report replaces the last: a gateway that sends no tool names lists none of its own.
        const withdrawTools = deps.service.reportGatewayTools(sessionId, tools ?? []);
        const withdraw = (): void => {
          withdrawUnlisted();
          withdrawTools();
        };
        const connection = context.connection;
        if (connection !== undefined) {
          // One close listener per connection and session, however often the gateway reports again.
          let listeners = reportListeners.get(connection);
          if (listeners === undefined) reportListeners.set(connection, (listeners = new Map()));
          listeners.get(sessionId)?.();
          listeners.set(sessionId, connection.onClose(withdraw));
        }
        return { recorded: policyToolsNotListed.length };
      },
    }),
    defineOperation({
      name: 'calls.record',
      summary: 'Audit calls a gateway settled itself from its policy snapshot (allow or deny), after they ended; gateways send them in batches.',
      params: CallsRecordParamsSchema,
      result: z.object({ recorded: z.number() }),
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      accepts: acceptsSettledBatch,
      handler: async ({ records }) => {
        // One timestamp per batch: the records arrive together, and the ISO string costs more than the rest of a record.
        const ts = new Date(deps.now()).toISOString();
        for (const settled of records) deps.audit.append(toAuditRecord(settled, ts, deps.principal));
        return { recorded: records.length };
      },
    }),
    defineOperation({
      name: 'calls.ingestSpool',
      summary:
        "Audit what a gateway's spool file holds that was not read yet (the calls it settled itself, appended as they end); read again when the connection closes. `final` removes the file once read.",
      params: z.strictObject({ file: z.string().min(1).max(4096), final: z.boolean().optional() }),
      result: z.object({ recorded: z.number(), refused: z.number(), offset: z.number(), removed: z.boolean() }),
      class: 'write',
      exposure: { cli: GATEWAY_ONLY, rpc: true, http: GATEWAY_ONLY, mcp: GATEWAY_ONLY },
      handler: async ({ file, final }, context): Promise<SpoolIngestion> => {
        const reader = deps.spool;
        if (reader === undefined) throw new AssentError('unavailable', 'This daemon reads no audit spools; send the records with calls.record.');
        let read: SpoolIngestion;
        try {
          read = reader.ingest(file, final === true);
        } catch (error) {
          throw new AssentError('invalid_params', `${errorText(error)}. A gateway spools under <ASSENT_HOME>/spool, a folder of mode 700.`, { details: { file } });
        }
        const connection = context.connection;
        if (connection !== undefined && !read.removed) {
          let files = spoolsOf.get(connection);
          if (files === undefined) {
            const named = new Set<string>();
            spoolsOf.set(connection, (files = named));
            connection.onClose(() => {
              for (const spooled of named) {
                try {
                  reader.ingest(spooled);
                } catch {
                  // Gone or no longer readable: the next daemon start reads what is left.
                }
              }
            });
          }
          files.add(file);
        } else if (connection !== undefined) {
          spoolsOf.get(connection)?.delete(file);
        }
        return read;
      },
    }),
  ];
}
