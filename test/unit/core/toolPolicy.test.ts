import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type Config } from '../../../src/core/config.js';
import { AssentError } from '../../../src/core/errors.js';
import {
  compilePolicy,
  evaluateToolPolicy,
  formatRuleArg,
  isDestructive,
  parseRuleArg,
  type Rule,
  type ToolCall,
} from '../../../src/core/toolPolicy.js';

const NOW = Date.UTC(2026, 0, 1);

function policy(overrides: Partial<Config['policy']> = {}): Config['policy'] {
  return { ...DEFAULT_CONFIG.policy, ...overrides };
}

function rule(overrides: Partial<Rule> = {}): Rule {
  return { id: 'r1', version: 1, tool: 'fs/read_file', args: [], createdAt: NOW - 1000, ...overrides };
}

function call(overrides: Partial<ToolCall> = {}): ToolCall {
  return { server: 'fs', tool: 'read_file', args: { path: '/srv/data/a.txt' }, ...overrides };
}

describe('R-POL-2 precedence', () => {
  it('policy.tools[id] wins outright over destructive and default', () => {
    const snapshot = compilePolicy(policy({ default: 'allow', destructive: 'prompt', tools: { 'fs/read_file': 'deny' } }), []);
    expect(evaluateToolPolicy(snapshot, call({ annotations: { readOnlyHint: true } }), NOW)).toEqual({
      decision: 'deny',
      source: 'tool',
      key: 'policy.tools.fs/read_file',
    });
    expect(evaluateToolPolicy(snapshot, call(), NOW).decision).toBe('deny');
  });

  it('a destructive tool gets policy.destructive, a read-only one policy.default', () => {
    const snapshot = compilePolicy(policy({ default: 'allow', destructive: 'prompt' }), []);
    expect(evaluateToolPolicy(snapshot, call(), NOW)).toEqual({ decision: 'prompt', source: 'destructive', key: 'policy.destructive' });
    expect(evaluateToolPolicy(snapshot, call({ annotations: { readOnlyHint: true } }), NOW)).toEqual({
      decision: 'allow',
      source: 'default',
      key: 'policy.default',
    });
  });

  it('R-POL-1 the tool id is "<server alias>/<tool name>": another server with the same tool name is not matched', () => {
    const snapshot = compilePolicy(policy({ default: 'allow', tools: { 'fs/read_file': 'deny' } }), []);
    expect(evaluateToolPolicy(snapshot, call({ server: 'other', annotations: { readOnlyHint: true } }), NOW).decision).toBe('allow');
  });
});

describe('R-POL-3 destructive follows MCP annotation defaults', () => {
  it.each([
    [undefined, true],
    [{}, true],
    [{ readOnlyHint: false }, true],
    [{ destructiveHint: true }, true],
    [{ readOnlyHint: true }, false],
    [{ destructiveHint: false }, false],
    [{ readOnlyHint: true, destructiveHint: true }, false],
  ])('annotations %j → destructive %s', (annotations, expected) => {
    expect(isDestructive(annotations)).toBe(expected);
  });
});

describe('R-POL-4 auto-approval rules', () => {
  const prefixRule = rule({ args: [{ pointer: '/path', op: 'prefix', value: '/srv/data/' }] });

  it('turns prompt into allow for a matching call and names the rule', () => {
    const snapshot = compilePolicy(policy({ tools: { 'fs/read_file': 'prompt' } }), [prefixRule]);
    expect(evaluateToolPolicy(snapshot, call(), NOW)).toEqual({
      decision: 'allow',
      source: 'rule',
      key: 'policy.tools.fs/read_file',
      ruleId: 'r1',
    });
  });

  it('does not match other arguments, other tools, non-strings or a path climbing out with ..', () => {
    const snapshot = compilePolicy(policy({ destructive: 'prompt' }), [prefixRule]);
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/etc/passwd' } }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ tool: 'write_file' }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: { path: ['/srv/data/a'] } }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: {} }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/srv/data/../../etc/shadow' } }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/srv/data/..' } }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/srv/data/..x/ok' } }), NOW).decision).toBe('allow');
  });

  it('equals compares strings exactly and never a number with a string', () => {
    const snapshot = compilePolicy(policy(), [rule({ args: [{ pointer: '/n', op: 'equals', value: '1' }] })]);
    expect(evaluateToolPolicy(snapshot, call({ args: { n: '1' } }), NOW).decision).toBe('allow');
    expect(evaluateToolPolicy(snapshot, call({ args: { n: 1 } }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: { n: '10' } }), NOW).decision).toBe('prompt');
  });

  it('every matcher of a rule must hold, and nested pointers with escapes resolve', () => {
    const snapshot = compilePolicy(policy(), [
      rule({
        args: [
          { pointer: '/opts/a~1b', op: 'equals', value: 'x' },
          { pointer: '/list/0', op: 'prefix', value: 'ok' },
        ],
      }),
    ]);
    expect(evaluateToolPolicy(snapshot, call({ args: { opts: { 'a/b': 'x' }, list: ['okay'] } }), NOW).decision).toBe('allow');
    expect(evaluateToolPolicy(snapshot, call({ args: { opts: { 'a/b': 'x' }, list: ['no'] } }), NOW).decision).toBe('prompt');
  });

  it('never overrides deny and leaves allow alone', () => {
    const snapshot = compilePolicy(policy({ tools: { 'fs/read_file': 'deny' } }), [prefixRule]);
    expect(evaluateToolPolicy(snapshot, call(), NOW)).toEqual({ decision: 'deny', source: 'tool', key: 'policy.tools.fs/read_file' });
    const allowSnapshot = compilePolicy(policy({ tools: { 'fs/read_file': 'allow' } }), [prefixRule]);
    expect(evaluateToolPolicy(allowSnapshot, call(), NOW).ruleId).toBeUndefined();
  });

  it('ignores expired and revoked rules', () => {
    const expired = compilePolicy(policy(), [{ ...prefixRule, expiresAt: NOW }]);
    expect(evaluateToolPolicy(expired, call(), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(expired, call(), NOW - 1).decision).toBe('allow');
    const revoked = compilePolicy(policy(), [{ ...prefixRule, revokedAt: NOW - 1 }]);
    expect(evaluateToolPolicy(revoked, call(), NOW).decision).toBe('prompt');
  });

  it('reports the oldest matching rule', () => {
    const snapshot = compilePolicy(policy(), [
      rule({ id: 'newer', createdAt: NOW - 10 }),
      rule({ id: 'older', createdAt: NOW - 20 }),
    ]);
    expect(evaluateToolPolicy(snapshot, call(), NOW).ruleId).toBe('older');
  });
});

describe('R-POL-4 parseRuleArg', () => {
  it.each([
    ['/path:prefix=/srv/data/', { pointer: '/path', op: 'prefix', value: '/srv/data/' }],
    ['/path:equals=x', { pointer: '/path', op: 'equals', value: 'x' }],
    ['/path=x', { pointer: '/path', op: 'equals', value: 'x' }],
    ['/path=a=b:c', { pointer: '/path', op: 'equals', value: 'a=b:c' }],
    ['/path:equals=', { pointer: '/path', op: 'equals', value: '' }],
    ['/a~1b/0:prefix=x', { pointer: '/a~1b/0', op: 'prefix', value: 'x' }],
  ])('parses %s', (text, expected) => {
    expect(parseRuleArg(text)).toEqual(expected);
    expect(parseRuleArg(formatRuleArg(parseRuleArg(text)))).toEqual(expected);
  });

  it.each(['path=x', '/path', '/path:glob=x', '/path:prefix=', '/a~2=x'])('refuses %s with a message showing the syntax', (text) => {
    let caught: unknown;
    try {
      parseRuleArg(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AssentError);
    expect((caught as AssentError).type).toBe('invalid_params');
    expect((caught as AssentError).message).toMatch(/e\.g\.|write "~0"/);
  });
});

describe('R-POL-5 indexed evaluation', () => {
  it('decides with 1,000 tool entries and 1,000 rules using only the rules of the called tool', () => {
    const tools: Record<string, 'allow' | 'deny' | 'prompt'> = {};
    for (let i = 0; i < 1000; i += 1) tools[`s${i}/t${i}`] = i % 2 === 0 ? 'prompt' : 'deny';
    const rules: Rule[] = [];
    for (let i = 0; i < 1000; i += 1) {
      rules.push(rule({ id: `r${i}`, tool: `s${i}/t${i}`, args: [{ pointer: '/path', op: 'prefix', value: `/d${i}/` }] }));
    }
    const snapshot = compilePolicy(policy({ tools }), rules);
    expect(snapshot.rulesByTool.get('s500/t500')).toHaveLength(1);
    expect(evaluateToolPolicy(snapshot, { server: 's500', tool: 't500', args: { path: '/d500/x' } }, NOW)).toMatchObject({
      decision: 'allow',
      ruleId: 'r500',
    });
    expect(evaluateToolPolicy(snapshot, { server: 's500', tool: 't500', args: { path: '/d501/x' } }, NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, { server: 's501', tool: 't501', args: { path: '/d501/x' } }, NOW).decision).toBe('deny');
  });
});
