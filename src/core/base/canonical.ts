// Canonical bytes (RFC 8785 / JCS) and versioned digests of actions.
import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { AssentError } from './errors.js';

/**
 * RFC 8785 serialization. Types are preserved: 1, "1" and true never compare equal.
 * A value with no canonical form (a lone surrogate, a non-finite number, a cycle,
 * undefined) is a typed `invalid_input`, never a bare error: the heads refuse such
 * input earlier (core/base/jsonLimits.ts), and anything that still arrives fails closed.
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    // canonicalize says what it met (a lone surrogate, NaN, a cycle); stack exhaustion is a RangeError.
    const why = error instanceof Error ? error.message : String(error);
    throw new AssentError('invalid_input', `value has no canonical JSON form (${why}); send plain JSON with well-formed strings`, { cause: error });
  }
  if (text === undefined) {
    throw new AssentError('invalid_input', 'value cannot be canonicalized (undefined, a function or a symbol)');
  }
  return text;
}

/**
 * Lowercase hex SHA-256 of a string's UTF-8 bytes (or of bytes). Core's own is
 * pure JavaScript; a process with a native one (node:crypto, several times
 * faster) passes it where it hashes on a hot path. Both give the same hex.
 */
export type Sha256Hex = (text: string | Uint8Array) => string;

/** The pure SHA-256 (`@noble/hashes`); what core uses unless a caller injects another. */
export const sha256Hex: Sha256Hex = (text) => bytesToHex(sha256(typeof text === 'string' ? utf8ToBytes(text) : text));

/** `v1:sha256:<hex>` over the canonical bytes; the prefix versions the encoding. */
export function digestOf(value: unknown, hash: Sha256Hex = sha256Hex): string {
  return `v1:sha256:${hash(canonicalJson(value))}`;
}
