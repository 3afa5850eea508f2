// The WebAuthn challenge of a passkey-confirmed approval (R-REM-6): 32 bytes
// that bind the approval id, the action digest and a fresh single-use nonce.
// An authenticator signs it, so an assertion made for one approval, one action
// or one nonce verifies for no other. Pure: the nonce's randomness is injected.
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { canonicalJson } from '../base/canonical.js';
import type { RandomBytes } from '../base/ids.js';
import { base64url } from './proof.js';

/** Versions the binding: a later encoding gets a new tag, so no old assertion verifies under it. */
export const APPROVAL_CHALLENGE_TAG = 'assent/passkey-approval/v1';

export interface ApprovalBinding {
  approvalId: string;
  /** The approval's `argsSha256`: `v1:sha256:<hex>` of the exact action. */
  actionDigest: string;
  nonce: string;
}

/** The challenge (base64url) for one approval, one action, one nonce: SHA-256 of their canonical JSON under the tag. */
export function approvalChallenge(binding: ApprovalBinding): string {
  const bytes = canonicalJson({ tag: APPROVAL_CHALLENGE_TAG, approvalId: binding.approvalId, actionDigest: binding.actionDigest, nonce: binding.nonce });
  return base64url(sha256(utf8ToBytes(bytes)));
}

/** A fresh nonce: 32 random bytes, base64url. */
export function newNonce(random: RandomBytes): string {
  return base64url(random(32));
}

/** Whether text could be a nonce from `newNonce` (43 base64url characters). */
export function isNonceShaped(text: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(text);
}
