// R-SH-2, R-SH-5: a user's rule with "unless" still validates and still works,
// but a word the shell expands at run time never passes it — nor matches a
// rule's "match" for an allow — so `x=--output=../.bashrc; git log $x` is not
// allowed by `git log *` unless `--output*`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/core/config/config.js';
import type { AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

let host: ShellHost;
let parser: ShellParser;
let snapshot: AgentPolicySnapshot;

beforeAll(async () => {
  host = makeShellHost();
  parser = await loadShellParser();
  const { config, problems } = validateConfig({
    policy: { commands: { default: 'prompt', rules: [{ match: 'git log *', decision: 'allow', unless: ['--output*', '-o*'] }, { match: 'make *', decision: 'allow' }] } },
  });
  expect(problems).toEqual([]);
  if (config === undefined) throw new Error('the config did not validate');
  snapshot = host.snapshot(config.policy);
});
afterAll(() => host[Symbol.dispose]());

describe('"unless" with words the shell expands (R-SH-2, R-SH-5)', () => {
  it('a config with "unless" on a rule validates, and the rule allows its static forms', () => {
    expect(judgeShell(parser, snapshot, 'git log --oneline -5', host.cwd).decision).toBe('allow');
    expect(judgeShell(parser, snapshot, 'git log --output=x', host.cwd).decision).toBe('prompt');
  });

  it.each([
    'x=--output=../.bashrc; git log $x',
    'git log $OPTS',
    'git log "$OPTS"',
    'git log ${OPTS}',
    'git log $(echo --output=../.bashrc)',
    'git log `echo --output=x`',
    'git log --out*',
    'git log {--output=x,}',
    'make $TARGET',
  ])('%j is never allowed: the expanded word may be anything', (command) => {
    const verdict = judgeShell(parser, snapshot, command, host.cwd);
    expect(verdict.decision).not.toBe('allow');
    expect(verdict.parts.map((p) => p.reason ?? '').join(' ')).toMatch(/not statically known|expanded|substitution/);
  });
});
