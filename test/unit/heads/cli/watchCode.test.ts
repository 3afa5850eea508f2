// R-CLI-3: in the watch view `n` denies and `q` quits at one key, so an approve
// code must never begin with either letter.
import { describe, expect, it } from 'vitest';
import { newWatchCode } from '../../../../src/heads/cli/commands/watch.js';

describe('watch approve codes', () => {
  it('R-CLI-3 never start with n or q, even when the random source would produce them', () => {
    // In the alphabet a-z without l, index 12 is 'n' and 15 is 'q': the first two draws start
    // with them ('naaa', 'qaaa'); the third is 'bcde'.
    const sequence = [12, 0, 0, 0, 0, 0, 0, 0, 15, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0];
    let i = 0;
    const random = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => sequence[i++ % sequence.length] ?? 0);
    const code = newWatchCode(random);
    expect(code).toBe('bcde');
    expect(code[0]).not.toBe('n');
    expect(code[0]).not.toBe('q');
    for (let k = 0; k < 2000; k += 1) expect(newWatchCode()[0]).not.toMatch(/[nq]/);
  });
});
