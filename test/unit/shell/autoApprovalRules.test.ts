// R-POL-6 (issue 12 item 5): `assent rules add --command | --path | --url
// [--agent]` rules turn a part the policy leaves at prompt into allow; every
// other part is still judged, a deny is never overridden, what is not
// statically known is never allowed, and --agent limits a rule to one agent.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentName } from '../../../src/core/agent/agentAction.js';
import type { AgentPolicyConfig, AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import { explainAgentPolicy } from '../../../src/core/policy/agentPolicy.js';
import { autoApprovalsFor, checkAutoRule, compileAutoRules, type AutoApprovals } from '../../../src/core/policy/autoApproval.js';
import { DEFAULT_CONFIG, type Config } from '../../../src/core/config/config.js';
import { compilePolicy, evaluateToolPolicy, type Rule } from '../../../src/core/policy/toolPolicy.js';
import { evaluateAgentAction } from '../../../src/service/agentActions.js';
import { AgentJudge } from '../../../src/shell/agentJudge.js';
import { judgePaths, judgeShell, judgeUrl } from '../../../src/shell/judgeAction.js';
import { hostPathVars } from '../../../src/shell/resolvePaths.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

let host: ShellHost;
let parser: ShellParser;
let snapshot: AgentPolicySnapshot;
/** A directory outside the cwd, where writes prompt by default; `data/out` is a symlink from it to /etc. */
let data: string;

const NOW = 1_000_000;

function rule(fields: Partial<Rule> & { id: string }): Rule {
  return { version: 1, args: [], createdAt: NOW - 1000, ...fields };
}

function autoFor(rules: Rule[], agent: AgentName = 'claude-code', nowMs = NOW): AutoApprovals {
  return autoApprovalsFor(compileAutoRules(rules, hostPathVars({ HOME: host.home }, join(host.home, '.assent'))), agent, nowMs);
}

beforeAll(async () => {
  host = makeShellHost();
  parser = await loadShellParser();
  snapshot = host.snapshot(DEFAULT_CONFIG.policy);
  data = join(host.root, 'data');
  mkdirSync(data);
  symlinkSync('/etc', join(data, 'out'));
});
afterAll(() => host[Symbol.dispose]());

describe('R-POL-6 --command rules (issue 12 item 5)', () => {
  const npmTest = [rule({ id: 'rnpmt', command: 'npm test' })];

  it('a --command "npm test" rule allows `npm test`, naming the rule as the deciding rule of that part', () => {
    expect(judgeShell(parser, snapshot, 'npm test', host.cwd).decision).toBe('prompt');
    const verdict = judgeShell(parser, snapshot, 'npm test', host.cwd, autoFor(npmTest));
    expect(verdict).toEqual({
      decision: 'allow',
      parts: [
        {
          kind: 'command',
          text: 'npm test',
          decision: 'allow',
          rule: 'rule rnpmt --command "npm test"',
          reason: 'policy.commands.default says prompt; an auto-approval rule allows it',
          ruleId: 'rnpmt',
        },
      ],
      // The risk (R-POL-10) rides beside the decision; an allowed call files nothing, so nobody sees it.
      risks: [{ flag: 'runs project code', detail: 'npm test' }],
    });
  });

  it('it does not allow `npm test; rm -rf /`, nor other words: every other part is still judged', () => {
    const auto = autoFor(npmTest);
    for (const command of ['npm test; rm -rf /', 'npm test && rm -rf build', 'rm -rf / || npm test', 'echo $(rm -rf ~) && npm test']) {
      const verdict = judgeShell(parser, snapshot, command, host.cwd, auto);
      expect(verdict.decision, command).toBe('prompt');
      expect(verdict.parts.find((p) => p.text.startsWith('rm'))).toMatchObject({ decision: 'prompt', rule: 'policy.commands.default' });
    }
    for (const command of ['npm test -- --update', 'npm test x', 'npm', 'npm  run test']) {
      expect(judgeShell(parser, snapshot, command, host.cwd, auto).decision, command).toBe('prompt');
    }
    expect(judgeShell(parser, snapshot, 'npm test && git status', host.cwd, auto).decision).toBe('allow');
  });

  it('it never overrides a part the config denies: `npm test && cat ~/.ssh/id_rsa`, or a deny rule on the same command', () => {
    expect(judgeShell(parser, snapshot, 'npm test && cat ~/.ssh/id_rsa', host.cwd, autoFor(npmTest)).decision).toBe('deny');
    const denying = host.snapshot({
      ...DEFAULT_CONFIG.policy,
      commands: { default: 'prompt', rules: [{ match: 'npm publish *', decision: 'deny' }] },
    } satisfies AgentPolicyConfig);
    const auto = autoFor([rule({ id: 'rnpma', command: 'npm *' })]);
    expect(judgeShell(parser, denying, 'npm run build', host.cwd, auto).decision).toBe('allow');
    const publish = judgeShell(parser, denying, 'npm publish --tag x', host.cwd, auto);
    expect(publish.decision).toBe('deny');
    expect(publish.parts[0]).toMatchObject({ decision: 'deny', rule: 'policy.commands.rules.0 "npm publish *"' });
    expect(publish.parts[0]?.ruleId).toBeUndefined();
    // A word that names a denied path still meets its deny rule.
    expect(judgeShell(parser, snapshot, 'cp ~/.ssh/id_rsa /tmp/k', host.cwd, autoFor([rule({ id: 'rcpaa', command: 'cp *' })])).decision).toBe('deny');
  });

  it('R-SH-3 it never allows what is not statically known: a wrapper layer, a risky assignment, a path-named command, an unnamed code string', () => {
    const npmTest = [rule({ id: 'rnpmt', command: 'npm test' })];
    const auto = autoFor([rule({ id: 'rnpmt', command: 'npm test' }), rule({ id: 'rpyth', command: 'python3 *' })]);
    for (const command of ['sudo npm test', 'PATH=/tmp npm test', 'PATH=/tmp; npm test', './npm test', '/tmp/x/npm test', "python3 -c 'print(1)'", 'eval "npm test"x$y']) {
      expect(judgeShell(parser, snapshot, command, host.cwd, auto).decision, command).not.toBe('allow');
    }
    // After a part that changes what later commands run, `npm test` itself is no longer what the rule named.
    const tainted = judgeShell(parser, snapshot, 'alias npm=rm; npm test', host.cwd, autoFor([...npmTest, rule({ id: 'ralis', command: 'alias *' })]));
    expect(tainted.parts.find((p) => p.text === 'npm test')).toMatchObject({ decision: 'prompt', reason: expect.stringContaining('alias') });
    expect(tainted.decision).toBe('prompt');
    // The exact code named literally by the rule is allowed, as for a config rule.
    expect(judgeShell(parser, snapshot, "python3 -c 'print(1)'", host.cwd, autoFor([rule({ id: 'rcode', command: "python3 -c 'print(1)'" })])).decision).toBe('allow');
    // A wrapper the default policy allows as a layer: the rule allows what it runs.
    expect(judgeShell(parser, snapshot, 'timeout 60 npm test', host.cwd, auto).decision).toBe('allow');
    expect(judgeShell(parser, snapshot, 'bash -c "npm test"', host.cwd, auto).decision).toBe('prompt');
  });
});

describe('R-POL-6 --agent, --ttl and revocation (issue 12 item 5)', () => {
  const config = { config: DEFAULT_CONFIG as Config, revision: 'v1:test' };
  const judge = (): AgentJudge => new AgentJudge({ env: { HOME: host.home }, assentHome: join(host.home, '.assent') });

  it('--agent codex does not apply to claude-code', async () => {
    const rules = [rule({ id: 'rcdex', command: 'npm test', agent: 'codex' })];
    const context = { snapshot: compilePolicy(DEFAULT_CONFIG.policy, rules), config, judge: judge(), nowMs: NOW };
    await context.judge.ready();
    const action = (agent: AgentName) => ({ agent, tool: agent === 'gemini' ? 'run_shell_command' : 'Bash', kind: 'shell' as const, input: { command: 'npm test' }, cwd: host.cwd });
    expect(evaluateAgentAction(context, action('codex'))).toMatchObject({ decision: 'allow', source: 'commands', ruleId: 'rcdex' });
    expect(evaluateAgentAction(context, action('claude-code'))).toMatchObject({ decision: 'prompt' });
    expect(evaluateAgentAction(context, action('claude-code')).ruleId).toBeUndefined();
    expect(evaluateAgentAction(context, action('gemini')).decision).toBe('prompt');
    // Without --agent, every agent.
    const every = { ...context, snapshot: compilePolicy(DEFAULT_CONFIG.policy, [rule({ id: 'revry', command: 'npm test' })]) };
    for (const agent of ['codex', 'claude-code', 'gemini'] as const) expect(evaluateAgentAction(every, action(agent)).decision, agent).toBe('allow');
  });

  it('an expired or revoked rule allows nothing', () => {
    const rules = [rule({ id: 'rexpd', command: 'npm test', expiresAt: NOW }), rule({ id: 'rrevk', command: 'npm test', revokedAt: NOW - 1 })];
    expect(judgeShell(parser, snapshot, 'npm test', host.cwd, autoFor(rules)).decision).toBe('prompt');
    expect(judgeShell(parser, snapshot, 'npm test', host.cwd, autoFor(rules, 'claude-code', NOW - 2)).decision).toBe('allow');
  });

  it('R-POL-9 explain shows the part with the rule that allowed it; a --tool rule still shows as a part of its own', async () => {
    const j = judge();
    await j.ready();
    const context = { snapshot: compilePolicy(DEFAULT_CONFIG.policy, [rule({ id: 'rnpmt', command: 'npm test' })]), config, judge: j, nowMs: NOW };
    const action = { agent: 'claude-code' as const, tool: 'Bash', kind: 'shell' as const, input: { command: 'git status && npm test' }, cwd: host.cwd };
    expect(explainAgentPolicy(evaluateAgentAction(context, action), 'claude/Bash')).toEqual({
      decision: 'allow',
      parts: [
        { kind: 'command', text: 'git status', decision: 'allow', rule: 'policy.commands.rules.35 "git *" (model git status)' },
        { kind: 'command', text: 'npm test', decision: 'allow', rule: 'rule rnpmt --command "npm test"', reason: expect.stringContaining('auto-approval rule'), ruleId: 'rnpmt' },
      ],
    });
  });

  it('a gateway never applies a --command, --path or --url rule to an MCP tool call', () => {
    const policy = compilePolicy({ default: 'prompt', destructive: 'prompt', tools: {} }, [rule({ id: 'rcmnd', command: '*' }), rule({ id: 'rpath', path: '/**' })]);
    expect(evaluateToolPolicy(policy, { server: 'claude', tool: 'Bash', args: { command: 'npm test' } }, NOW)).toMatchObject({ decision: 'prompt' });
    expect(policy.agentRules.map((r) => r.id)).toEqual(['rcmnd', 'rpath']);
  });
});

describe('R-POL-6 --path and --url rules (issue 12 item 5)', () => {
  it('a --path rule allows an access the policy prompts for when every form of the path lies inside its glob', () => {
    const auto = autoFor([rule({ id: 'rdata', path: `${data}/**` })]);
    expect(judgePaths(snapshot, [`${data}/a.txt`], 'write', host.cwd).decision).toBe('prompt');
    expect(judgePaths(snapshot, [`${data}/a.txt`], 'write', host.cwd, auto)).toMatchObject({ decision: 'allow', parts: [{ ruleId: 'rdata', rule: `rule rdata --path ${JSON.stringify(`${data}/**`)}` }] });
    // A symlink out of the glob (data/out → /etc) is judged where it lands too.
    expect(judgePaths(snapshot, [`${data}/out/hosts`], 'write', host.cwd, auto).decision).toBe('prompt');
    expect(judgePaths(snapshot, [`${data}/../elsewhere.txt`], 'write', host.cwd, auto).decision).toBe('prompt');
    // Redirections of a shell command are accesses too.
    expect(judgeShell(parser, snapshot, `echo x > ${data}/a.txt`, host.cwd, auto).decision).toBe('allow');
    expect(judgeShell(parser, snapshot, `echo x > ${data}/a.txt; echo y > /etc/x`, host.cwd, auto).decision).toBe('prompt');
  });

  it('--access read does not allow writes; a path rule never overrides a deny (~/.ssh)', () => {
    const readOnly = autoFor([rule({ id: 'rread', path: `${data}/**`, access: 'read' })]);
    expect(judgePaths(snapshot, [`${data}/a.txt`], 'write', host.cwd, readOnly).decision).toBe('prompt');
    const ssh = autoFor([rule({ id: 'rsshh', path: '~/.ssh/**' })]);
    expect(judgePaths(snapshot, ['~/.ssh/id_rsa'], 'read', host.cwd, ssh).decision).toBe('deny');
    expect(judgeShell(parser, snapshot, 'echo k >> ~/.ssh/authorized_keys', host.cwd, ssh).decision).toBe('deny');
  });

  it('a --url rule allows matching fetches only; a deny URL rule wins', () => {
    const auto = autoFor([rule({ id: 'rdocs', url: 'https://docs.example.com/*' })]);
    expect(judgeUrl(snapshot, 'https://DOCS.example.com:443/a', auto)).toMatchObject({ decision: 'allow', parts: [{ ruleId: 'rdocs' }] });
    expect(judgeUrl(snapshot, 'https://evil.example.com/a', auto).decision).toBe('prompt');
    expect(judgeUrl(snapshot, 'not a url', autoFor([rule({ id: 'rall', url: '*://**/*' })])).decision).toBe('prompt');
    const denying = host.snapshot({ ...DEFAULT_CONFIG.policy, urls: { default: 'prompt', rules: [{ match: 'https://docs.example.com/private/*', decision: 'deny' }] } });
    expect(judgeUrl(denying, 'https://docs.example.com/private/x', auto).decision).toBe('deny');
  });

  it('rules are checked as matching will compile them: one form, a pattern that compiles, a known agent', () => {
    expect(checkAutoRule({ command: 'npm test', agent: 'claude' })).toBe('claude-code');
    expect(() => checkAutoRule({ command: 'npm test', path: '/x' })).toThrow(/exactly one/);
    expect(() => checkAutoRule({ command: '   ' })).toThrow(/empty/);
    expect(() => checkAutoRule({ command: "npm 'test" })).toThrow(/unclosed/);
    expect(() => checkAutoRule({ path: 'relative/**' })).toThrow(/relative/);
    expect(() => checkAutoRule({ url: 'docs.example.com' })).toThrow(/scheme:\/\/host\/path/);
    expect(() => checkAutoRule({ url: 'https://x/*', agent: 'cursor' })).toThrow(/unknown agent/);
  });
});
