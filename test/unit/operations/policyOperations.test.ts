// calls.record runs for every call a gateway settled, so the daemon reads its
// batches with a hand-written check before the schema. The check may only say
// yes to what the schema accepts and would return unchanged (hardening 1, 2):
// anything else goes to the schema, which refuses it with its messages.
import { describe, expect, it } from 'vitest';
import { acceptsSettledBatch, CallsRecordParamsSchema } from '../../../src/operations/settledCalls.js';
import { nativeDigestOf } from '../../../src/journal/nativeHash.js';

/** A record as the gateway's daemon gate builds it for an allowed call. */
function gatewayRecord(n: number): Record<string, unknown> {
  return {
    sessionId: '0f8e3b2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
    server: 'everything',
    tool: 'echo',
    argsSha256: nativeDigestOf({ message: `m${n}` }),
    outcome: 'ok',
    caller: { head: 'mcp', clientName: 'claude-code', clientVersion: '2.0.1' },
    durationMs: 3,
  };
}

/** Values a hostile or broken peer could put in any field. */
const ODD_VALUES: unknown[] = [
  undefined, null, true, 0, -1, -0, 1.5, 1e308, '', 'x', 'x'.repeat(100), 'x'.repeat(101), 'x'.repeat(200), 'x'.repeat(201),
  '\ud800', 'ok', 'denied', 'cancelled', 'consent_denied', 'OK', [], [1], {}, { a: 1 }, { __proto__: null }, JSON.parse('{"__proto__":{"x":1}}'),
  { name: '\ud800' }, { '\udc00': 1 }, `v1:sha256:${'0'.repeat(64)}`, `v1:sha256:${'A'.repeat(64)}`, `v1:sha256:${'0'.repeat(63)}`,
  `v1:sha256:${'0'.repeat(64)}\n`, `v2:sha256:${'0'.repeat(64)}`, new Date(0), Object.create({ inherited: 1 }) as unknown,
];
const FIELDS = ['sessionId', 'server', 'tool', 'argsSha256', 'outcome', 'deniedReason', 'ruleId', 'durationMs', 'caller', 'args', '__proto__'];

function deep(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i += 1) value = { a: value };
  return value;
}

/** The check's promise, for one params value: a yes means the schema accepts it and returns it unchanged. */
function expectNoLooserThanSchema(params: Record<string, unknown>): boolean {
  const fast = acceptsSettledBatch(params);
  if (fast) {
    const parsed = CallsRecordParamsSchema.safeParse(params);
    expect(parsed.success, JSON.stringify(params)).toBe(true);
    expect(parsed.data).toEqual(params);
  }
  return fast;
}

describe('calls.record fast check (hardening 1, 2)', () => {
  it('accepts the batches a gateway sends, so they skip the schema', () => {
    const records = Array.from({ length: 300 }, (_, n) => gatewayRecord(n));
    records[1] = { ...gatewayRecord(1), outcome: 'denied', deniedReason: 'policy', ruleId: 'r-1' };
    records[2] = { ...gatewayRecord(2), caller: {} };
    delete records[3]?.['durationMs'];
    expect(expectNoLooserThanSchema({ records })).toBe(true);
    expect(expectNoLooserThanSchema({ records: Array.from({ length: 1000 }, (_, n) => gatewayRecord(n)) })).toBe(true);
  });

  it('never accepts what the schema refuses or would change: every field set to every odd value, and each field removed', () => {
    let refused = 0;
    for (const field of FIELDS) {
      for (const value of ODD_VALUES) {
        const record = { ...gatewayRecord(0) };
        Object.defineProperty(record, field, { value, enumerable: true, configurable: true, writable: true });
        if (!expectNoLooserThanSchema({ records: [gatewayRecord(1), record] })) refused += 1;
      }
      const without = { ...gatewayRecord(0) };
      delete without[field];
      expectNoLooserThanSchema({ records: [without] });
    }
    expect(refused).toBeGreaterThan(FIELDS.length * 20);
  });

  it('never accepts a batch of the wrong shape: empty, too long, extra keys, non-object records, callers the JSON limits refuse', () => {
    const cases: Record<string, unknown>[] = [
      { records: [] },
      { records: Array.from({ length: 1001 }, (_, n) => gatewayRecord(n)) },
      { records: [gatewayRecord(0)], extra: 1 },
      JSON.parse(`{"records":[${JSON.stringify(gatewayRecord(0))}],"__proto__":{"x":1}}`) as Record<string, unknown>,
      { records: gatewayRecord(0) },
      { records: [null] },
      { records: [[gatewayRecord(0)]] },
      { records: ['record'] },
      { records: [{ ...gatewayRecord(0), caller: deep(65) }] },
      { records: [{ ...gatewayRecord(0), caller: { list: [1, { s: '\udfff' }] } }] },
      JSON.parse(`{"records":[{"sessionId":"s","server":"a","tool":"t","argsSha256":"v1:sha256:${'0'.repeat(64)}","outcome":"ok","caller":{"n":{"__proto__":1}}}]}`) as Record<string, unknown>,
      {},
    ];
    for (const params of cases) expect(expectNoLooserThanSchema(params), JSON.stringify(params)?.slice(0, 200)).toBe(false);
    // At the depth limit the caller is still fine, for both.
    expect(expectNoLooserThanSchema({ records: [{ ...gatewayRecord(0), caller: deep(64) }] })).toBe(true);
  });

  it('agrees with the schema on random mutations of real batches (seeded)', () => {
    let seed = 0x2545f491;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    let accepted = 0;
    for (let round = 0; round < 2000; round += 1) {
      const records = Array.from({ length: 1 + random(3) }, (_, n) => gatewayRecord(n));
      for (let edits = random(3); edits > 0; edits -= 1) {
        const record = records[random(records.length)] as Record<string, unknown>;
        const field = FIELDS[random(FIELDS.length)] as string;
        if (random(4) === 0) delete record[field];
        else Object.defineProperty(record, field, { value: ODD_VALUES[random(ODD_VALUES.length)], enumerable: true, configurable: true, writable: true });
      }
      if (expectNoLooserThanSchema({ records })) accepted += 1;
    }
    // Both verdicts occur, so the comparison means something.
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(1900);
  });
});
