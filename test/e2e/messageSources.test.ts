// Issue 20 item 8: messages name their source — a denial by a built-in default
// says so instead of pointing into config.json; Ctrl+C at a typed-code prompt
// says "cancelled"; watch says an approval "expired"; daemon status says why
// desktop notifications fail; doctor gives line and column for bad JSON.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../helpers/hook.js';
import { PtySession } from '../helpers/pty.js';

const cleanups = cleanupsAfterEach();

function home(config: Record<string, unknown>): TempHome {
  const made = makeTempHome();
  cleanups.push(() => made.cleanup());
  mkdirSync(made.home, { recursive: true, mode: 0o700 });
  writeFileSync(made.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  return made;
}

function pty(state: TempHome, args: string[], env: Record<string, string> = {}): PtySession {
  const session = new PtySession(args, { outFile: join(state.home, `${args.join('-')}.out`), env: { ASSENT_HOME: state.home, ...env } });
  cleanups.push(() => session.kill());
  return session;
}

describe('issue 20: messages name their source', () => {
  it('a denial by a built-in default rule says "built-in default (`assent init` writes it out)", not a key in config.json; a rule from the file still names the file', async () => {
    const builtIn = home({});
    await builtIn.startDaemon();
    const denied = answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'cat ~/.ssh/id_rsa'), builtIn.env)).stdout);
    expect(denied.decision).toBe('deny');
    expect(denied.reason).toContain('The policy key policy.paths.rules.0 "~/.ssh/**", a built-in default (`assent init` writes it out), says "deny"');
    expect(denied.reason).not.toContain(builtIn.paths.config);
    const fromFile = home({ policy: { paths: { rules: [{ glob: '~/.ssh/**', decision: 'deny' }] } } });
    await fromFile.startDaemon();
    const named = answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'cat ~/.ssh/id_rsa'), fromFile.env)).stdout);
    expect(named.reason).toContain(`policy.paths.rules.0 "~/.ssh/**" in ${fromFile.paths.config} says "deny"`);
  });

  it('Ctrl+C at the typed code of `assent config reload` says "cancelled", and the policy stays', async () => {
    const state = home({});
    await state.startDaemon();
    writeFileSync(state.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { default: 'deny' } }), { mode: 0o600 });
    const session = pty(state, ['config', 'reload']);
    await session.waitFor(/Type [a-z]{4} to apply/);
    session.type('\u0003');
    await session.waitFor(/cancelled; the daemon keeps its current policy/);
    expect(session.screen).not.toContain('the code did not match');
  });

  it('`assent watch` says an approval nobody decided "expired", not "was expired elsewhere"', async () => {
    const state = home({ hooks: { timeoutSeconds: 1 }, policy: { commands: { default: 'prompt', rules: [] } } });
    await state.startDaemon();
    const watch = pty(state, ['watch']);
    await watch.waitFor(/Waiting for requests/);
    const waiting = runHook(['claude-code'], shellEvent('claude-code', 'make deploy'), state.env);
    await watch.waitFor(/[a-z]{5} \(claude\/Bash\) expired; removed\./, 15_000);
    expect(watch.screen).not.toContain('elsewhere');
    expect(answerOf((await waiting).stdout).reason).toContain('consent_timeout');
  });

  it('daemon status carries why desktop notifications fail (notify-send not installed)', async () => {
    const state = home({ notifications: true, policy: { commands: { default: 'prompt', rules: [] } } });
    await state.startDaemon({ PATH: join(state.home, 'no-such-bin') });
    const waiting = runHook(['claude-code'], shellEvent('claude-code', 'make deploy'), state.env);
    const human = async (): Promise<string> => (await state.runCli(['daemon', 'status'])).stdout;
    await expect.poll(human, { timeout: 15_000 }).toMatch(/lastFailure +notify-send is not installed \(not found on PATH\)/);
    const listed = (JSON.parse((await state.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data;
    expect((await state.runCli(['deny', listed[0]?.id ?? ''])).code).toBe(0);
    await waiting;
  });

  it('doctor reports a settings file that is not JSON by line and column, as `config check` does', async () => {
    const state = home({});
    const agentHome = join(state.home, '..', 'agent-home');
    mkdirSync(join(agentHome, '.claude'), { recursive: true });
    writeFileSync(join(agentHome, '.claude', 'settings.json'), '{\n  "hooks": {,\n}\n');
    const doctor = await state.runCli(['doctor'], { env: { HOME: agentHome, CODEX_HOME: join(agentHome, '.codex') } });
    expect(doctor.stdout).toMatch(/settings\.json is not valid JSON \(.*\(line 2, column 13\)\)/);
    expect(doctor.stdout).not.toMatch(/at position \d+\)/);
  });
});
