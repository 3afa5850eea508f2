// R-SH-9: files that editors and tools run on their own when a person opens or
// uses the project are gate files. A Write, an Edit, a redirection and a cp into
// each are prompt at risk high, naming the file; a neighbour that is no gate
// file stays an ordinary write under the cwd.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentActionRisk, gateFileOf } from '../../../src/core/approval/approvalRisk.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import type { AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import type { ActionVerdict } from '../../../src/core/policy/actionPlan.js';
import { AgentJudge } from '../../../src/shell/agentJudge.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { runGit } from '../../helpers/gitFixture.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

let host: ShellHost;
let parser: ShellParser;
let snapshot: AgentPolicySnapshot;
let judge: AgentJudge;
const config = { revision: 'v1:gate-files', policy: DEFAULT_CONFIG.policy };

beforeAll(async () => {
  host = makeShellHost();
  parser = await loadShellParser();
  snapshot = host.snapshot(DEFAULT_CONFIG.policy);
  judge = new AgentJudge({ env: { HOME: host.home }, assentHome: join(host.home, '.assent') });
  await judge.ready();
  writeFileSync(join(host.cwd, 'payload.json'), '{"version":"2.0.0","tasks":[{"label":"x","command":"touch /tmp/p","runOptions":{"runOn":"folderOpen"}}]}\n');
});
afterAll(() => host[Symbol.dispose]());

/** Each file of R-SH-9's editor and tool list, relative to the cwd, and the name the risk line gives it. */
const GATE_FILES: [path: string, named: string][] = [
  ['.vscode/tasks.json', '.vscode/tasks.json'],
  ['.vscode/settings.json', '.vscode/settings.json'],
  ['.vscode/launch.json', '.vscode/launch.json'],
  ['proj.code-workspace', 'proj.code-workspace'],
  ['.devcontainer/devcontainer.json', '.devcontainer/'],
  ['.devcontainer/post-create.sh', '.devcontainer/'],
  ['.devcontainer.json', '.devcontainer.json'],
  ['.idea/workspace.xml', '.idea/'],
  ['.husky/pre-commit', '.husky/'],
  ['.husky/_/husky.sh', '.husky/'],
  ['.pre-commit-config.yaml', '.pre-commit-config.yaml'],
  ['lefthook.yml', 'lefthook.yml'],
  ['.lefthook.yml', '.lefthook.yml'],
  ['lefthook-local.yml', 'lefthook-local.yml'],
  ['.npmrc', '.npmrc'],
  ['.yarnrc.yml', '.yarnrc.yml'],
  ['packages/app/.npmrc', '.npmrc'],
  ['sub/.vscode/tasks.json', '.vscode/tasks.json'],
];

/** `named` is the gate's name on the risk line; `beneath` accepts a file beneath it too (cp may land in `named/…`). */
function expectGate(verdict: ActionVerdict | undefined, kind: 'shell' | 'write', named: string, what: string, beneath = false): void {
  expect(verdict?.decision, what).toBe('prompt');
  const risk = agentActionRisk(kind, verdict?.risks);
  expect(risk.level, what).toBe('high');
  if (beneath) expect(risk.reasons.some((r) => r.startsWith(`gate file write (${named}`)), `${what}: ${risk.reasons.join(', ')}`).toBe(true);
  else expect(risk.reasons, what).toContain(`gate file write (${named})`);
}

describe('R-SH-9 the files editors and tools run on their own are gate files', () => {
  it.each(GATE_FILES)('a Write and an Edit of %s prompt at risk high', (path, named) => {
    const write = judge.judge(config, { agent: 'claude-code', tool: 'Write', kind: 'write', input: { file_path: join(host.cwd, path), content: '{}' }, cwd: host.cwd });
    expectGate(write, 'write', named, `Write ${path}`);
    const edit = judge.judge(config, { agent: 'claude-code', tool: 'Edit', kind: 'write', input: { file_path: join(host.cwd, path), old_string: 'a', new_string: 'b' }, cwd: host.cwd });
    expectGate(edit, 'write', named, `Edit ${path}`);
  });

  it.each(GATE_FILES)('a redirection, an append, tee and cp into %s prompt at risk high', (path, named) => {
    for (const command of [`echo '{}' > ${path}`, `printf x >> ${path}`, `echo x | tee ${path}`, `cp payload.json ${path}`]) {
      expectGate(judgeShell(parser, snapshot, command, host.cwd), 'shell', named, command);
    }
  });

  it('their neighbours are ordinary writes under the cwd: .vscode/extensions.json, a workspace-like name, notes about husky', () => {
    for (const path of ['.vscode/extensions.json', 'docs/husky.md', 'lefthook.md', 'npmrc.example', 'src/tasks.json']) {
      expect(judgeShell(parser, snapshot, `cp payload.json ${path}`, host.cwd).decision, path).toBe('allow');
    }
  });
});

describe('R-SH-12 a submodule\'s and a worktree\'s own git files are gate files', () => {
  it.each(['.git/modules/sub/config', '.git/modules/sub/hooks/pre-commit', '.git/modules/a/modules/b/config', '.git/worktrees/wt/config.worktree', '.git/config.worktree'])('%s', (file) => {
    expect(gateFileOf(`/p/${file}`)).toBeDefined();
    expect(judgeShell(parser, snapshot, `echo x >> ${file}`, host.cwd).decision).not.toBe('allow');
  });
});

describe('R-SH-12, R-SH-13 the folder core.hooksPath names and the files an include names are gate files', () => {
  // A repository whose config moves its hooks to .githooks/ and includes a committed project.gitconfig and a
  // local.gitconfig that does not exist yet (git ignores a missing include until someone writes it).
  let repo: string;
  beforeAll(() => {
    repo = join(host.cwd, 'gated');
    mkdirSync(join(repo, '.githooks'), { recursive: true });
    runGit(repo, { PATH: '/usr/bin:/bin', HOME: host.home }, 'init', '-q');
    appendFileSync(join(repo, '.git', 'config'), '[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../project.gitconfig\n[includeIf "gitdir:~/"]\n\tpath = ../local.gitconfig\n');
    writeFileSync(join(repo, 'project.gitconfig'), '[color]\n\tui = auto\n');
  });

  const GIT_GATES: [path: string, why: string][] = [
    ['.githooks/pre-commit', 'the hooks folder git runs hooks from (core.hooksPath)'],
    ['.githooks/new/nested.sh', 'the hooks folder git runs hooks from (core.hooksPath)'],
    ['project.gitconfig', 'a configuration file git reads'],
    ['local.gitconfig', 'a configuration file git reads'],
  ];

  it.each(GIT_GATES)('a Write, an Edit, a redirection, tee and cp into %s prompt at risk high, naming why', (path, why) => {
    const file = join(repo, path);
    for (const tool of ['Write', 'Edit'] as const) {
      const input = tool === 'Write' ? { file_path: file, content: 'x' } : { file_path: file, old_string: 'a', new_string: 'b' };
      const verdict = judge.judge(config, { agent: 'claude-code', tool, kind: 'write', input, cwd: repo });
      expectGate(verdict, 'write', file, `${tool} ${path}`);
      expect(JSON.stringify(verdict?.parts)).toContain(why);
    }
    for (const command of [`echo x > ${path}`, `printf x >> ${path}`, `echo x | tee ${path}`, `cp ../payload.json ${path}`]) {
      const verdict = judgeShell(parser, snapshot, command, repo);
      expectGate(verdict, 'shell', file, command, true);
      expect(JSON.stringify(verdict.parts), command).toContain(why);
    }
  });

  it('other files of the same repository stay ordinary writes, and so do the same names where no config names them', () => {
    for (const path of ['src/a.js', 'githooks.md', 'other.gitconfig']) expect(judgeShell(parser, snapshot, `echo x > ${path}`, repo).decision, path).toBe('allow');
    expect(judgeShell(parser, snapshot, 'echo x > project.gitconfig', host.cwd).decision).toBe('allow');
    expect(judgeShell(parser, snapshot, 'mkdir -p .githooks && echo x > .githooks/pre-commit', host.cwd).decision).toBe('allow');
  });
});
