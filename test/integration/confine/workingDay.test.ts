// R-SH-14 acceptance, "a developer's working day": 40 everyday actions of a
// coding agent in a git project (reads, searches, edits, git bookkeeping) and
// 10 runs of tests, lint and builds, each decided by the real daemon through
// the built Claude Code hook with the default policy. At least 95 % are decided
// without a person. Every allowed shell command is then run the way the agent
// would run it (the hook's updatedInput where it gave one), and every piece of
// project code — package scripts, local bins, node and python files, make,
// ./build.sh — records whether it ran inside the sandbox: none may run outside it.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxStatus } from '../../../src/exec/confine/sandboxRun.js';
import { DaemonClient } from '../../../src/heads/daemon/rpcClient.js';
import { makeTempHome, REPO_ROOT, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook } from '../../helpers/hook.js';

const SANDBOX = sandboxStatus();
let daemonHome: TempHome;
let client: DaemonClient;
let base: string;
let home: string;
let project: string;

/** Every piece of project code appends one line here: its name and whether it ran confined. */
const RUNS = 'project-code.log';
const record = (name: string): string => `require('node:fs').appendFileSync(${JSON.stringify(RUNS)}, ${JSON.stringify(name)} + ' ' + (process.env.ASSENT_CONFINED === '1' ? 'confined' : 'UNCONFINED') + '\\n');`;

beforeAll(async () => {
  if (!SANDBOX.available) return;
  // Outside /tmp, so the project seen from outside is the one the sandbox wrote to.
  const parent = join(REPO_ROOT, 'test-output');
  mkdirSync(parent, { recursive: true });
  base = mkdtempSync(join(parent, 'working-day-'));
  home = join(base, 'home');
  project = join(home, 'proj');
  mkdirSync(join(project, 'src'), { recursive: true });
  mkdirSync(join(project, 'scripts'));
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  const git = (...args: string[]): void => {
    const run = spawnSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@example.com', ...args], { cwd: project, env: { PATH: process.env['PATH'], HOME: home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(run.stderr);
  };
  git('init', '-q');
  // The person's identity, in their own ~/.gitconfig (what git reads is judged too, R-SH-12).
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = P\n\temail = p@example.com\n');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'proj', version: '1.0.0', scripts: { test: 'node scripts/test.js', lint: 'node scripts/lint.js', build: 'node scripts/build.js' } }, null, 2));
  for (const name of ['test', 'lint', 'build', 'check']) writeFileSync(join(project, 'scripts', `${name}.js`), `${record(name)}\nconsole.log('${name} ok');\n`);
  writeFileSync(join(project, 'scripts', 'gen.py'), `import os\nopen(${JSON.stringify(RUNS)}, 'a').write('gen.py ' + ('confined' if os.environ.get('ASSENT_CONFINED') == '1' else 'UNCONFINED') + '\\n')\n`);
  writeFileSync(join(project, 'node_modules', '.bin', 'tsc'), `#!/usr/bin/env node\n${record('tsc')}\n`);
  chmodSync(join(project, 'node_modules', '.bin', 'tsc'), 0o755);
  writeFileSync(join(project, 'Makefile'), 'all:\n\tnode scripts/build.js\n');
  writeFileSync(join(project, 'build.sh'), '#!/bin/sh\nnode scripts/build.js\n');
  chmodSync(join(project, 'build.sh'), 0o755);
  writeFileSync(join(project, 'src', 'index.js'), "export const answer = 42;\n// TODO: more\n");
  writeFileSync(join(project, 'src', 'util.js'), 'export function add(a, b) {\n  return a + b;\n}\n');
  writeFileSync(join(project, 'README.md'), '# proj\n');
  writeFileSync(join(project, '.gitignore'), `node_modules\n${RUNS}\n`);
  git('add', '.');
  git('commit', '-qm', 'start');
  daemonHome = makeTempHome();
  await daemonHome.startDaemon({ HOME: home });
  client = await DaemonClient.connect({ socketPath: daemonHome.paths.socket, autoSpawn: false });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await daemonHome?.cleanup();
  if (base !== undefined) rmSync(base, { recursive: true, force: true });
});

type Action = { tool: string; input: Record<string, unknown> };
const bash = (command: string): Action => ({ tool: 'Bash', input: { command, description: 'work' } });
const file = (name: string): string => join(project, name);

/** The 40 everyday actions, in the order a session might take them. */
function everyday(): Action[] {
  return [
    { tool: 'Read', input: { file_path: file('README.md') } },
    { tool: 'Read', input: { file_path: file('package.json') } },
    { tool: 'Glob', input: { pattern: 'src/**/*.js' } },
    { tool: 'Grep', input: { pattern: 'TODO', path: project } },
    { tool: 'Read', input: { file_path: file('src/index.js') } },
    { tool: 'Read', input: { file_path: file('src/util.js') } },
    bash('git status'),
    bash('git log --oneline -5'),
    bash('ls -la'),
    bash('ls src'),
    bash('cat package.json'),
    bash('rg -n TODO src'),
    bash('grep -rn "export" src'),
    bash('find src -name "*.js"'),
    bash('wc -l src/index.js src/util.js'),
    bash("sed -n '1,5p' src/util.js"),
    bash('head -n 3 README.md'),
    bash('git diff'),
    { tool: 'Edit', input: { file_path: file('src/util.js'), old_string: 'return a + b;', new_string: 'return Number(a) + Number(b);' } },
    { tool: 'Write', input: { file_path: file('src/mul.js'), content: 'export const mul = (a, b) => a * b;\n' } },
    bash('mkdir -p src/lib'),
    { tool: 'Write', input: { file_path: file('src/lib/sub.js'), content: 'export const sub = (a, b) => a - b;\n' } },
    bash('git diff --stat'),
    bash('git status --short'),
    bash('git add src/util.js src/mul.js src/lib/sub.js'),
    bash('git commit -m "arithmetic helpers"'),
    bash('git log -1 --stat'),
    bash('git branch'),
    bash('git show --stat HEAD'),
    { tool: 'Edit', input: { file_path: file('README.md'), old_string: '# proj', new_string: '# proj\n\nSmall helpers.' } },
    bash('git diff README.md'),
    bash('node --version'),
    bash('npm --version'),
    bash('cat src/mul.js'),
    bash('pwd'),
    bash('echo done'),
    { tool: 'TodoWrite', input: { todos: [{ content: 'helpers', status: 'completed', activeForm: 'writing helpers' }] } },
    bash('rm -rf build'),
    bash('git push origin HEAD'),
    bash('git status'),
  ];
}

/** The 10 runs of the project's own code. */
const PROJECT_CODE = ['npm test', 'npm run lint', 'npm test', 'npm run build', 'npx tsc --noEmit', 'node scripts/check.js', 'make', './build.sh', 'python3 scripts/gen.py', 'npm test'];

interface Explained {
  decision: 'allow' | 'deny' | 'prompt';
  confined?: boolean;
}

describe.skipIf(!SANDBOX.available)("R-SH-14 a developer's working day", () => {
  it('50 actions: at least 95 % decided without a person, and no project code runs outside the sandbox', async () => {
    const actions = [...everyday(), ...PROJECT_CODE.map(bash)];
    expect(actions).toHaveLength(50);
    const env = { ...daemonHome.env, HOME: home };
    const tally = { allow: 0, confined: 0, deny: 0, prompt: 0 };
    const asked: string[] = [];
    for (const [index, action] of actions.entries()) {
      const explained = await client.call<Explained>('policy.explain', { agent: 'claude-code', tool: action.tool, input: action.input, cwd: project });
      if (explained.decision === 'prompt') {
        tally.prompt += 1;
        asked.push(`${action.tool} ${JSON.stringify(action.input)}`);
        continue;
      }
      // Decided without a person: the hook's own answer, and for the shell, the command the agent then runs.
      const event = { session_id: 'day', transcript_path: '/tmp/t.jsonl', cwd: project, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: action.tool, tool_input: action.input, tool_use_id: `toolu_day_${index}` };
      const result = await runHook(['claude-code'], event, env);
      const answer = answerOf(result.stdout);
      expect(answer.decision, `${action.tool} ${JSON.stringify(action.input)}: ${result.stdout} ${result.stderr}`).toBe(explained.decision);
      if (answer.decision === 'deny') {
        tally.deny += 1;
        continue;
      }
      const updated = (answer.raw['hookSpecificOutput'] as { updatedInput?: { command?: string } } | undefined)?.updatedInput;
      if (updated !== undefined) tally.confined += 1;
      else tally.allow += 1;
      expect(updated !== undefined, `${String(action.input['command'] ?? action.tool)}: confined in explain and hook alike`).toBe(explained.confined === true);
      // The agent's own file tools do what was allowed.
      const target = String(action.input['file_path'] ?? '');
      if (action.tool === 'Write') writeFileSync(target, String(action.input['content']));
      if (action.tool === 'Edit') writeFileSync(target, readFileSync(target, 'utf8').replace(String(action.input['old_string']), String(action.input['new_string'])));
      if (action.tool !== 'Bash') continue;
      const command = updated?.command ?? String(action.input['command']);
      const ran = spawnSync('bash', ['-c', command], { cwd: project, env: { PATH: process.env['PATH'], HOME: home, ASSENT_HOME: daemonHome.home, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8', timeout: 60_000 });
      expect(ran.status, `${command}: ${ran.stderr}`).toBe(0);
    }
    const withoutPerson = tally.allow + tally.confined + tally.deny;
    process.stdout.write(`working day: ${withoutPerson}/50 decided without a person (allow ${tally.allow}, confined ${tally.confined}, deny ${tally.deny}); asked: ${asked.join('; ')}\n`);
    expect(withoutPerson / actions.length).toBeGreaterThanOrEqual(0.95);
    // Every project-code run of the ten was confined, and each of them did run.
    expect(tally.confined).toBe(PROJECT_CODE.length);
    const runs = existsSync(join(project, RUNS)) ? readFileSync(join(project, RUNS), 'utf8').trim().split('\n') : [];
    expect(runs).toHaveLength(PROJECT_CODE.length);
    expect(runs.filter((line) => !line.endsWith(' confined'))).toEqual([]);
  }, 180_000);
});
