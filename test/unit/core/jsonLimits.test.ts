// Free-form JSON every reader sees alike (hardening 1, 2): the checks the
// gateway and the daemon run before anything decides, and the canonical
// encoder's typed refusal of what it cannot encode.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { canonicalJson, digestOf } from '../../../src/core/base/canonical.js';
import { AssentError } from '../../../src/core/base/errors.js';
import { findJsonProblem, hasLoneSurrogate, jsonPointerOf, MAX_JSON_DEPTH, toWellFormed } from '../../../src/core/base/jsonLimits.js';
import { portableJson } from '../../../src/core/base/portableJson.js';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 1; i < depth; i += 1) value = { a: value };
  return depth === 0 ? 1 : { a: value };
}

describe('findJsonProblem', () => {
  it('(hardening 1) finds an own "__proto__" key at any depth, with its path', () => {
    expect(findJsonProblem(JSON.parse('{"path":"/srv/ok","__proto__":{"x":1}}'))).toMatchObject({ kind: 'proto_key', path: ['__proto__'] });
    expect(findJsonProblem(JSON.parse('{"a":[0,{"b":{"__proto__":1}}]}'))).toMatchObject({ kind: 'proto_key', path: ['a', 1, 'b', '__proto__'] });
    // A key that merely contains the word is an ordinary key; so are constructor and prototype.
    expect(findJsonProblem(JSON.parse('{"x__proto__":1,"constructor":{"prototype":2}}'))).toBeUndefined();
  });

  it('(hardening 2) finds a lone surrogate in a string or a key and accepts well-formed pairs', () => {
    expect(findJsonProblem({ s: '\ud800' })).toMatchObject({ kind: 'lone_surrogate', path: ['s'] });
    expect(findJsonProblem({ s: 'ok\udfffok' })).toMatchObject({ kind: 'lone_surrogate', path: ['s'] });
    expect(findJsonProblem({ list: ['fine', { '\udc00': 1 }] })).toMatchObject({ kind: 'lone_surrogate', path: ['list', 1, '\udc00'] });
    expect(findJsonProblem({ s: '\ud83d\ude00 and \u00e9' })).toBeUndefined();
    expect(hasLoneSurrogate('\ud83d')).toBe(true);
    expect(toWellFormed('a\ud800b\ud83d\ude00')).toBe('a\ufffdb\ud83d\ude00');
  });

  it(`(hardening 2) accepts ${MAX_JSON_DEPTH} levels of nesting and refuses the next, also 10,000 deep, without recursion`, () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(findJsonProblem(nested(64))).toBeUndefined();
    expect(findJsonProblem(nested(65))).toMatchObject({ kind: 'too_deep' });
    expect(findJsonProblem(JSON.parse(`${'['.repeat(10_000)}${']'.repeat(10_000)}`))).toMatchObject({ kind: 'too_deep', message: expect.stringContaining('deeper than 64 levels') });
    expect(findJsonProblem({ a: [[1]] }, 2)).toMatchObject({ kind: 'too_deep', path: ['a', 0] });
  });

  it('refuses what is not JSON at all', () => {
    expect(findJsonProblem({ n: Number.NaN })).toMatchObject({ kind: 'not_json', path: ['n'] });
    expect(findJsonProblem({ f: () => 1 })).toMatchObject({ kind: 'not_json', path: ['f'] });
    expect(findJsonProblem({ a: 1, b: 'two', c: [true, null, { d: 4.5 }] })).toBeUndefined();
  });

  it('renders paths as JSON Pointers, escaping ~ and / and showing lone surrogates as \\u escapes', () => {
    expect(jsonPointerOf(['a/b', 'c~d', 0, '\ud800'])).toBe('/a~1b/c~0d/0/\\ud800');
    expect(jsonPointerOf([])).toBe('(the whole value)');
    expect(jsonPointerOf(Array.from({ length: 65 }, () => 'a'))).toBe('/a/a/a/a/a/a/a/a/a/a/…/a');
  });
});

describe('portableJson', () => {
  const Schema = z.strictObject({ args: portableJson(z.record(z.string(), z.unknown())) });

  it('(hardening 1) refuses an own "__proto__" key that a record parse would silently drop', () => {
    const raw = JSON.parse('{"args":{"path":"/srv/ok","__proto__":{"x":1}}}') as unknown;
    // Without the wrapper the key vanishes: that is the gap.
    expect(z.record(z.string(), z.unknown()).parse((raw as { args: unknown }).args)).toEqual({ path: '/srv/ok' });
    const parsed = Schema.safeParse(raw);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['args', '__proto__'], message: expect.stringContaining('"__proto__" is not accepted') });
  });

  it('keeps the inner schema for everything else, and its JSON Schema unchanged', () => {
    expect(Schema.parse({ args: { a: [1, { b: 'c' }] } })).toEqual({ args: { a: [1, { b: 'c' }] } });
    expect(Schema.safeParse({ args: 5 }).success).toBe(false);
    expect(z.toJSONSchema(Schema, { io: 'input' })).toEqual(z.toJSONSchema(z.strictObject({ args: z.record(z.string(), z.unknown()) }), { io: 'input' }));
  });
});

describe('canonicalJson', () => {
  it('(hardening 2) a value with no canonical form is a typed invalid_input, never a bare error', () => {
    for (const value of [{ s: '\ud800' }, { n: Number.POSITIVE_INFINITY }]) {
      let thrown: unknown;
      try {
        digestOf(value);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(AssentError);
      expect(thrown).toMatchObject({ type: 'invalid_input', message: expect.stringContaining('no canonical JSON form') });
    }
    expect(canonicalJson({ b: 1, a: '\ud83d\ude00' })).toBe('{"a":"\ud83d\ude00","b":1}');
  });
});
