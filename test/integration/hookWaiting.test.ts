// A hook that waits for a person says so where the agent shows it (issue 20,
// item 2): one stderr line, written while it waits, naming the approval id and
// where to decide. Codex's allow is exit 0 with nothing on stdout (item 1).
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { makeTempHome, type TempHome } from '../helpers/daemon.js';
import { HOOK_ENTRY, shellEvent } from '../helpers/hook.js';

const cleanups = cleanupsAfterEach();

async function setup(): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { commands: { default: 'prompt', rules: [] } } }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

describe('issue 20: a waiting hook names its approval', () => {
  for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
    it(`${agent}: while the call waits, stderr already holds one line with the approval id, \`assent approve ID\`, watch and the web page`, async () => {
      const home = await setup();
      const child = spawn(process.execPath, [HOOK_ENTRY, agent], { env: home.env, stdio: ['pipe', 'pipe', 'pipe'] });
      cleanups.push(() => child.kill('SIGKILL'));
      let stderr = '';
      let stdout = '';
      child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.end(JSON.stringify(shellEvent(agent, 'make deploy')));
      await expect.poll(() => stderr, { timeout: 15_000 }).toMatch(/waits for approval ([a-z]{5})/);
      const id = /waits for approval ([a-z]{5})/.exec(stderr)?.[1] ?? '';
      const listed = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: { id: string }[] }).data.map((a) => a.id);
      expect(listed).toEqual([id]);
      expect(stderr.trim().split('\n')).toHaveLength(1);
      expect(stderr).toContain(`\`assent approve ${id}\``);
      expect(stderr).toContain('`assent watch`');
      expect(stderr).toContain('web page');
      expect((await home.runCli(['deny', id])).code).toBe(0);
      expect(await closed).toBe(0);
      expect(stdout).toContain('consent_denied');
    }, 30_000);
  }
});
