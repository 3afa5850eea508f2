import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineDecoder, MAX_FRAME_BYTES, encodeFrame } from '../../../../src/heads/daemon/framing.js';

function collect(maxBytes?: number): { decoder: LineDecoder; lines: string[]; events: string[] } {
  const lines: string[] = [];
  const events: string[] = [];
  const decoder = new LineDecoder({
    ...(maxBytes === undefined ? {} : { maxBytes }),
    onLine: (line) => lines.push(line),
    onInvalidUtf8: () => events.push('invalid-utf8'),
    onOversize: () => events.push('oversize'),
  });
  return { decoder, lines, events };
}

describe('LineDecoder (R-D-2 framing)', () => {
  it('splits several lines in one chunk and keeps a partial line until its newline arrives', () => {
    const { decoder, lines } = collect();
    decoder.push(Buffer.from('{"a":1}\n{"b":2}\n{"c"'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    decoder.push(Buffer.from(':3}'));
    expect(lines).toHaveLength(2);
    decoder.push(Buffer.from('\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('reassembles a multi-byte UTF-8 character split across chunks', () => {
    const { decoder, lines, events } = collect();
    const bytes = Buffer.from('"é€😀"\n');
    for (let i = 0; i < bytes.length; i += 1) decoder.push(bytes.subarray(i, i + 1));
    expect(lines).toEqual(['"é€😀"']);
    expect(events).toEqual([]);
  });

  it('reports invalid UTF-8 for that line only and keeps decoding', () => {
    const { decoder, lines, events } = collect();
    decoder.push(Buffer.from([0xff, 0xfe, 0x0a]));
    decoder.push(Buffer.from('ok\n'));
    expect(events).toEqual(['invalid-utf8']);
    expect(lines).toEqual(['ok']);
  });

  it('R-D-2 accepts a line of exactly the cap and refuses one byte more, then ignores all input', () => {
    const exact = collect(16);
    exact.decoder.push(Buffer.from(`${'x'.repeat(16)}\n`));
    expect(exact.lines).toEqual(['x'.repeat(16)]);

    const over = collect(16);
    over.decoder.push(Buffer.from('x'.repeat(10)));
    over.decoder.push(Buffer.from('x'.repeat(7)));
    expect(over.events).toEqual(['oversize']);
    expect(over.decoder.overflowed).toBe(true);
    over.decoder.push(Buffer.from('\n{"later":1}\n'));
    expect(over.lines).toEqual([]);
    expect(over.events).toEqual(['oversize']);
  });

  it('R-D-2 the shipped cap is 1 MiB excluding the newline; a 2 MiB line is refused before it is buffered whole', () => {
    expect(MAX_FRAME_BYTES).toBe(1_048_576);
    const { decoder, events, lines } = collect();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let pushed = 0;
    while (events.length === 0 && pushed < 2 * 1024 * 1024) {
      decoder.push(chunk);
      pushed += chunk.length;
    }
    expect(events).toEqual(['oversize']);
    expect(pushed).toBeLessThanOrEqual(MAX_FRAME_BYTES + chunk.length);
    expect(lines).toEqual([]);
  });

  it('reads any byte stream, however it is cut into chunks, exactly as decoding each line on its own would', () => {
    // The reference: split the whole stream at each newline and decode every complete line by itself.
    const reference = (stream: Buffer, maxBytes: number): string[] => {
      const events: string[] = [];
      let start = 0;
      for (let newline = stream.indexOf(0x0a); newline !== -1; newline = stream.indexOf(0x0a, start)) {
        if (newline - start > maxBytes) return [...events, 'oversize'];
        try {
          events.push(`line:${new TextDecoder('utf-8', { fatal: true }).decode(stream.subarray(start, newline))}`);
        } catch {
          events.push('invalid-utf8');
        }
        start = newline + 1;
      }
      return stream.length - start > maxBytes ? [...events, 'oversize'] : events;
    };
    // Bytes that make lines: good and bad UTF-8, sequences cut short, byte order marks, carriage returns.
    const piece = fc.oneof(
      fc.constantFrom('\n', '\n', '\r\n', '\uFEFF', '\n\uFEFF', '{"a":1}', 'é', '€', '😀', '\u2028').map((text) => Buffer.from(text)),
      fc.constantFrom([0xff], [0xc3], [0xe2, 0x82], [0xef, 0xbb], [0xbf], [0xed, 0xa0, 0x80]).map((bytes) => Buffer.from(bytes)),
      fc.uint8Array({ maxLength: 6 }).map((bytes) => Buffer.from(bytes)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40, size: 'medium' }), fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom(8, 64, 4096), (pieces, cuts, maxBytes) => {
        const stream = Buffer.concat(pieces);
        const at = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
        const events: string[] = [];
        const decoder = new LineDecoder({
          maxBytes,
          onLine: (line) => events.push(`line:${line}`),
          onInvalidUtf8: () => events.push('invalid-utf8'),
          onOversize: () => events.push('oversize'),
        });
        let from = 0;
        for (const cut of [...at, stream.length]) {
          decoder.push(stream.subarray(from, cut));
          from = cut;
        }
        expect(events).toEqual(reference(stream, maxBytes));
      }),
      { numRuns: 3000 },
    );
  });

  it('encodes one message per line', () => {
    expect(encodeFrame({ a: 'x\ny' })).toBe('{"a":"x\\ny"}\n');
  });
});
