// The native SHA-256 the gateway and the audit writer use must give exactly the
// digests core's pure one gives: the `v1:sha256:` format over RFC 8785 bytes is
// what proofs, handoff retries and the audit chain compare across processes.
import { describe, expect, it } from 'vitest';
import { digestOf, sha256Hex } from '../../../src/core/base/canonical.js';
import { nativeDigestOf, nativeSha256Hex } from '../../../src/journal/nativeHash.js';

const VALUES: unknown[] = [
  {},
  [],
  '',
  null,
  true,
  0,
  -0,
  { message: 'hello' },
  { path: '/srv/ünïcödé/日本語.txt', emoji: '😀👩‍👩‍👧', rtl: 'שלום', nbsp: '\u00a0', sep: '\u2028\u2029', nul: '\u0000' },
  { 'é': 1, e: 2, '\u{10000}': 3, '\uffff': 4, a: { z: [1, 'x'], b: null } },
  { big: 2 ** 53 + 2, max: Number.MAX_VALUE, min: Number.MIN_VALUE, exp: 1e21, small: 1e-7, neg: -123456789012345680000, frac: 0.1 + 0.2 },
  // As a JSON reader sees numbers beyond 2^53 and at the ends of the double range.
  JSON.parse('[9007199254740993, 18446744073709551616, 1.7976931348623157e308, 5e-324, 123e-20, 4.35, -1e-300]') as unknown,
  { nested: { deeper: { deepest: ['ü', { k: 'Ω' }] } } },
  'x'.repeat(100_000),
];

describe('native and pure SHA-256 agree', () => {
  it('digestOf with the native hash equals the pure digestOf (non-ASCII, big numbers, key order)', () => {
    for (const value of VALUES) expect(nativeDigestOf(value)).toBe(digestOf(value));
  });

  it('the digest format is unchanged: v1:sha256 over the RFC 8785 bytes', () => {
    // The SHA-256 of the literal UTF-8 text {"a":1,"b":"é"}: keys sorted, no spaces, é as two bytes.
    const expected = 'v1:sha256:09ad9fd2fb648cb2f62141215828ea00a62c299db05d20aa9ade2f527a301cc6';
    expect(nativeDigestOf({ b: 'é', a: 1 })).toBe(expected);
    expect(digestOf({ b: 'é', a: 1 })).toBe(expected);
    expect(nativeSha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('raw text and bytes hash alike, lone surrogates included (both encode them as U+FFFD)', () => {
    for (const text of ['', 'abc', 'é日本😀', '\ud800', 'a\udc00b', '{"seq":1,"prev":"v1:sha256:00"}']) {
      expect(nativeSha256Hex(text)).toBe(sha256Hex(text));
    }
    const bytes = new Uint8Array([0, 1, 2, 255, 254, 0x0a]);
    expect(nativeSha256Hex(bytes)).toBe(sha256Hex(bytes));
  });
});
