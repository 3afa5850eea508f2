// R-J-7: the logger is the last line of defence; anything shaped like a proof
// is redacted before a line is written, wherever it hides in the fields.
import { describe, expect, it } from 'vitest';
import { newProof } from '../../../src/core/approval/proof.js';
import { createLogger, redactSecrets } from '../../../src/service/logger.js';

const random = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 97 + 5) & 0xff);

function capture(): { lines: string[]; sink: { write(line: string): void } } {
  const lines: string[] = [];
  return { lines, sink: { write: (line: string) => lines.push(line) } };
}

describe('R-J-7 logger redaction', () => {
  it('R-J-7 redacts a proof in the message, in nested fields, in an error and in a child logger base', () => {
    const proof = newProof(random);
    const { lines, sink } = capture();
    const logger = createLogger(sink, { requestProof: proof });
    logger.info(`presented ${proof}`, { nested: { deeper: [proof] }, error: new Error(`bad ${proof}`) });
    logger.child({ other: `x${proof}y` }).warn('child');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).not.toContain(proof);
      expect(line).not.toMatch(/asp1_[A-Za-z0-9_-]{4,}/);
      expect(line).toContain('asp1_[redacted]');
      expect(() => JSON.parse(line)).not.toThrow();
    }
  });

  it('R-J-7 redactSecrets leaves text without a proof unchanged and catches every occurrence', () => {
    expect(redactSecrets('approval abcde decided')).toBe('approval abcde decided');
    const proof = newProof(random);
    expect(redactSecrets(`${proof} and ${proof}`)).toBe('asp1_[redacted] and asp1_[redacted]');
  });
});
