// `assent policy explain` with the built binary (R-POL-9): each simple command
// with the rule that decided it, the --json shape, the daemon's pinned policy
// when one runs and config.json when none does; nothing is run or filed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function home(config?: Record<string, unknown>): TempHome {
  const h = makeTempHome();
  cleanups.push(() => h.cleanup());
  if (config !== undefined) {
    mkdirSync(h.home, { recursive: true, mode: 0o700 });
    writeFileSync(h.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  }
  return h;
}

const INPUT = JSON.stringify({ command: 'git status && rm -rf build', description: 'x' });

describe('assent policy explain (R-POL-9)', () => {
  it('R-POL-9 without a daemon: `git status && rm -rf build` gives two parts with their decisions and rules, from config.json; --json has {decision, parts}', async () => {
    const h = home();
    const text = await h.runCli(['policy', 'explain', 'claude', 'Bash', '--input', INPUT, '--cwd', '/tmp']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^decision: prompt {2}\(config\.json/);
    expect(text.stdout).toMatch(/allow {2}command git status\n {9}decided by policy\.commands\.rules\.\d+ "git \*" \(model git status\)/);
    expect(text.stdout).toMatch(/prompt command rm -rf build\n {9}decided by policy\.commands\.default/);
    const json = await h.runCli(['policy', 'explain', 'claude-code', 'Bash', '--input', INPUT, '--cwd', '/tmp', '--json']);
    const body = JSON.parse(json.stdout) as { ok: boolean; data: { decision: string; parts: Record<string, unknown>[] } };
    expect(body.ok).toBe(true);
    expect(body.data.decision).toBe('prompt');
    expect(body.data.parts).toEqual([
      { kind: 'command', text: 'git status', decision: 'allow', rule: expect.stringMatching(/^policy\.commands\.rules\.\d+ "git \*" \(model git status\)$/) },
      { kind: 'command', text: 'rm -rf build', decision: 'prompt', rule: 'policy.commands.default' },
    ]);
    const reason = JSON.parse((await h.runCli(['policy', 'explain', 'codex', 'Bash', '--input', '{"command":"eval \\"$x\\""}', '--json'])).stdout) as { data: { parts: { reason?: string }[] } };
    expect(reason.data.parts[0]?.reason).toMatch(/eval is not a literal/);
  });

  it('R-POL-9 with a running daemon: its pinned policy answers (not an edited config.json), and nothing is filed or audited', async () => {
    const h = home({ policy: { commands: { default: 'deny', rules: [{ match: 'git status', decision: 'allow' }] } } });
    await h.startDaemon();
    // Edited after the daemon pinned it: explain must still answer with the pinned revision.
    writeFileSync(h.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
    const json = await h.runCli(['policy', 'explain', 'claude', 'Bash', '--input', INPUT, '--cwd', '/tmp', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout) as { data: { decision: string; parts: Record<string, unknown>[] }; meta: Record<string, unknown> };
    expect(body.meta['source']).toBe('daemon');
    expect(body.data).toEqual({
      decision: 'deny',
      parts: [
        { kind: 'command', text: 'git status', decision: 'allow', rule: 'policy.commands.rules.0 "git status"' },
        { kind: 'command', text: 'rm -rf build', decision: 'deny', rule: 'policy.commands.default' },
      ],
    });
    const other = JSON.parse((await h.runCli(['policy', 'explain', 'gemini', 'web_fetch', '--input', '{"url":"HTTPS://Example.COM:443/a"}', '--json'])).stdout) as { data: unknown };
    expect(other.data).toEqual({ decision: 'prompt', parts: [{ kind: 'url', text: 'https://example.com/a', decision: 'prompt', rule: 'policy.urls.default' }] });
    const pending = JSON.parse((await h.runCli(['pending', '--json'])).stdout) as { data: unknown[] };
    expect(pending.data).toEqual([]);
  });

  it('R-POL-9 bad input says what to give instead (exit 64-class invalid_params)', async () => {
    const h = home();
    const bad = await h.runCli(['policy', 'explain', 'claude', 'Bash', '--input', '[1]']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--input must be a JSON object');
    const agent = await h.runCli(['policy', 'explain', 'vim', 'Bash', '--input', '{}']);
    expect(agent.stderr).toContain('unknown agent "vim"');
  });
});
