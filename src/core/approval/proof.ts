// Proofs (SPEC §1, R-J-2..4): the cross-process form of a grant. A proof is a
// 256-bit random token `asp1_<base64url>`; only its SHA-256 is ever stored. This
// file holds the pure parts: minting, hashing, and the consumption decision.
import { sha256Hex } from '../base/canonical.js';
import type { RandomBytes } from '../base/ids.js';
import { ID_ALPHABET, randomString } from '../base/ids.js';

export const PROOF_PREFIX = 'asp1_';

/** Exactly what `newProof` produces: the prefix and 43 base64url characters (256 bits). */
const PROOF_PATTERN = /^asp1_[A-Za-z0-9_-]{43}$/;

/** Which head may present a proof: the gateway retry, the CLI, or the HTTP API. */
export type ProofAudience = 'mcp' | 'cli' | 'http';
export type ProofState = 'issued' | 'consumed' | 'revoked' | 'expired';
export type EffectState = 'intent' | 'completed' | 'failed' | 'uncertain';

/**
 * Why a presented proof authorizes nothing (`proof_invalid` details.reason).
 * Each has its own string so an operator can tell a stale file from a replay.
 */
export type ProofRefusal =
  | 'unknown'
  | 'expired'
  | 'revoked'
  | 'consumed-for-other-action'
  | 'other-action'
  | 'other-principal'
  | 'other-audience'
  | 'revision-changed';

/** The durable record of R-J-2. There is deliberately no field for the raw token. */
export interface ProofRecord {
  id: string;
  hash: string;
  approvalId: string;
  principal: string;
  sessionId: string;
  actionKind: 'tool' | 'exec';
  actionDigest: string;
  revision: string;
  decision: 'allow';
  channel: string;
  audience: ProofAudience;
  issuedAt: number;
  expiresAt: number;
  state: ProofState;
  consumedAt?: number;
  revokedAt?: number;
  effectId?: string;
  /** The host that issued it, in a store shared by a team (R-TEAM-6): its revision is the one the proof binds. */
  hostId?: string;
}

export interface EffectRecord {
  id: string;
  proofHash: string;
  proofId: string;
  approvalId: string;
  actionDigest: string;
  state: EffectState;
  startedAt: number;
  finishedAt?: number;
  resultDigest?: string;
}

/** What the consumer presents along with the proof; every field is checked against the record. */
export interface ConsumptionRequest {
  principal: string;
  audience: ProofAudience;
  actionDigest: string;
  revision: string;
  now: number;
}

export type ConsumptionVerdict = { kind: 'consume' } | { kind: 'replay' } | { kind: 'refuse'; reason: ProofRefusal };

/** Unpadded base64url (RFC 4648 §5) of bytes, without Buffer (core imports no node: module). */
export function base64url(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(value >> bits) & 63];
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += alphabet[(value << (6 - bits)) & 63];
  return out;
}

/** A fresh proof token: 32 random bytes, never stored, never logged. */
export function newProof(random: RandomBytes): string {
  return `${PROOF_PREFIX}${base64url(random(32))}`;
}

/** The only form of a proof the journal keeps (hex SHA-256 of the token's bytes). */
export function proofHash(proof: string): string {
  return sha256Hex(proof);
}

export function isProofShaped(text: string): boolean {
  return PROOF_PATTERN.test(text);
}

/** A short public handle for `assent proofs list|revoke`; it authorizes nothing. */
export function newProofId(random: RandomBytes): string {
  return `p${randomString(random, ID_ALPHABET, 9)}`;
}

export function newEffectId(random: RandomBytes): string {
  return `e${randomString(random, ID_ALPHABET, 9)}`;
}

/**
 * The consumption decision of R-J-3/R-J-4, as a pure function of the stored
 * record and the request. A consumed proof presented for the very same action
 * by its principal and audience is a replay (answered with the recorded
 * disposition); everything else that does not match is refused with its reason.
 * Revocation and expiry are checked after replay: a replay runs nothing.
 */
export function decideConsumption(record: ProofRecord | undefined, request: ConsumptionRequest): ConsumptionVerdict {
  if (record === undefined) return { kind: 'refuse', reason: 'unknown' };
  if (record.principal !== request.principal) return { kind: 'refuse', reason: 'other-principal' };
  if (record.audience !== request.audience) return { kind: 'refuse', reason: 'other-audience' };
  if (record.state === 'consumed') {
    return record.actionDigest === request.actionDigest ? { kind: 'replay' } : { kind: 'refuse', reason: 'consumed-for-other-action' };
  }
  if (record.state === 'revoked' || record.revokedAt !== undefined) return { kind: 'refuse', reason: 'revoked' };
  if (record.actionDigest !== request.actionDigest) return { kind: 'refuse', reason: 'other-action' };
  if (record.revision !== request.revision) return { kind: 'refuse', reason: 'revision-changed' };
  if (record.state === 'expired' || record.expiresAt <= request.now) return { kind: 'refuse', reason: 'expired' };
  return { kind: 'consume' };
}

/** What each refusal means for the person who presented the proof, and what to do next. */
export const PROOF_REFUSAL_HELP: Record<ProofRefusal, string> = {
  unknown: 'no such proof was ever issued by this daemon; ask the operator to approve the action again and export a new proof',
  expired: 'the proof expired before it was presented; ask the operator for a new approval',
  revoked: 'the proof was revoked by the operator; ask the operator for a new approval',
  'consumed-for-other-action': 'the proof was already used for a different action; a proof runs exactly one action once',
  'other-action': 'the proof was issued for a different action (argument or file contents differ); ask for an approval of this exact action',
  'other-principal': 'the proof was issued to a different principal; only the principal it was issued to can use it',
  'other-audience': 'the proof was issued for a different head (audience); present it where it was meant to be used',
  'revision-changed': 'the policy or configuration changed since the approval; review and approve the action again',
};

/**
 * A proof's expiry on the machine's monotonic clock (`Clock.monotonic`, ms),
 * which means something only in the boot it names: after a reboot that clock
 * starts again.
 */
export interface ProofMonotonicExpiry {
  bootId: string;
  at: number;
}
