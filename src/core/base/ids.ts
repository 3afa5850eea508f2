// Short, human-typable identifiers and challenges. Randomness is injected (R-ARCH-2).

/** Fills a buffer of n random bytes; the real one is node:crypto.randomBytes. */
export type RandomBytes = (n: number) => Uint8Array;

/** a–z without `l`, so an id is never read as 1 or I. */
export const ID_ALPHABET = 'abcdefghijkmnopqrstuvwxyz';

/** Unbiased choice of `length` characters from `alphabet` by rejection sampling. */
export function randomString(random: RandomBytes, alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    const bytes = random(length * 2);
    for (const b of bytes) {
      if (b < limit) out += alphabet[b % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A 5-letter approval id (R-D-4). */
export function newApprovalId(random: RandomBytes): string {
  return randomString(random, ID_ALPHABET, 5);
}

/** A 4-letter approval code typed back at `assent approve` (R-CLI-2). */
export function newApprovalCode(random: RandomBytes): string {
  return randomString(random, ID_ALPHABET, 4);
}

/** 8 lowercase hex characters for the terminal challenge (R-TTY-5). */
export function newChallenge(random: RandomBytes): string {
  return Array.from(random(4), (b) => b.toString(16).padStart(2, '0')).join('');
}

export function isApprovalId(value: string): boolean {
  return /^[abcdefghijkmnopqrstuvwxyz]{5}$/.test(value);
}
