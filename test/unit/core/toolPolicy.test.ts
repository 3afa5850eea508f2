import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type Config } from '../../../src/core/config/config.js';
import { AssentError } from '../../../src/core/base/errors.js';
import {
  compilePolicy,
  evaluateToolPolicy,
  formatRuleArg,
  isDestructive,
  parseRuleArg,
  type Rule,
  type ToolCall,
} from '../../../src/core/policy/toolPolicy.js';

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

describe('R-POL-4 rule index', () => {
  it('the oldest matching rule wins across equals, prefix and argument-free rules', () => {
    const rules = [
      rule({ id: 'eq-new', createdAt: 30, args: [{ pointer: '/path', op: 'equals', value: '/srv/data/a.txt' }] }),
      rule({ id: 'short-prefix-mid', createdAt: 20, args: [{ pointer: '/path', op: 'prefix', value: '/srv/' }] }),
      rule({ id: 'long-prefix-old', createdAt: 10, args: [{ pointer: '/path', op: 'prefix', value: '/srv/data/' }] }),
      rule({ id: 'any-newest', createdAt: 40, args: [] }),
    ];
    expect(evaluateToolPolicy(compilePolicy(policy(), rules), call(), NOW).ruleId).toBe('long-prefix-old');
    expect(evaluateToolPolicy(compilePolicy(policy(), rules.slice(0, 2)), call(), NOW).ruleId).toBe('short-prefix-mid');
    expect(evaluateToolPolicy(compilePolicy(policy(), [rules[0] as Rule, rules[3] as Rule]), call(), NOW).ruleId).toBe('eq-new');
    expect(evaluateToolPolicy(compilePolicy(policy(), [rules[3] as Rule]), call({ args: {} }), NOW).ruleId).toBe('any-newest');
  });

  it('a rule found through its first matcher must still satisfy the others, and an expired one falls through to the next', () => {
    const rules = [
      rule({
        id: 'two-conditions',
        createdAt: 1,
        args: [
          { pointer: '/path', op: 'prefix', value: '/srv/' },
          { pointer: '/mode', op: 'equals', value: 'read' },
        ],
      }),
      rule({ id: 'expired', createdAt: 2, expiresAt: NOW, args: [{ pointer: '/path', op: 'prefix', value: '/srv/data/' }] }),
      rule({ id: 'fallback', createdAt: 3, args: [{ pointer: '/path', op: 'prefix', value: '/srv/data/a' }] }),
    ];
    const snapshot = compilePolicy(policy(), rules);
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/srv/data/a.txt', mode: 'read' } }), NOW).ruleId).toBe('two-conditions');
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/srv/data/a.txt', mode: 'write' } }), NOW).ruleId).toBe('fallback');
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/srv/data/b.txt', mode: 'write' } }), NOW).decision).toBe('prompt');
  });

  it('pointers that differ only in where a "/" sits are kept apart', () => {
    const snapshot = compilePolicy(policy(), [rule({ args: [{ pointer: '/a~1b/c', op: 'equals', value: 'x' }] })]);
    expect(evaluateToolPolicy(snapshot, call({ args: { a: { 'b/c': 'x' } } }), NOW).decision).toBe('prompt');
    expect(evaluateToolPolicy(snapshot, call({ args: { 'a/b': { c: 'x' } } }), NOW).decision).toBe('allow');
  });

  it('500 prefix rules on one tool: each directory matches its own rule only', () => {
    const rules: Rule[] = [];
    for (let i = 0; i < 500; i += 1) {
      rules.push(rule({ id: `d${i}`, createdAt: i, args: [{ pointer: '/path', op: 'prefix', value: `/data/${i}/` }] }));
    }
    const snapshot = compilePolicy(policy(), rules);
    for (const i of [0, 7, 42, 499]) {
      expect(evaluateToolPolicy(snapshot, call({ args: { path: `/data/${i}/f` } }), NOW).ruleId).toBe(`d${i}`);
    }
    expect(evaluateToolPolicy(snapshot, call({ args: { path: '/data/500/f' } }), NOW).decision).toBe('prompt');
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
