// A call a gateway settled itself from its policy snapshot (allow or deny, R-D-5),
// as `calls.record` takes it and the audit spool holds it, and the audit record
// it becomes: shared by the policy operations and the spool reader.
import { z } from 'zod';
import { findJsonProblem } from '../core/base/jsonLimits.js';
import { portableJson } from '../core/base/portableJson.js';
import type { AuditRecord } from '../journal/auditRecords.js';

const DIGEST_PATTERN = /^v1:sha256:[0-9a-f]{64}$/;
const SETTLED_OUTCOMES = ['ok', 'error', 'denied', 'cancelled'] as const;
const MAX_SETTLED_BATCH = 1000;
const RISK_LEVELS = ['low', 'elevated', 'high'] as const;
/** An agent's hook name (`claude-code`, `codex`…): lower-case words. */
const AGENT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

export const SettledCallSchema = z.strictObject({
  sessionId: z.string().min(1).max(200),
  server: z.string().min(1).max(200),
  tool: z.string().min(1).max(200),
  argsSha256: z.string().regex(DIGEST_PATTERN),
  outcome: z.enum(SETTLED_OUTCOMES),
  deniedReason: z.string().max(100).optional(),
  ruleId: z.string().max(100).optional(),
  /** Decided by policy alone: the policy key that decided, audited as the line's ruleId (R-AUD-1). */
  policyKey: z.string().max(500).optional(),
  /** The call's risk level (R-POL-10), rated by the gateway from its annotations as the daemon rates the calls it decides. */
  risk: z.enum(RISK_LEVELS).optional(),
  durationMs: z.number().nonnegative().optional(),
  /** A hook's refusal with no daemon to decide it (heads/hook/hookSpool.ts): the agent whose call it was (R-HOOK-10). */
  agent: z.string().regex(AGENT_NAME).optional(),
  caller: portableJson(z.record(z.string(), z.unknown())).optional(),
});
type SettledCall = z.infer<typeof SettledCallSchema>;
export type SettledCallRecord = SettledCall;

export const CallsRecordParamsSchema = z.strictObject({ records: z.array(SettledCallSchema).min(1).max(MAX_SETTLED_BATCH) });

const text = (value: unknown, min: number, max: number): boolean => typeof value === 'string' && value.length >= min && value.length <= max;

function isObjectLiteral(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype;
}

/** One record as the schema reads it, field by field; any key the schema does not name makes it false. */
export function isSettledCall(value: unknown): boolean {
  if (!isObjectLiteral(value)) return false;
  let required = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
    const field = value[key];
    switch (key) {
      case 'sessionId':
      case 'server':
      case 'tool':
        if (!text(field, 1, 200)) return false;
        required += 1;
        break;
      case 'argsSha256':
        if (typeof field !== 'string' || !DIGEST_PATTERN.test(field)) return false;
        required += 1;
        break;
      case 'outcome':
        if (!(SETTLED_OUTCOMES as readonly unknown[]).includes(field)) return false;
        required += 1;
        break;
      case 'deniedReason':
      case 'ruleId':
        if (!text(field, 0, 100)) return false;
        break;
      case 'policyKey':
        if (!text(field, 0, 500)) return false;
        break;
      case 'risk':
        if (!(RISK_LEVELS as readonly unknown[]).includes(field)) return false;
        break;
      case 'agent':
        if (typeof field !== 'string' || !AGENT_NAME.test(field)) return false;
        break;
      case 'durationMs':
        if (typeof field !== 'number' || !Number.isFinite(field) || !(field >= 0)) return false;
        break;
      case 'caller':
        if (!isObjectLiteral(field) || findJsonProblem(field) !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return required === 5;
}

/**
 * `calls.record` runs for every call a gateway settled, in batches of hundreds:
 * this check reads a batch as CallsRecordParamsSchema does without its
 * per-field work and copies. Anything it is unsure of goes to the schema.
 */
export function acceptsSettledBatch(params: Record<string, unknown>): boolean {
  const records = params['records'];
  if (!Array.isArray(records) || records.length < 1 || records.length > MAX_SETTLED_BATCH) return false;
  for (const key in params) if (key !== 'records') return false;
  for (const record of records as unknown[]) if (!isSettledCall(record)) return false;
  return true;
}

export function toAuditRecord(settled: SettledCall, ts: string, principal: string): AuditRecord {
  const record: AuditRecord = {
    ts,
    principal,
    sessionId: settled.sessionId,
    server: settled.server,
    tool: settled.tool,
    argsSha256: settled.argsSha256,
    outcome: settled.outcome,
    waitedForConsentMs: 0,
  };
  if (settled.deniedReason !== undefined) record.deniedReason = settled.deniedReason;
  if (settled.ruleId !== undefined) {
    record.ruleId = settled.ruleId;
    record.channel = 'rule';
  } else if (settled.policyKey !== undefined) {
    // Policy alone decided: the key names what decided, with no consent channel (decidedHow stays `policy`).
    record.ruleId = settled.policyKey;
  }
  if (settled.risk !== undefined) record.risk = settled.risk;
  if (settled.agent !== undefined) record.agent = settled.agent;
  if (settled.durationMs !== undefined) record.durationMs = Math.round(settled.durationMs);
  if (settled.caller !== undefined) record.caller = settled.caller;
  return record;
}
