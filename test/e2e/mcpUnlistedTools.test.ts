// A `policy.tools` key naming a tool the upstream does not list never decides
// anything (hardening 5, R-CFG-1's spirit: a typo must not silently loosen
// policy). The gateway says so on stderr at start, naming the key and the
// tools the server does list, and `assent daemon status` shows it.
import { afterEach, describe, expect, it } from 'vitest';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('policy.tools keys the upstream does not list (hardening 5)', () => {
  it('are logged at gateway start with the tools the server lists, and listed by `assent daemon status`', async () => {
    const { home } = await startFsStack(cleanups, { policy: { default: 'allow', tools: { 'fs/wrte_file': 'deny', 'fs/read_text_file': 'allow' } } });
    const { stderr } = await connectGateway(cleanups, home);
    // No tools/list from the client: the gateway looks on its own once the client is initialized.
    await expect.poll(() => stderr(), { timeout: 10_000 }).toContain('policy.tools.fs/wrte_file');
    const warning = stderr()
      .split('\n')
      .find((line) => line.includes('policy.tools.fs/wrte_file')) ?? '';
    expect(warning).toContain('does not list');
    expect(warning).toContain('write_file');
    expect(warning).toContain('read_text_file');
    expect(stderr()).not.toContain('policy.tools.fs/read_text_file');

    await expect
      .poll(async () => {
        const status = await home.runCli(['daemon', 'status', '--json']);
        return (JSON.parse(status.stdout) as { data: { approvals: { policyToolsNotListed?: { key: string; listed: string[] }[] } } }).data.approvals.policyToolsNotListed;
      }, { timeout: 5000 })
      .toEqual([expect.objectContaining({ key: 'fs/wrte_file', server: 'fs', listed: expect.arrayContaining(['write_file']), sessions: 1 })]);
    const human = await home.runCli(['daemon', 'status']);
    expect(human.stdout).toContain('policyToolsNotListed');
    expect(human.stdout).toContain('fs/wrte_file');
  });
});

describe('tools no upstream lists never reach a person (hardening 19.5)', () => {
  it('R-MCP-3 a tools/call for fs__write_file (one upstream, which lists write_file) is refused -32602 at once: nothing pending, nothing audited, nothing written', async () => {
    const { home, dir } = await startFsStack(cleanups, { policy: { default: 'prompt', consentTimeoutSeconds: 3 } });
    const { client } = await connectGateway(cleanups, home);
    const started = performance.now();
    await expect(client.callTool({ name: 'fs__write_file', arguments: { path: `${dir}/x`, content: 'x' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('does not list it'),
    });
    expect(performance.now() - started).toBeLessThan(2500);
    const pending = await home.runCli(['pending', '--json']);
    expect((JSON.parse(pending.stdout) as { data: unknown[] }).data).toEqual([]);
    const audit = await home.runCli(['audit', '--json']);
    expect(audit.stdout).not.toContain('fs__write_file');
  });
});
