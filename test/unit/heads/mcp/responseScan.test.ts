// SPEC §14 (issue 10 item 3): the scan that lets an upstream's tools/call answer
// pass unparsed reads exactly what JSON.parse reads, or declines. Whatever it
// accepts must be a JSON-RPC result response to JSON.parse and the wire check,
// with the same id, the same isError and the same result text.
import { describe, expect, it } from 'vitest';
import { scanResultResponse } from '../../../../src/heads/mcp/responseScan.js';
import { wireShapeProblem } from '../../../../src/heads/mcp/wire.js';

/** What the full parse path makes of a line, in the scan's terms; undefined when that path would not take it as a plain result. */
function parsedReading(line: string): { id: unknown; isError: boolean; result: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (wireShapeProblem(value) !== undefined) return undefined;
  const message = value as Record<string, unknown>;
  if (message['method'] !== undefined || message['result'] === undefined) return undefined;
  const result = message['result'] as Record<string, unknown>;
  return { id: message['id'], isError: result['isError'] === true, result };
}

/** The scan never disagrees with the parse: what it accepts the parse reads alike. */
function agrees(line: string): boolean {
  const scanned = scanResultResponse(line);
  if (scanned === undefined) return true;
  const parsed = parsedReading(line);
  if (parsed === undefined) return false;
  let result: unknown;
  try {
    result = JSON.parse(line.slice(scanned.resultStart, scanned.resultEnd));
  } catch {
    return false;
  }
  return scanned.id === parsed.id && scanned.isError === parsed.isError && JSON.stringify(result) === JSON.stringify(parsed.result);
}

const ECHO = '{"result":{"content":[{"type":"text","text":"Echo: m1"}]},"jsonrpc":"2.0","id":12}';

describe('SPEC §14 (issue 10 item 3) scanning an upstream result response', () => {
  it('reads the id, the error flag and the result of a plain result response, in any key order and spacing', () => {
    expect(scanResultResponse(ECHO)).toEqual({ id: 12, isError: false, resultStart: 10, resultEnd: 57 });
    expect(scanResultResponse(' { "id" : "a-1" , "jsonrpc":"2.0", "result" : { "isError" : true, "content" : [ ] } }\r')).toMatchObject({ id: 'a-1', isError: true });
    expect(scanResultResponse('{"jsonrpc":"2.0","id":-7,"result":{}}')).toMatchObject({ id: -7, isError: false });
    // JSON.parse keeps the last of duplicate keys: so does the scan for isError.
    expect(scanResultResponse('{"jsonrpc":"2.0","id":1,"result":{"isError":true,"isError":false}}')).toMatchObject({ isError: false });
    expect(scanResultResponse('{"jsonrpc":"2.0","id":1,"result":{"isError":"true"}}')).toMatchObject({ isError: false });
    expect(scanResultResponse('{"jsonrpc":"2.0","id":1,"result":{"x":{"isError":true}}}')).toMatchObject({ isError: false });
  });

  it.each([
    ['an error response', '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}'],
    ['a request', '{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}'],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}'],
    ['an escaped key that reads as isError', '{"jsonrpc":"2.0","id":1,"result":{"is\\u0045rror":true}}'],
    ['an escaped top-level key', '{"jsonrpc":"2.0","\\u0069d":1,"result":{}}'],
    ['a duplicate id', '{"jsonrpc":"2.0","id":1,"id":2,"result":{}}'],
    ['a float id', '{"jsonrpc":"2.0","id":1.0,"result":{}}'],
    ['an id past 2^53', '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}'],
    ['a result that is not an object', '{"jsonrpc":"2.0","id":1,"result":[]}'],
    ['another jsonrpc', '{"jsonrpc":"2.1","id":1,"result":{}}'],
    ['an unknown member', '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}'],
    ['trailing text', `${ECHO}x`],
    ['a trailing comma', '{"jsonrpc":"2.0","id":1,"result":{"a":[1,]}}'],
    ['a raw control character in a string', '{"jsonrpc":"2.0","id":1,"result":{"a":"x\u0001"}}'],
    ['a bad escape', '{"jsonrpc":"2.0","id":1,"result":{"a":"\\x41"}}'],
    ['a leading zero', '{"jsonrpc":"2.0","id":1,"result":{"a":01}}'],
    ['an unclosed string', '{"jsonrpc":"2.0","id":1,"result":{"a":"x}}'],
  ])('declines %s', (_what, line) => {
    expect(scanResultResponse(line)).toBeUndefined();
  });

  it('never reads a line otherwise than JSON.parse: a table of tricky lines and 20,000 mutated ones', () => {
    const lines = [
      ECHO,
      '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9 é 😀"}],"structuredContent":{"n":-1.5e+3,"z":0,"t":true,"f":false,"u":null,"deep":[[[{}]]]}}}',
      '{"jsonrpc":"2.0","id":"x","result":{"isError":true,"content":[]}}',
      '{"jsonrpc":"2.0","id":0,"result":{"_meta":{"isError":true},"isError":false}}',
    ];
    for (const line of lines) expect(agrees(line), line).toBe(true);
    // Deterministic pseudo-random mutations: drop, duplicate or replace one character, or cut the line.
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const alphabet = '{}[]":,\\ -+.0123456789eEtrufalsnIi';
    let accepted = 0;
    for (let k = 0; k < 20_000; k += 1) {
      const base = lines[random(lines.length)] as string;
      const at = random(base.length);
      const op = random(4);
      const ch = alphabet[random(alphabet.length)] as string;
      const line = op === 0 ? base.slice(0, at) + base.slice(at + 1) : op === 1 ? base.slice(0, at) + ch + base.slice(at) : op === 2 ? base.slice(0, at) + ch + base.slice(at + 1) : base.slice(0, at);
      if (!agrees(line)) throw new Error(`the scan reads ${JSON.stringify(line)} otherwise than JSON.parse`);
      if (scanResultResponse(line) !== undefined) accepted += 1;
    }
    // The mutations must not all be refused, or the property above proves nothing.
    expect(accepted).toBeGreaterThan(1000);
  });
});
