// Reading an upstream's answer to a tools/call without parsing it (SPEC §14): the
// gateway needs only the answer's id and whether it is an error, and passes the
// line on as it is. The scan checks the whole line as JSON.parse would (RFC 8259)
// and the response shape `{"jsonrpc":"2.0","id":…,"result":{…}}` in any key
// order; whatever it is not sure of (an error response, escapes in a key that
// matters, a duplicate key, a non-integer id) it leaves to the full parse.
import type { RpcId } from './wire.js';

/** A response line the scan understood completely. */
export interface ScannedResponse {
  id: RpcId;
  /** `result.isError` is `true`, read as JSON.parse reads it (the last of duplicate keys wins). */
  isError: boolean;
  /** Where the result object's text starts and ends in the line. */
  resultStart: number;
  resultEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

// One thread and no re-entry: the scan keeps its scratch state in module variables, so it allocates nothing per line.
/** Whether the string scanned last held an escape. */
let lastStringEscaped = false;
/** The open brackets of the value being walked. */
const stack: number[] = [];
/** Whether the result object scanned last had `isError: true`. */
let resultIsError = false;

function skipWhitespace(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i += 1;
    else return i;
  }
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The index after the string starting at `i` (a quote), or -1 when it is not a valid JSON string. */
function scanString(s: string, i: number): number {
  lastStringEscaped = false;
  i += 1;
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      lastStringEscaped = true;
      const next = s.charCodeAt(i + 1);
      if (next === 0x75) {
        if (!(isHex(s.charCodeAt(i + 2)) && isHex(s.charCodeAt(i + 3)) && isHex(s.charCodeAt(i + 4)) && isHex(s.charCodeAt(i + 5)))) return -1;
        i += 6;
      } else if (next === QUOTE || next === BACKSLASH || next === 0x2f || next === 0x62 || next === 0x66 || next === 0x6e || next === 0x72 || next === 0x74) {
        i += 2;
      } else {
        return -1;
      }
      continue;
    }
    // NaN (past the end) fails this test too: an unclosed string.
    if (!(c >= 0x20)) return -1;
    i += 1;
  }
}

function scanDigits(s: string, i: number): number {
  while (s.charCodeAt(i) >= ZERO && s.charCodeAt(i) <= NINE) i += 1;
  return i;
}

/** The index after the number starting at `i`, or -1. */
function scanNumber(s: string, i: number): number {
  if (s.charCodeAt(i) === MINUS) i += 1;
  const first = s.charCodeAt(i);
  if (first === ZERO) i += 1;
  else if (first > ZERO && first <= NINE) i = scanDigits(s, i + 1);
  else return -1;
  if (s.charCodeAt(i) === DOT) {
    const after = scanDigits(s, i + 1);
    if (after === i + 1) return -1;
    i = after;
  }
  const e = s.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i += 1;
    const sign = s.charCodeAt(i);
    if (sign === PLUS || sign === MINUS) i += 1;
    const after = scanDigits(s, i);
    if (after === i) return -1;
    i = after;
  }
  return i;
}

/** A string, number or literal at `i`: the index after it, or -1. */
function scanScalar(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return scanString(s, i);
  if (c === MINUS || (c >= ZERO && c <= NINE)) return scanNumber(s, i);
  if (s.startsWith('true', i)) return i + 4;
  if (s.startsWith('false', i)) return i + 5;
  if (s.startsWith('null', i)) return i + 4;
  return -1;
}

/** Any JSON value at `i` (objects and arrays walked without recursion): the index after it, or -1. */
function scanValue(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c !== LBRACE && c !== LBRACKET) return scanScalar(s, i);
  stack.length = 0;
  stack.push(c);
  i += 1;
  let first = true;
  for (;;) {
    i = skipWhitespace(s, i);
    const open = stack[stack.length - 1] as number;
    const closer = open === LBRACE ? RBRACE : RBRACKET;
    let element = true;
    if (first && s.charCodeAt(i) === closer) {
      element = false;
    } else if (open === LBRACE) {
      if (s.charCodeAt(i) !== QUOTE) return -1;
      i = scanString(s, i);
      if (i < 0) return -1;
      i = skipWhitespace(s, i);
      if (s.charCodeAt(i) !== COLON) return -1;
      i = skipWhitespace(s, i + 1);
    }
    if (element) {
      const v = s.charCodeAt(i);
      if (v === LBRACE || v === LBRACKET) {
        stack.push(v);
        i += 1;
        first = true;
        continue;
      }
      i = scanScalar(s, i);
      if (i < 0) return -1;
      i = skipWhitespace(s, i);
    }
    // After a value (or at the closer of an empty container): a comma, or closers.
    for (;;) {
      const top = stack[stack.length - 1] as number;
      const next = s.charCodeAt(i);
      if (!element || next === (top === LBRACE ? RBRACE : RBRACKET)) {
        element = true;
        stack.pop();
        i += 1;
        if (stack.length === 0) return i;
        i = skipWhitespace(s, i);
        continue;
      }
      if (next === COMMA) {
        i += 1;
        first = false;
        break;
      }
      return -1;
    }
  }
}

/** `result`'s object at `i`: the index after it (its own `isError` in `resultIsError`), or -1. */
function scanResult(s: string, i: number): number {
  i = skipWhitespace(s, i + 1);
  resultIsError = false;
  if (s.charCodeAt(i) === RBRACE) return i + 1;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return -1;
    const keyStart = i + 1;
    i = scanString(s, i);
    // An escape could spell `isError`: leave such a key to the full parse.
    if (i < 0 || lastStringEscaped) return -1;
    const isErrorKey = i - 1 - keyStart === 7 && s.startsWith('isError', keyStart);
    i = skipWhitespace(s, i);
    if (s.charCodeAt(i) !== COLON) return -1;
    i = skipWhitespace(s, i + 1);
    const valueStart = i;
    i = scanValue(s, i);
    if (i < 0) return -1;
    if (isErrorKey) resultIsError = i - valueStart === 4 && s.startsWith('true', valueStart);
    i = skipWhitespace(s, i);
    const c = s.charCodeAt(i);
    if (c === RBRACE) return i + 1;
    if (c !== COMMA) return -1;
    i = skipWhitespace(s, i + 1);
  }
}

/** A plain integer id at `i` (`-?(0|[1-9][0-9]*)`, safe): the index after it, its value in `integerValue`; -1 otherwise. */
let integerValue = 0;
function scanInteger(s: string, i: number): number {
  let negative = false;
  if (s.charCodeAt(i) === MINUS) {
    negative = true;
    i += 1;
  }
  const first = s.charCodeAt(i);
  if (!(first >= ZERO && first <= NINE)) return -1;
  let value = first - ZERO;
  i += 1;
  if (value !== 0) {
    for (;;) {
      const c = s.charCodeAt(i);
      if (!(c >= ZERO && c <= NINE)) break;
      value = value * 10 + (c - ZERO);
      i += 1;
    }
  }
  // `1.0`, `1e2` or `01`: left to the full parse; so is anything past 2^53.
  const next = s.charCodeAt(i);
  if (next === DOT || next === 0x65 || next === 0x45 || (next >= ZERO && next <= NINE) || !Number.isSafeInteger(value)) return -1;
  integerValue = negative ? -value : value;
  return i;
}

/**
 * The id and error flag of a line that is exactly a JSON-RPC result response
 * (`jsonrpc` "2.0", an integer or plain string `id`, a `result` object, no other
 * member), or undefined when the line is anything else or not certainly that.
 * Whatever it returns is what JSON.parse would read from the line.
 */
export function scanResultResponse(line: string): ScannedResponse | undefined {
  let i = skipWhitespace(line, 0);
  if (line.charCodeAt(i) !== LBRACE) return undefined;
  i = skipWhitespace(line, i + 1);
  let jsonrpc = false;
  let id: RpcId | undefined;
  let resultStart = -1;
  let resultEnd = -1;
  let isError = false;
  for (;;) {
    if (line.charCodeAt(i) !== QUOTE) return undefined;
    const keyStart = i + 1;
    i = scanString(line, i);
    if (i < 0 || lastStringEscaped) return undefined;
    const keyLength = i - 1 - keyStart;
    i = skipWhitespace(line, i);
    if (line.charCodeAt(i) !== COLON) return undefined;
    i = skipWhitespace(line, i + 1);
    if (keyLength === 7 && line.startsWith('jsonrpc', keyStart)) {
      if (jsonrpc || !line.startsWith('"2.0"', i)) return undefined;
      jsonrpc = true;
      i += 5;
    } else if (keyLength === 2 && line.startsWith('id', keyStart)) {
      if (id !== undefined) return undefined;
      if (line.charCodeAt(i) === QUOTE) {
        const end = scanString(line, i);
        if (end < 0 || lastStringEscaped) return undefined;
        id = line.slice(i + 1, end - 1);
        i = end;
      } else {
        const end = scanInteger(line, i);
        if (end < 0) return undefined;
        id = integerValue;
        i = end;
      }
    } else if (keyLength === 6 && line.startsWith('result', keyStart)) {
      if (resultStart >= 0 || line.charCodeAt(i) !== LBRACE) return undefined;
      const end = scanResult(line, i);
      if (end < 0) return undefined;
      resultStart = i;
      resultEnd = end;
      isError = resultIsError;
      i = end;
    } else {
      // `error`, `method`, `params` or anything else: the full parse decides what it is.
      return undefined;
    }
    i = skipWhitespace(line, i);
    const c = line.charCodeAt(i);
    if (c === RBRACE) {
      i += 1;
      break;
    }
    if (c !== COMMA) return undefined;
    i = skipWhitespace(line, i + 1);
  }
  if (skipWhitespace(line, i) !== line.length || !jsonrpc || id === undefined || resultStart < 0) return undefined;
  return { id, isError, resultStart, resultEnd };
}
