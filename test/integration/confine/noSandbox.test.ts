// R-SH-14 "no sandbox, no allow": a daemon whose PATH has no bwrap confines
// nothing. `npm test` for Claude Code then asks a person (policy explain says
// why, and the hook files an approval rather than answering allow), and both
// `assent doctor` and `assent daemon status` name the reason. The same daemon
// with bwrap on its PATH says confined runs are on.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxStatus } from '../../../src/exec/confine/sandboxRun.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';

const cleanups = cleanupsAfterEach();

/** A bin dir holding every program of the system's PATH but bwrap. */
function pathWithoutBwrap(base: string): string {
  const bin = join(base, 'bin');
  mkdirSync(bin);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name === 'bwrap') continue;
      try {
        symlinkSync(join(dir, name), join(bin, name));
      } catch {
        // the first dir's program wins, as on PATH
      }
    }
  }
  return bin;
}

async function daemonWith(path: string, base: string): Promise<{ home: TempHome; project: string; env: NodeJS.ProcessEnv }> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' } }), { mode: 0o600 });
  const project = join(base, `proj-${String(Math.random()).slice(2, 8)}`);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'p', scripts: { test: 'node t.js' } }));
  const env = { ...home.env, PATH: path };
  await home.startDaemon({ PATH: path });
  return { home, project, env };
}

interface Explained {
  decision: string;
  confined?: boolean;
  parts: unknown[];
}

describe('R-SH-14 no sandbox, no allow', () => {
  it('without bwrap on the daemon\'s PATH, npm test asks a person; explain, doctor and daemon status name the reason', async () => {
    const base = mkdtempSync(join(tmpdir(), 'assent-nosandbox-'));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const path = pathWithoutBwrap(base);
    expect(sandboxStatus({ env: { PATH: path } })).toMatchObject({ available: false, reason: expect.stringContaining('bwrap (bubblewrap) is not on PATH') });
    const { home, project, env } = await daemonWith(path, base);

    const explained = await home.runCli(['policy', 'explain', 'claude-code', 'Bash', '--input', JSON.stringify({ command: 'npm test' }), '--cwd', project, '--json'], { env });
    expect(explained.code, explained.stderr).toBe(0);
    const data = (JSON.parse(explained.stdout) as { data: Explained }).data;
    expect(data.decision).toBe('prompt');
    expect(data.confined).not.toBe(true);
    expect(JSON.stringify(data.parts)).toMatch(/not confined here \(bwrap \(bubblewrap\) is not on PATH/);

    // The hook files an approval instead of answering allow; a deny closes it.
    const hook = runHook(['claude-code'], shellEvent('claude-code', 'npm test', { cwd: project }), env);
    let pending: { id: string }[] = [];
    await expect
      .poll(async () => {
        pending = (JSON.parse((await home.runCli(['pending', '--json'], { env })).stdout) as { data: { id: string }[] }).data;
        return pending.length;
      }, { timeout: 20_000, interval: 100 })
      .toBe(1);
    expect((await home.runCli(['deny', pending[0]?.id ?? '', '--json'], { env })).code).toBe(0);
    const answered = await hook;
    expect(answerOf(answered.stdout).decision).toBe('deny');
    expect(answered.stdout).not.toContain('updatedInput');

    const status = await home.runCli(['daemon', 'status', '--json'], { env });
    const confinement = (JSON.parse(status.stdout) as { data: { confinement: Record<string, unknown> } }).data.confinement;
    expect(confinement).toMatchObject({ available: false, reason: expect.stringContaining('bwrap (bubblewrap) is not on PATH'), effect: expect.stringContaining('ask a person') });
    const human = await home.runCli(['daemon', 'status'], { env });
    expect(human.stdout).toMatch(/confinement[\s\S]*not on PATH/);

    const doctor = await home.runCli(['doctor', '--json'], { env: { ...env, HOME: base } });
    const doctorData = (JSON.parse(doctor.stdout) as { data: { confinement: Record<string, unknown> } }).data;
    expect(doctorData.confinement).toMatchObject({ available: false, reason: expect.stringContaining('install bubblewrap') });
    const doctorText = await home.runCli(['doctor'], { env: { ...env, HOME: base } });
    expect(doctorText.stdout).toMatch(/Confined runs \(R-SH-14\): off, so commands of policy.commands.confine ask a person instead of running confined: bwrap \(bubblewrap\) is not on PATH/);
  }, 60_000);

  it.skipIf(!sandboxStatus().available)('with bwrap on its PATH, daemon status and doctor say confined runs are on and for which agents', async () => {
    const base = mkdtempSync(join(tmpdir(), 'assent-sandbox-on-'));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const { home, env } = await daemonWith(process.env['PATH'] ?? '/usr/bin:/bin', base);
    const status = await home.runCli(['daemon', 'status', '--json'], { env });
    expect((JSON.parse(status.stdout) as { data: { confinement: unknown } }).data.confinement).toMatchObject({ available: true, agents: ['claude-code', 'codex', 'gemini', 'opencode', 'kilo', 'copilot', 'droid', 'auggie'] });
    const doctorText = await home.runCli(['doctor'], { env: { ...env, HOME: base } });
    expect(doctorText.stdout).toMatch(/Confined runs \(R-SH-14\): on, bwrap \d+\.\d+\.\d+ at .*bwrap; project code runs in the sandbox without a person for Claude Code, Codex, Gemini CLI, OpenCode, Kilo Code, Copilot CLI, Factory Droid, Auggie\./);
  }, 60_000);
});
