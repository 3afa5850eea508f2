// SHA-256 through node:crypto for the hot paths outside core (the gateway's
// audit digests, the audit writer's chain). Same hex as core's pure one.
import { hash } from 'node:crypto';
import { digestOf, type Sha256Hex } from '../core/base/canonical.js';

/** Native one-shot SHA-256 as lowercase hex; a string is hashed as UTF-8, like core's `sha256Hex`. */
export const nativeSha256Hex: Sha256Hex = (text) => hash('sha256', text, 'hex');

/** `digestOf` with the native hash: `v1:sha256:<hex>` over the RFC 8785 bytes. */
export function nativeDigestOf(value: unknown): string {
  return digestOf(value, nativeSha256Hex);
}
