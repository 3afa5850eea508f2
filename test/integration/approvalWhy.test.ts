// What an approval says about itself (R-REM-5, issue 13 item 5): the policy key
// that sent it to a person and its risk — level, reasons, flags (R-POL-10) — set
// by the daemon (a client's own `caller.policy` or `caller.risk` is overwritten),
// shown by every view and not written to the audit log.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { auditLines, makeTempHome, waitForAudit, type TempHome } from '../helpers/daemon.js';
import { runHook, shellEvent } from '../helpers/hook.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

async function setup(): Promise<{ home: TempHome; client: DaemonClient }> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'allow', destructive: 'prompt', tools: { 'fs/write_file': 'prompt' } } }), { mode: 0o600 });
  await home.startDaemon();
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return { home, client };
}

interface Listed {
  id: string;
  sessionId: string;
  tool: string;
  caller: Record<string, unknown>;
}

async function pending(home: TempHome, count: number): Promise<Listed[]> {
  for (let i = 0; i < 200; i += 1) {
    const listed = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: Listed[] }).data;
    if (listed.length >= count) return listed;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`fewer than ${count} pending approvals`);
}

describe('R-REM-5 why an approval asks and how risky it is (remote 5)', () => {
  it('R-REM-5 R-POL-10 a gateway call names the policy key, a tool that writes is elevated and one its server calls destructive is high; a forged caller.policy or caller.risk is replaced; the audit keeps the caller as given', async () => {
    const { home, client } = await setup();
    const forged = { client: 'e2e', policy: { decision: 'allow', key: 'nothing to see' }, risk: [] };
    const write = client.call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/x' }, annotations: { destructiveHint: false }, caller: forged }).catch(() => undefined);
    const remove = client
      .call('calls.authorize', { sessionId: 's', server: 'fs', tool: 'delete_file', args: { path: '/y' }, annotations: { destructiveHint: true }, caller: { client: 'e2e' } })
      .catch(() => undefined);
    const listed = await pending(home, 2);
    const byTool = new Map(listed.map((approval) => [approval.tool, approval]));
    expect(byTool.get('write_file')?.caller).toEqual({ client: 'e2e', policy: { decision: 'prompt', key: 'policy.tools.fs/write_file' }, risk: { level: 'elevated', reasons: ['not read-only (MCP annotations)'], flags: ['not read-only'] } });
    expect(byTool.get('delete_file')?.caller).toEqual({
      client: 'e2e',
      policy: { decision: 'prompt', key: 'policy.destructive' },
      risk: { level: 'high', reasons: ['destructive (destructiveHint)'], flags: ['destructive'] },
    });
    for (const approval of listed) await home.runCli(['deny', approval.id]);
    await Promise.all([write, remove]);
    await waitForAudit(home, (record) => record['tool'] === 'delete_file');
    const audited = auditLines(home).filter((record) => record['server'] === 'fs');
    expect(audited.length).toBeGreaterThanOrEqual(2);
    expect(audited.find((record) => record['tool'] === 'delete_file')?.['caller']).toEqual({ client: 'e2e' });
    expect(audited.find((record) => record['tool'] === 'write_file')?.['caller']).toEqual(forged);
  });

  it('R-REM-5 R-POL-10 an agent shell action carries its risk: level, reasons, and the flags of the risk line', async () => {
    const { home } = await setup();
    const waiting = runHook(['claude-code'], shellEvent('claude-code', 'curl -s https://example.com/x > /etc/x.sh', { session_id: 'why-session', cwd: '/work/project' }), home.env);
    const [approval] = await pending(home, 1);
    expect(approval?.caller['risk']).toEqual({ level: 'elevated', reasons: ['write outside cwd', 'network (curl)', 'shell'], flags: ['shell', 'write outside cwd', 'network'] });
    expect((approval?.caller['policy'] as { key: string }).key).toBe('policy.commands.default');
    await home.runCli(['deny', approval?.id ?? '']);
    await waiting;
  });

  it('R-POL-10 `sudo apt install x` and `git push --force` are prompts at risk high, shown level first by `assent pending` and in `--json`', async () => {
    const { home } = await setup();
    const sudo = runHook(['claude-code'], shellEvent('claude-code', 'sudo apt install x', { session_id: 'risk-sudo', cwd: '/work/project' }), home.env);
    const push = runHook(['claude-code'], shellEvent('claude-code', 'git push --force', { session_id: 'risk-push', cwd: '/work/project' }), home.env);
    const listed = await pending(home, 2);
    const bySession = new Map(listed.map((approval) => [approval.sessionId, approval]));
    expect(bySession.get('risk-sudo')?.caller['risk']).toMatchObject({ level: 'high', reasons: ['privilege escalation (sudo)', 'shell'] });
    expect(bySession.get('risk-push')?.caller['risk']).toMatchObject({ level: 'high', reasons: ['force push (git push --force)', 'network (git push)', 'shell'] });
    const human = (await home.runCli(['pending'])).stdout;
    const previews = human.split(/\n(?=Approval )/);
    const sudoPreview = previews.find((text) => text.includes('risk-sudo')) ?? '';
    const pushPreview = previews.find((text) => text.includes('risk-push')) ?? '';
    // The risk is the first line under the heading: read before the command.
    expect(sudoPreview.split('\n')[1]).toBe('  risk      high: privilege escalation (sudo), shell');
    expect(pushPreview.split('\n')[1]).toBe('  risk      high: force push (git push --force), network (git push), shell');
    for (const approval of listed) await home.runCli(['deny', approval.id]);
    await Promise.all([sudo, push]);
    // The audit log keeps the risk level only (R-AUD-4 exports it); like the parts, its reasons quote the command and stay out.
    await waitForAudit(home, (record) => record['sessionId'] === 'risk-push' && record['outcome'] === 'consent_denied');
    // Both denies' lines: each is written in an audit batch of its own, which may follow the other's.
    await expect.poll(() => auditLines(home).map((record) => record['risk'])).toEqual(['high', 'high']);
    const audited = JSON.stringify(auditLines(home));
    for (const text of ['privilege escalation', 'force push', 'apt install', 'reasons']) expect(audited).not.toContain(text);
  });
});
