import { describe, expect, it } from 'vitest';
import type { ExecAction } from '../../../src/core/exec/action.js';
import type { ExecPolicy } from '../../../src/core/exec/execFiles.js';
import { evaluateExecPolicy } from '../../../src/core/exec/execPolicy.js';

const action: ExecAction = { executable: '/usr/bin/git', cwd: '/repo', args: ['status'], env: { A: '1' } };
const policy = (rules: ExecPolicy['rules'], defaultDecision: 'ask' | 'deny' = 'deny'): ExecPolicy => ({ schemaVersion: 2, defaultDecision, rules });

describe('SPEC §6 exact structural matching', () => {
  it('an identical action matches regardless of key order', () => {
    const reordered = JSON.parse('{"env":{"A":"1"},"args":["status"],"cwd":"/repo","executable":"/usr/bin/git"}') as ExecAction;
    expect(evaluateExecPolicy(policy([{ action: reordered, decision: 'allow' }]), action)).toBe('allow');
  });
  it('argument order, an extra argument, an extra env entry or another cwd do not match', () => {
    const p = policy([{ action, decision: 'allow' }], 'ask');
    expect(evaluateExecPolicy(p, { ...action, args: ['status', '--short'] })).toBe('ask');
    expect(evaluateExecPolicy(p, { ...action, env: { A: '1', B: '2' } })).toBe('ask');
    expect(evaluateExecPolicy(p, { ...action, cwd: '/repo/' })).toBe('ask');
    expect(evaluateExecPolicy(p, { ...action, executable: '/usr/bin/git2' })).toBe('ask');
  });
  it('no prefix or wildcard matching: a rule for /repo does not cover /repo/sub', () => {
    const p = policy([{ action: { ...action, args: [] }, decision: 'allow' }]);
    expect(evaluateExecPolicy(p, action)).toBe('deny');
  });
  it('first match wins', () => {
    const p = policy([
      { action, decision: 'deny' },
      { action: { ...action, args: ['log'] }, decision: 'allow' },
    ]);
    expect(evaluateExecPolicy(p, action)).toBe('deny');
    expect(evaluateExecPolicy(p, { ...action, args: ['log'] })).toBe('allow');
  });
  it('without a match the default decides', () => {
    expect(evaluateExecPolicy(policy([], 'ask'), action)).toBe('ask');
    expect(evaluateExecPolicy(policy([], 'deny'), action)).toBe('deny');
  });
});
