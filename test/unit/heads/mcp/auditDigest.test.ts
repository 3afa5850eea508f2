// The fast digest of a call's arguments is the RFC 8785 digest, for every shape:
// it only ever skips canonicalize when JSON.stringify writes the same text.
import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../../src/core/base/canonical.js';
import { argsDigest, isStringifyCanonical } from '../../../../src/heads/mcp/auditDigest.js';

const cases: Record<string, unknown>[] = [
  {},
  { message: 'm1' },
  { a: 1, b: [1, 2, { c: null, d: true }], e: 'é 😀 \u2028' },
  { b: 1, a: 2 },
  { nested: { z: 1, y: 2 } },
  { '10': 'x', '2': 'y' },
  { '1': 'x', '2': 'y', a: 3 },
  { n: -0, big: 1e21, small: 1e-7, f: 0.1 + 0.2, neg: -12.5 },
  { '': 'empty key', A: 'upper', a: 'lower', é: 'accent', '😀': 'astral', '\uffff': 'last bmp' },
  { deep: JSON.parse('['.repeat(70) + ']'.repeat(70)) as unknown },
  { list: [{ b: 1, a: 2 }] },
  { text: 'quote " backslash \\ newline \n tab \t control \u0001' },
];

describe('argsDigest: the audit digest of a call arguments, fast path and general path alike', () => {
  it('equals digestOf (canonicalize + SHA-256) for sorted, unsorted, integer-like, deep, unicode and numeric arguments', () => {
    for (const args of cases) expect(argsDigest(args), JSON.stringify(args).slice(0, 80)).toBe(digestOf(args));
  });

  it('takes the fast path only where JSON.stringify is the canonical form', () => {
    expect(isStringifyCanonical({ a: 1, b: { c: [1, 'x'] } })).toBe(true);
    expect(isStringifyCanonical({ b: 1, a: 2 })).toBe(false);
    expect(isStringifyCanonical({ '10': 1, '2': 2 })).toBe(false);
    expect(isStringifyCanonical({ s: '\ud800' })).toBe(false);
    expect(isStringifyCanonical({ d: new Date(0) })).toBe(false);
    expect(isStringifyCanonical({ n: Number.NaN })).toBe(false);
    expect(isStringifyCanonical({ u: undefined })).toBe(false);
  });

  it('refuses what has no canonical form, as the general path does', () => {
    expect(() => argsDigest({ s: '\ud800' })).toThrow(/canonical/);
    expect(() => argsDigest({ n: Number.POSITIVE_INFINITY })).toThrow(/canonical/);
  });
});
