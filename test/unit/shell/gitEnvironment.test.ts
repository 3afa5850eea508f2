// R-SH-12: an environment prefix that moves where git finds its configuration is
// followed, not refused: the files it makes git read are judged by who can write
// them. The generated layouts of gitConfigOracle.test.ts check the same against
// real git; these name the decision and the reason for each variable.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { compileAgentPolicy, type AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { hostPathVars } from '../../../src/shell/resolvePaths.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeGitTemplate } from '../../helpers/gitFixture.js';

let parser: ShellParser;
let root: string;
let repo: string;
let snapshot: AgentPolicySnapshot;

beforeAll(async () => {
  parser = await loadShellParser();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-gitenv-')));
  const home = join(root, 'home');
  // The person's own git-lfs filters: trusted, so plain git status stays allowed.
  repo = makeGitTemplate(root, home, { PATH: '/usr/bin:/bin', HOME: home }, '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n');
  mkdirSync(join(repo, 'git'));
  writeFileSync(join(repo, 'git', 'config'), '[core]\n\tpager = touch pwned\n');
  writeFileSync(join(repo, '.gitconfig'), '[diff "x"]\n\ttextconv = touch pwned\n');
  writeFileSync(join(repo, 'plain.cfg'), '[user]\n\tname = x\n');
  snapshot = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: home }, join(home, '.assent')));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const judge = (command: string): { decision: string; why: string } => {
  const verdict = judgeShell(parser, snapshot, command, repo);
  return { decision: verdict.decision, why: verdict.parts.map((p) => p.reason ?? '').join(' | ') };
};

describe('R-SH-12 environment prefixes of git are followed', () => {
  it.each([
    ['git status', 'allow', ''],
    ['HOME=~ git status', 'allow', ''],
    ['GIT_CONFIG_NOSYSTEM=1 git status', 'allow', ''],
    ['GIT_CONFIG_GLOBAL=plain.cfg git log', 'allow', ''],
    ['GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=color.ui GIT_CONFIG_VALUE_0=auto git log', 'allow', ''],
    ['GIT_DIR=.git git status', 'allow', ''],
    ['XDG_CONFIG_HOME=. git status', 'prompt', 'core.pager ('],
    ['HOME=. git status', 'prompt', 'diff.x.textconv ('],
    ['GIT_CONFIG_GLOBAL=git/config git status', 'prompt', '/git/config:2'],
    ['GIT_CONFIG_SYSTEM=.gitconfig GIT_CONFIG_NOSYSTEM=0 git status', 'prompt', '.gitconfig:2'],
    ['GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=less git log', 'prompt', 'core.pager (GIT_CONFIG_COUNT)'],
    ['GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=include.path GIT_CONFIG_VALUE_0=/tmp/x git log', 'prompt', 'include.path'],
    ['GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=color.ui GIT_CONFIG_VALUE_0=auto git log', 'prompt', 'GIT_CONFIG_KEY_1'],
    ['GIT_CONFIG_COUNT=x git log', 'prompt', 'not a count'],
    ['GIT_CONFIG_NOSYSTEM=perhaps git status', 'prompt', 'not a boolean'],
    ['GIT_DIR=nowhere git status', 'prompt', 'not a git repository'],
    ['GIT_DIR=~/.ssh git log', 'deny', ''],
    ['HOME= git status', 'prompt', 'HOME is empty'],
    ['GIT_WORK_TREE=. git status', 'prompt', 'GIT_WORK_TREE'],
    ['GIT_CONFIG_PARAMETERS="\'core.pager\'=\'less\'" git log', 'prompt', 'GIT_CONFIG_PARAMETERS'],
    ['HOME=$X git status', 'prompt', 'HOME'],
  ])('%s is %s', (command, decision, why) => {
    const found = judge(command);
    expect(found.decision, found.why).toBe(decision);
    expect(found.why).toContain(why);
  });
});
