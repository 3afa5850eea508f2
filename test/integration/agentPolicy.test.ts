// The shell, path and URL policy wired into the agent-action decision (R-POL-6),
// through the built hook and a real daemon over its real socket: the default
// policy with no config.json (R-POL-8), the most restrictive rule (R-SH-2), and
// which part and rule decided, in the denial and in the approval.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxStatus } from '../../src/exec/confine/sandboxRun.js';
import { makeTempHome, waitForAudit, type TempHome } from '../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import { PtySession, runInTerminal } from '../helpers/pty.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Fixture {
  home: TempHome;
  /** The temp HOME the daemon sees (`~`), with a key in ~/.ssh. */
  userHome: string;
  project: string;
  env: NodeJS.ProcessEnv;
}

/** A daemon with a temp HOME; `config` undefined: no config.json at all. */
async function setup(config: Record<string, unknown> | undefined): Promise<Fixture> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  const userHome = mkdtempSync(join(tmpdir(), 'as-user-'));
  cleanups.push(() => rmSync(userHome, { recursive: true, force: true }));
  mkdirSync(join(userHome, '.ssh'), { recursive: true });
  writeFileSync(join(userHome, '.ssh', 'id_rsa'), 'not a real key\n');
  const project = join(userHome, 'project');
  mkdirSync(project);
  if (config !== undefined) {
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  }
  const env = { ...home.env, HOME: userHome };
  await home.startDaemon({ HOME: userHome });
  return { home, userHome, project, env };
}

async function pendingList(f: Fixture): Promise<Record<string, unknown>[]> {
  const result = await f.home.runCli(['pending', '--json'], { env: { HOME: f.userHome } });
  return (JSON.parse(result.stdout) as { data: Record<string, unknown>[] }).data;
}

async function waitForPending(f: Fixture): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 300; i += 1) {
    const list = await pendingList(f);
    if (list.length > 0) return list;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no pending approval appeared');
}

describe('agent actions decided by the command, path and URL rules (R-POL-6)', () => {
  it('R-POL-6 R-POL-8 with no config.json: `git status` is allowed with no approval filed, `cat ~/.ssh/id_rsa` is denied naming the path rule, `rm -rf build` files a prompt that names policy.commands.default', async () => {
    const f = await setup(undefined);
    const status = await runHook(['claude-code'], shellEvent('claude-code', 'git status', { cwd: f.project }), f.env);
    expect(status.code, status.stderr).toBe(0);
    expect(answerOf(status.stdout).decision).toBe('allow');
    expect(answerOf(status.stdout).reason).toContain('policy.commands.rules.');
    expect(await pendingList(f)).toEqual([]);

    const key = await runHook(['claude-code'], shellEvent('claude-code', 'cat ~/.ssh/id_rsa', { cwd: f.project }), f.env);
    expect(key.code, key.stderr).toBe(0);
    const denied = answerOf(key.stdout);
    expect(denied.decision).toBe('deny');
    expect(denied.reason).toContain('"~/.ssh/**"');
    expect(denied.reason).toContain('read ~/.ssh/id_rsa');
    expect(await pendingList(f)).toEqual([]);

    const removal = runHook(['claude-code'], shellEvent('claude-code', 'rm -rf build', { cwd: f.project }), f.env);
    const [approval] = await waitForPending(f);
    const caller = approval?.['caller'] as Record<string, unknown>;
    expect(caller['policy']).toMatchObject({
      decision: 'prompt',
      key: 'policy.commands.default',
      parts: [{ kind: 'command', text: 'rm -rf build', decision: 'prompt', rule: 'policy.commands.default' }],
    });
    const deny = await f.home.runCli(['deny', String(approval?.['id'])], { env: { HOME: f.userHome } });
    expect(deny.code, deny.stderr).toBe(0);
    expect(answerOf((await removal).stdout).decision).toBe('deny');
  });

  it('R-POL-8 with no config.json, routine work runs with no approval filed: the bookkeeping tools, git add/commit, mkdir -p, --version, find, sed -n, rg, and grep -r in a tree with no credential file', async () => {
    const f = await setup(undefined);
    mkdirSync(join(f.project, 'src'));
    writeFileSync(join(f.project, 'src', 'x.go'), 'package x\n');
    const tool = (agent: 'claude-code' | 'codex' | 'gemini', name: string, input: Record<string, unknown>): Record<string, unknown> => ({
      ...shellEvent(agent, ''),
      cwd: f.project,
      tool_name: name,
      tool_input: input,
    });
    const events: [agent: 'claude-code' | 'codex' | 'gemini', event: Record<string, unknown>][] = [
      ['claude-code', tool('claude-code', 'TodoWrite', { todos: [{ content: 'x', status: 'pending', activeForm: 'x' }] })],
      ['claude-code', tool('claude-code', 'Task', { description: 'look', prompt: 'look around', subagent_type: 'general-purpose' })],
      ['claude-code', tool('claude-code', 'ExitPlanMode', { plan: 'do it' })],
      ['claude-code', tool('claude-code', 'NotebookRead', { notebook_path: join(f.project, 'n.ipynb') })],
      ['codex', tool('codex', 'update_plan', { plan: [] })],
      ['gemini', tool('gemini', 'write_todos', { todos: [] })],
      ...['git add src/x.go', 'git commit -m "fix"', 'mkdir -p build', 'node --version', "find . -name '*.go'", "sed -n '1,40p' src/x.go", 'rg foo', 'grep -r foo .'].map(
        (command): ['claude-code', Record<string, unknown>] => ['claude-code', shellEvent('claude-code', command, { cwd: f.project })],
      ),
    ];
    for (const [agent, event] of events) {
      const result = await runHook([agent], event, f.env);
      expect(result.code, result.stderr).toBe(0);
      expect(answerOf(result.stdout).decision, `${JSON.stringify(event['tool_input'])}: ${result.stdout}`).toBe('allow');
    }
    expect(await pendingList(f)).toEqual([]);
    writeFileSync(join(f.project, 'src', '.env'), 'KEY=1\n');
    // A credential file beneath makes the recursive read the credential rule's: deny, naming where it reaches.
    const secret = await runHook(['claude-code'], shellEvent('claude-code', 'grep -r foo .', { cwd: f.project }), f.env);
    expect(answerOf(secret.stdout).decision).toBe('deny');
    expect(answerOf(secret.stdout).reason).toContain('.env');
  });

  it('R-SH-2 the most restrictive matching rule wins: `git push --force *` → deny beats `git *` → allow; `git push origin` stays allowed', async () => {
    const f = await setup({
      policy: { commands: { default: 'prompt', rules: [{ match: 'git *', decision: 'allow' }, { match: 'git push --force *', decision: 'deny' }] } },
    });
    const force = await runHook(['codex'], shellEvent('codex', 'git push --force origin main', { cwd: f.project }), f.env);
    expect(force.code, force.stderr).toBe(0);
    expect(answerOf(force.stdout).decision).toBe('deny');
    expect(answerOf(force.stdout).reason).toContain('policy.commands.rules.1 "git push --force *"');
    const push = await runHook(['codex'], shellEvent('codex', 'git push origin main', { cwd: f.project }), f.env);
    expect(answerOf(push.stdout).decision).toBe('allow');
    expect(await pendingList(f)).toEqual([]);
  });

  it('R-POL-6 policy.tools["<agent>/<tool>"] wins outright over the command rules', async () => {
    const f = await setup({ policy: { tools: { 'gemini/run_shell_command': 'allow' }, commands: { default: 'deny', rules: [] } } });
    const result = await runHook(['gemini'], shellEvent('gemini', 'rm -rf build', { cwd: f.project }), f.env);
    expect(answerOf(result.stdout).decision).toBe('allow');
    const other = await runHook(['claude-code'], shellEvent('claude-code', 'rm -rf build', { cwd: f.project }), f.env);
    expect(answerOf(other.stdout).decision).toBe('deny');
  });

  it('R-PATH-1 read and write tools are judged by the paths they name: Claude Read of ~/.ssh/id_rsa is denied, Write under the cwd allowed, Codex apply_patch outside the cwd prompts', async () => {
    const f = await setup(undefined);
    const event = (agent: 'claude-code' | 'codex', tool: string, input: Record<string, unknown>): Record<string, unknown> => ({
      ...shellEvent(agent, ''),
      cwd: f.project,
      tool_name: tool,
      tool_input: input,
    });
    const read = await runHook(['claude-code'], event('claude-code', 'Read', { file_path: join(f.userHome, '.ssh', 'id_rsa') }), f.env);
    expect(answerOf(read.stdout).decision).toBe('deny');
    const write = await runHook(['claude-code'], event('claude-code', 'Write', { file_path: join(f.project, 'a.txt'), content: 'x' }), f.env);
    expect(answerOf(write.stdout).decision).toBe('allow');
    const patch = '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** Add File: ../outside.txt\n+x\n*** End Patch\n';
    const patched = runHook(['codex'], event('codex', 'apply_patch', { command: patch }), f.env);
    const [approval] = await waitForPending(f);
    const parts = ((approval?.['caller'] as Record<string, unknown>)['policy'] as { parts: Record<string, unknown>[] }).parts;
    expect(parts.map((part) => [part['text'], part['decision']])).toEqual([
      ['write src/a.ts', 'allow'],
      ['write ../outside.txt', 'prompt'],
    ]);
    await f.home.runCli(['deny', String(approval?.['id'])], { env: { HOME: f.userHome } });
    expect(answerOf((await patched).stdout).decision).toBe('deny');
  });

  it('R-POL-9 R-SH-3 the preview in `assent pending` lists each simple command with its rule, and why `eval "$x"` was not statically known', async () => {
    const f = await setup(undefined);
    const call = runHook(['claude-code'], shellEvent('claude-code', 'git status; eval "$x"', { cwd: f.project }), f.env);
    const [approval] = await waitForPending(f);
    const text = await f.home.runCli(['pending'], { env: { HOME: f.userHome } });
    expect(text.stdout).toContain('  policy    prompt (decided by policy.commands.default)');
    expect(text.stdout).toMatch(/ {4}allow {2}command git status\n {11}by policy\.commands\.rules\.\d+ "git \*" \(model git status\)/);
    expect(text.stdout).toContain('    prompt command eval "$x"');
    expect(text.stdout).toContain('           why: the string given to eval is not a literal');
    await f.home.runCli(['deny', String(approval?.['id'])], { env: { HOME: f.userHome } });
    expect(answerOf((await call).stdout).decision).toBe('deny');
  });

  it('R-POL-7 approving `npm test` for the session remembers that exact command text: the next `npm test` in the session passes (whatever its description), `npm test -- --update` and `npm test` in another session still ask', async () => {
    // With a sandbox here `npm test` would run confined (R-SH-14); this test is about what a prompt remembers.
    const f = await setup({ policy: { commands: { confine: [] } } });
    const npm = (command: string, sessionId: string, description: string): Record<string, unknown> =>
      shellEvent('claude-code', command, { cwd: f.project, session_id: sessionId, tool_input: { command, description } });
    const first = runHook(['claude-code'], npm('npm test', 'S1', 'run the tests'), f.env);
    const [approval] = await waitForPending(f);
    const preview = await f.home.runCli(['pending'], { env: { HOME: f.userHome } });
    expect(preview.stdout).toContain('approving for the session remembers the exact command text "npm test", for this agent session');
    const outFile = join(f.home.home, 'approve.out');
    const pty = new PtySession(['approve', '--session', String(approval?.['id'])], { outFile, env: { ASSENT_HOME: f.home.home, HOME: f.userHome } });
    cleanups.push(() => pty.kill());
    const code = await pty.waitFor(/Type ([a-z]{4}) to approve for the rest of this session/);
    pty.type(`${code[1]}\r`);
    expect((await pty.finish(outFile)).exitCode, pty.screen).toBe(0);
    expect(answerOf((await first).stdout).decision).toBe('allow');

    const again = await runHook(['claude-code'], npm('npm test', 'S1', 'run them again'), f.env);
    expect(answerOf(again.stdout)).toMatchObject({ decision: 'allow', reason: expect.stringContaining('session') });
    expect(await pendingList(f)).toEqual([]);

    for (const [command, sessionId] of [['npm test -- --update', 'S1'], ['npm test', 'S2']] as const) {
      const asked = runHook(['claude-code'], npm(command, sessionId, 'run the tests'), f.env);
      const [next] = await waitForPending(f);
      expect(next).toMatchObject({ sessionId, args: { command } });
      await f.home.runCli(['deny', String(next?.['id'])], { env: { HOME: f.userHome } });
      expect(answerOf((await asked).stdout).decision).toBe('deny');
    }
  });

  it('R-REM-6 R-POL-6 a --command rule cannot be added for an agent tool that needs a passkey, and the action still files an approval that says so', async () => {
    const f = await setup({ policy: { presence: { 'codex/Bash': 'passkey' } } });
    const added = await runInTerminal(['rules', 'add', '--command', 'npm test', '--json'], { env: { ASSENT_HOME: f.home.home, HOME: f.userHome }, typeCode: true });
    expect(added.exitCode, added.screen).not.toBe(0);
    expect(added.stdout).toContain('policy.presence marks codex/Bash');
    // A passkey tool's project code does not run confined either (R-SH-14): it waits for the person.
    const explained = JSON.parse((await f.home.runCli(['policy', 'explain', 'codex', 'Bash', '--input', '{"command":"npm test"}', '--cwd', f.project, '--json'], { env: { HOME: f.userHome } })).stdout) as { data: { decision: string; confined?: boolean } };
    expect(explained.data.decision).toBe('prompt');
    if (sandboxStatus().available) expect(JSON.stringify(explained.data)).toContain('not confined here (policy.presence marks codex/Bash passkey');
    const call = runHook(['codex'], shellEvent('codex', 'npm test', { cwd: f.project }), f.env);
    const [approval] = await waitForPending(f);
    expect(approval).toMatchObject({ tool: 'Bash', presence: 'passkey' });
    expect((await f.home.runCli(['deny', String(approval?.['id'])], { env: { HOME: f.userHome } })).code).toBe(0);
    expect(answerOf((await call).stdout).decision).toBe('deny');
  });

  it('R-POL-6 (issue 12 item 5) a --command rule added at a terminal with the typed code lets a prompting hook action through, audited with its rule id; --agent codex leaves claude-code asking; the preview and explain name it; revoked, it asks again', async () => {
    // With a sandbox here `npm test` would run confined (R-SH-14); this test is about what a rule lets through.
    const f = await setup({ policy: { commands: { confine: [] } } });
    const cli = (args: string[]) => f.home.runCli(args, { env: { HOME: f.userHome } });
    const askedAndDenied = async (agent: 'claude-code' | 'codex', command: string): Promise<Record<string, unknown>> => {
      const call = runHook([agent], shellEvent(agent, command, { cwd: f.project }), f.env);
      const [approval] = await waitForPending(f);
      const preview = (await cli(['pending'])).stdout;
      expect((await cli(['deny', String(approval?.['id'])])).code).toBe(0);
      expect(answerOf((await call).stdout).decision).toBe('deny');
      return { ...approval, preview };
    };
    await askedAndDenied('codex', 'npm test');
    // The agent cannot add the rule itself: its shell's `assent rules add` is denied by the default policy (R-POL-8)…
    const byAgent = await runHook(['codex'], shellEvent('codex', 'assent rules add --command "npm test" --agent codex', { cwd: f.project }), f.env);
    expect(answerOf(byAgent.stdout)).toMatchObject({ decision: 'deny', reason: expect.stringContaining('"assent *"') });
    // …and run headless (as an agent's shell would), the CLI refuses before asking for a code (R-CLI-2).
    const headless = await cli(['rules', 'add', '--command', 'npm test', '--json']);
    expect(headless.code).toBe(77);
    expect(JSON.parse((await cli(['rules', 'list', '--json'])).stdout)).toMatchObject({ data: [] });

    const added = await runInTerminal(['rules', 'add', '--command', 'npm test', '--agent', 'codex', '--json'], { env: { ASSENT_HOME: f.home.home, HOME: f.userHome }, typeCode: true });
    expect(added.exitCode, added.screen).toBe(0);
    expect(added.screen).toContain('simple commands matching "npm test" word for word');
    expect(added.screen).toContain('for codex only;');
    const rule = (JSON.parse(added.stdout) as { data: { id: string; command: string; agent: string } }).data;
    expect(rule).toMatchObject({ command: 'npm test', agent: 'codex' });

    const allowed = await runHook(['codex'], shellEvent('codex', 'npm test', { cwd: f.project }), f.env);
    expect(allowed.code, allowed.stderr).toBe(0);
    // Codex's allow is exit 0 with nothing printed (issue 20); the rule that allowed it is in the audit line below.
    expect(allowed.stdout).toBe('');
    expect(await pendingList(f)).toEqual([]);
    expect(await waitForAudit(f.home, (r) => r['ruleId'] === rule.id)).toMatchObject({ agent: 'codex', tool: 'Bash', channel: 'rule', outcome: 'started' });

    await askedAndDenied('claude-code', 'npm test');
    const compound = await askedAndDenied('codex', 'npm test; rm -rf build');
    expect(((compound['caller'] as Record<string, unknown>)['policy'] as { parts: unknown[] }).parts).toEqual([
      expect.objectContaining({ text: 'npm test', decision: 'allow', ruleId: rule.id, rule: `rule ${rule.id} --command "npm test" --agent codex` }),
      expect.objectContaining({ text: 'rm -rf build', decision: 'prompt', rule: 'policy.commands.default' }),
    ]);
    expect(compound['preview']).toContain(`by rule ${rule.id} --command "npm test" --agent codex`);

    const explained = JSON.parse((await cli(['policy', 'explain', 'codex', 'Bash', '--input', '{"command":"npm test"}', '--cwd', f.project, '--json'])).stdout) as {
      data: { decision: string; parts: Record<string, unknown>[] };
    };
    expect(explained.data).toMatchObject({ decision: 'allow', parts: [{ kind: 'command', text: 'npm test', decision: 'allow', ruleId: rule.id }] });
    expect((await cli(['rules', 'list'])).stdout).toContain(`${rule.id}  --command "npm test" --agent codex`);

    expect((await cli(['rules', 'revoke', rule.id])).code).toBe(0);
    await askedAndDenied('codex', 'npm test');
  });
});
