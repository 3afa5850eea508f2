import { describe, expect, it } from 'vitest';
import type { ExecAction } from '../../../src/core/exec/action.js';
import { AssentError } from '../../../src/core/base/errors.js';
import { decodeLimitedJson, parseExecPolicy, parseExecRequest } from '../../../src/core/exec/execFiles.js';

const action: ExecAction = { executable: '/usr/bin/git', cwd: '/home/me/repo', args: ['status', '--short'], env: { LANG: 'C.UTF-8' } };
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const request = (a: unknown, extra: Record<string, unknown> = {}): Uint8Array => bytes(JSON.stringify({ schemaVersion: 1, ...extra, action: a }));
const policy = (value: unknown): Uint8Array => bytes(JSON.stringify(value));

function reasonOf(fn: () => unknown): { reason: unknown; field: unknown; message: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AssentError);
    const e = error as AssentError;
    expect(e.type).toBe('invalid_input');
    return { reason: e.details?.['reason'], field: e.details?.['field'], message: e.message };
  }
  throw new Error('expected a refusal');
}

/** Nests `n` arrays: depth n. */
const nested = (n: number): unknown => (n === 0 ? 0 : [nested(n - 1)]);

describe('R-EXEC-1 request schema 1', () => {
  it('accepts the SPEC example and keeps it exactly', () => {
    expect(parseExecRequest(request(action))).toEqual({ schemaVersion: 1, action });
  });

  const refusals: Array<[string, () => Uint8Array, string]> = [
    ['65 KiB', () => bytes(JSON.stringify({ schemaVersion: 1, action }).padEnd(65 * 1024, ' ')), 'too-large'],
    ['invalid UTF-8', () => Uint8Array.from([...bytes('{"a":"'), 0xc3, 0x28, ...bytes('"}')]), 'invalid-utf8'],
    ['not JSON', () => bytes('{"schemaVersion":1,'), 'invalid-json'],
    ['depth 9', () => request(action, { x: nested(8) }), 'too-deep'],
    ['2049 nodes', () => request(action, { x: Array(2049 - 11).fill(0) }), 'too-many-nodes'],
    ['an unknown top-level key', () => request(action, { extra: true }), 'unknown-key'],
    ['an unknown action key', () => request({ ...action, shell: true }), 'unknown-key'],
    ['a missing key', () => request({ executable: '/bin/true', cwd: '/', args: [] }), 'missing-key'],
    ['schemaVersion 2', () => bytes(JSON.stringify({ schemaVersion: 2, action })), 'unsupported-schema'],
    ['schemaVersion "1"', () => bytes(JSON.stringify({ schemaVersion: '1', action })), 'unsupported-schema'],
    ['a relative cwd', () => request({ ...action, cwd: 'repo' }), 'relative-cwd'],
    ['a relative executable', () => request({ ...action, executable: 'git' }), 'relative-executable'],
    ['a // executable', () => request({ ...action, executable: '//host/git' }), 'network-path'],
    ['a \\\\ cwd', () => request({ ...action, cwd: '\\\\host\\share' }), 'network-path'],
    ['a NUL in an arg', () => request({ ...action, args: ['a\u0000b'] }), 'nul-byte'],
    ['a NUL in the executable', () => request({ ...action, executable: '/bin/\u0000' }), 'nul-byte'],
    ['129 args', () => request({ ...action, args: Array(129).fill('a') }), 'too-many-args'],
    ['a non-string arg', () => request({ ...action, args: [1] }), 'wrong-type'],
    ['65 env entries', () => request({ ...action, env: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, 'x'])) }), 'too-many-env'],
    ['a lowercase env name', () => request({ ...action, env: { path: '/bin' } }), 'invalid-env-name'],
    ['an env name starting with a digit', () => request({ ...action, env: { '1A': 'x' } }), 'invalid-env-name'],
    ['a duplicate env name ignoring case', () => request({ ...action, env: { FOO: '1', Foo: '2' } }), 'duplicate-env-name'],
    ['a repeated env key', () => bytes(JSON.stringify({ schemaVersion: 1, action }).replace('"env":{', '"env":{"A":"1","A":"2",')), 'duplicate-env-name'],
    ['a repeated key', () => bytes(JSON.stringify({ schemaVersion: 1, action }).replace('"cwd":', '"cwd":"/","cwd":')), 'duplicate-key'],
    ['a number env value', () => request({ ...action, env: { A: 1 } }), 'wrong-type'],
    ['args as a string', () => request({ ...action, args: 'status' }), 'wrong-type'],
  ];
  for (const [name, make, reason] of refusals) {
    it(`R-EXEC-1 refuses ${name} with reason ${reason}`, () => {
      const { reason: got, message } = reasonOf(() => parseExecRequest(make()));
      expect(got).toBe(reason);
      expect(message).toMatch(/^The request file is refused: /);
    });
  }

  it('R-EXEC-1 depth 8 and 2048 nodes pass the shape limits; depth 9 and 2049 nodes do not', () => {
    expect(() => decodeLimitedJson(bytes(JSON.stringify(nested(8))), 'request')).not.toThrow();
    expect(reasonOf(() => decodeLimitedJson(bytes(JSON.stringify(nested(9))), 'request')).reason).toBe('too-deep');
    expect(() => decodeLimitedJson(bytes(JSON.stringify(Array(2047).fill(0))), 'request')).not.toThrow();
    expect(reasonOf(() => decodeLimitedJson(bytes(JSON.stringify(Array(2048).fill(0))), 'request')).reason).toBe('too-many-nodes');
    expect(reasonOf(() => decodeLimitedJson(bytes(JSON.stringify({ a: Array(2047).fill('x') })), 'request')).reason).toBe('too-many-nodes');
  });

  it('R-EXEC-1 128 args, 64 env entries and 64 KiB pass', () => {
    expect(() => parseExecRequest(request({ ...action, args: Array(128).fill('a') }))).not.toThrow();
    const env = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`V${i}`, 'x']));
    expect(() => parseExecRequest(request({ ...action, env }))).not.toThrow();
    expect(() => parseExecRequest(bytes(JSON.stringify({ schemaVersion: 1, action }).padEnd(64 * 1024, ' ')))).not.toThrow();
  });

  it('messages name the field but never echo a value from the file', () => {
    const { message, field } = reasonOf(() => parseExecRequest(request({ ...action, cwd: 'PRIVATE_dir' })));
    expect(field).toBe('action.cwd');
    expect(message).not.toContain('PRIVATE');
    const env = reasonOf(() => parseExecRequest(request({ ...action, env: { private_name: 'PRIVATE_v' } })));
    expect(env.message).not.toContain('PRIVATE');
    expect(env.message).not.toContain('private_name');
  });
});

describe('SPEC §6 policy schema 2', () => {
  const rule = (decision: string, a: ExecAction = action) => ({ action: a, decision });
  it('accepts a valid policy', () => {
    const parsed = parseExecPolicy(policy({ schemaVersion: 2, defaultDecision: 'ask', rules: [rule('allow')] }));
    expect(parsed.rules).toEqual([{ action, decision: 'allow' }]);
  });
  const refusals: Array<[string, unknown, string]> = [
    ['two equivalent rules (key order differs)', { schemaVersion: 2, defaultDecision: 'deny', rules: [rule('allow'), rule('deny', { env: action.env, args: action.args, cwd: action.cwd, executable: action.executable })] }, 'duplicate-rule'],
    ['33 rules', { schemaVersion: 2, defaultDecision: 'deny', rules: Array.from({ length: 33 }, (_, i) => rule('allow', { ...action, args: [String(i)] })) }, 'too-many-rules'],
    ['defaultDecision allow', { schemaVersion: 2, defaultDecision: 'allow', rules: [] }, 'invalid-decision'],
    ['decision prompt', { schemaVersion: 2, defaultDecision: 'deny', rules: [rule('prompt')] }, 'invalid-decision'],
    ['an extra rule key', { schemaVersion: 2, defaultDecision: 'deny', rules: [{ ...rule('allow'), note: 'x' }] }, 'unknown-key'],
    ['schemaVersion 1', { schemaVersion: 1, defaultDecision: 'deny', rules: [] }, 'unsupported-schema'],
    ['a rule with a relative cwd', { schemaVersion: 2, defaultDecision: 'deny', rules: [rule('allow', { ...action, cwd: '.' })] }, 'relative-cwd'],
  ];
  for (const [name, value, reason] of refusals) {
    it(`SPEC §6 refuses ${name} with reason ${reason}`, () => {
      const { reason: got, message } = reasonOf(() => parseExecPolicy(policy(value)));
      expect(got).toBe(reason);
      expect(message).toMatch(/^The policy file is refused: /);
    });
  }
  it('SPEC §6 rules that differ only in argument order or type are not equivalent', () => {
    expect(() =>
      parseExecPolicy(policy({ schemaVersion: 2, defaultDecision: 'deny', rules: [rule('allow'), rule('deny', { ...action, args: ['--short', 'status'] })] })),
    ).not.toThrow();
  });
});
