// The challenge of a passkey-confirmed approval (R-REM-6) binds the approval
// id, the action digest and the nonce: change any one and it is another
// challenge, so an assertion over one verifies for none of the others.
import { describe, expect, it } from 'vitest';
import { approvalChallenge, isNonceShaped, newNonce } from '../../../src/core/approval/passkeyChallenge.js';

const DIGEST = `v1:sha256:${'a'.repeat(64)}`;

describe('R-REM-6 approvalChallenge', () => {
  it('R-REM-6 is 32 bytes (base64url), the same for the same binding and different when the approval, the digest or the nonce differs', () => {
    const nonce = newNonce((n) => new Uint8Array(n).fill(7));
    expect(isNonceShaped(nonce)).toBe(true);
    const binding = { approvalId: 'abcde', actionDigest: DIGEST, nonce };
    const challenge = approvalChallenge(binding);
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(approvalChallenge({ ...binding })).toBe(challenge);
    const others = [
      approvalChallenge({ ...binding, approvalId: 'abcdf' }),
      approvalChallenge({ ...binding, actionDigest: `v1:sha256:${'b'.repeat(64)}` }),
      approvalChallenge({ ...binding, nonce: newNonce((n) => new Uint8Array(n).fill(8)) }),
    ];
    expect(new Set([challenge, ...others]).size).toBe(4);
  });

  it('R-REM-6 fields cannot be shifted into each other (each is a separate JSON member)', () => {
    const nonce = newNonce((n) => new Uint8Array(n).fill(1));
    expect(approvalChallenge({ approvalId: 'ab', actionDigest: `cde${DIGEST}`, nonce })).not.toBe(approvalChallenge({ approvalId: 'abcde', actionDigest: DIGEST, nonce }));
  });
});
