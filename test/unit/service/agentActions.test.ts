// The daemon side of agent hooks: R-HOOK-3 (one service, prompt with every
// channel, hooks.timeoutSeconds), R-HOOK-5 (gateway tools pass), R-HOOK-6 and
// R-HOOK-10 (after-events matched, two audit lines), the doctor's canary.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentAction } from '../../../src/core/agent/agentAction.js';
import { FakeClock } from '../../../src/core/base/clock.js';
import type { DaemonContext } from '../../../src/heads/daemon/daemonMain.js';
import { ensureStateDir, resolveStatePaths, type StatePaths } from '../../../src/state/statePaths.js';
import { AgentActionService, ANSWER_BY_SLACK_MS, NATIVE_CLAIM_MS } from '../../../src/service/agentActions.js';
import { EXPIRY_STORE_WAIT_MS } from '../../../src/service/approvalQueue.js';
import type { Timers } from '../../../src/service/approvalService.js';
import { createApprovalRuntime, type ApprovalRuntime } from '../../../src/heads/daemon/daemonRuntime.js';
import { silentLogger } from '../../../src/service/logger.js';
import { AgentJudge } from '../../../src/shell/agentJudge.js';
import { loadShellParser } from '../../../src/shell/shellParser.js';
import { formatCef, formatSyslog, parseCef } from '../../../src/core/audit/auditExportFormats.js';
import { toExportRecord } from '../../../src/core/audit/auditExportRecord.js';
import { otlpAttributesOf } from '../../../src/channels/auditSinks/otlpSink.js';

/** Timers that fire only when the test moves the clock. */
class ManualTimers implements Timers {
  private next = 1;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  constructor(private readonly clock: FakeClock) {}
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.due.set(id, { at: this.clock.now() + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }
  advance(ms: number): void {
    this.clock.advance(ms);
    for (const [id, timer] of [...this.due]) {
      if (timer.at <= this.clock.now()) {
        this.due.delete(id);
        timer.fn();
      }
    }
  }
}

interface Fixture {
  runtime: ApprovalRuntime;
  paths: StatePaths;
  clock: FakeClock;
  timers: ManualTimers;
  audit(): Record<string, unknown>[];
}

const cleanups: (() => Promise<void> | void)[] = [];
// The daemon loads the bash grammar at its first shell action; here it is loaded once so each test's first shell action files at once.
beforeAll(async () => {
  await loadShellParser();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function fixture(config: Record<string, unknown>): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'as-agents-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const paths = resolveStatePaths({ ASSENT_HOME: join(root, 'h') });
  ensureStateDir(paths);
  writeFileSync(paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  const hooks: (() => Promise<void> | void)[] = [];
  cleanups.push(async () => {
    for (const hook of hooks) await hook();
  });
  const ctx: DaemonContext = {
    paths,
    logger: silentLogger,
    startedAt: 0,
    principal: 'owner:test',
    onShutdown: (hook) => hooks.push(hook),
    requestShutdown: () => undefined,
    status: {},
    connections: () => 0,
  };
  const clock = new FakeClock();
  const timers = new ManualTimers(clock);
  const runtime = createApprovalRuntime(ctx, { clock, timers });
  const audit = (): Record<string, unknown>[] =>
    readdirSync(paths.auditDir)
      .filter((name) => name.endsWith('.jsonl'))
      .flatMap((name) => readFileSync(join(paths.auditDir, name), 'utf8').split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { runtime, paths, clock, timers, audit };
}

/** The pending list once `count` approvals are filed: filing is durable first, so it lands a moment after authorize is called. */
async function pendingAfterFiling(f: Fixture, count = 1): Promise<Awaited<ReturnType<ApprovalRuntime['service']['list']>>> {
  for (let i = 0; i < 200; i += 1) {
    const list = await f.runtime.service.list();
    if (list.length >= count) return list;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return f.runtime.service.list();
}

const bash = (command: string, extra: Partial<AgentAction> = {}): AgentAction => ({
  agent: 'claude-code',
  sessionId: 'sess-1',
  cwd: '/home/me/secret-project',
  tool: 'Bash',
  kind: 'shell',
  input: { command },
  toolUseId: 'toolu_1',
  ...extra,
});

describe('agent actions through the approval service (R-HOOK-3)', () => {
  it('R-HOOK-10 an allowed action writes one started line (agent, server = alias, tool, argsSha256, callId) and its after-event a second one with ok and durationMs; no command or cwd in either', async () => {
    const f = fixture({ policy: { tools: { 'claude/Bash': 'allow' } } });
    const decision = await f.runtime.agents.authorize(bash('cat /etc/SECRET-PATH'));
    expect(decision).toMatchObject({ decision: 'allow', reason: 'policy' });
    const callId = decision.decision === 'allow' ? decision.callId : undefined;
    expect(await f.runtime.service.list()).toEqual([]);
    f.clock.advance(40);
    expect(f.runtime.agents.finish({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'cat /etc/SECRET-PATH' }, toolUseId: 'toolu_1', outcome: 'ok', durationMs: 31 })).toEqual({
      recorded: true,
      callId,
    });
    await expect.poll(() => f.audit().length).toBe(2);
    const [started, ended] = f.audit() as [Record<string, unknown>, Record<string, unknown>];
    expect(started).toMatchObject({ agent: 'claude-code', server: 'claude', tool: 'Bash', outcome: 'started', callId, waitedForConsentMs: 0, sessionId: 'sess-1' });
    expect(started['argsSha256']).toMatch(/^v1:sha256:[0-9a-f]{64}$/);
    expect(ended).toMatchObject({ agent: 'claude-code', server: 'claude', tool: 'Bash', outcome: 'ok', callId, durationMs: 31, argsSha256: started['argsSha256'] });
    const text = readdirSync(f.paths.auditDir).map((name) => readFileSync(join(f.paths.auditDir, name), 'utf8')).join('');
    expect(text).not.toContain('SECRET-PATH');
    expect(text).not.toContain('secret-project');
    // A second after-event for the same call finds nothing open.
    expect(f.runtime.agents.finish({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'cat /etc/SECRET-PATH' }, toolUseId: 'toolu_1', outcome: 'ok' }).recorded).toBe(false);
  });

  it('R-HOOK-6 Gemini sends no tool-use id: the after-event ends the oldest open call of that session, tool and exact input', async () => {
    const f = fixture({ policy: { tools: { 'gemini/run_shell_command': 'allow' } } });
    const shell = (command: string): AgentAction => ({ agent: 'gemini', sessionId: 'g', cwd: '/w', tool: 'run_shell_command', kind: 'shell', input: { command } });
    const first = await f.runtime.agents.authorize(shell('echo a'));
    const second = await f.runtime.agents.authorize(shell('echo a'));
    await f.runtime.agents.authorize(shell('echo b'));
    const end = { agent: 'gemini' as const, sessionId: 'g', tool: 'run_shell_command', input: { command: 'echo a' }, outcome: 'error' as const };
    expect(f.runtime.agents.finish(end)).toEqual({ recorded: true, callId: first.decision === 'allow' ? first.callId : '' });
    expect(f.runtime.agents.finish(end)).toEqual({ recorded: true, callId: second.decision === 'allow' ? second.callId : '' });
    expect(f.runtime.agents.finish(end).recorded).toBe(false);
    expect(f.runtime.agents.finish({ ...end, sessionId: 'other', input: { command: 'echo b' } }).recorded).toBe(false);
    await expect.poll(() => f.audit().filter((line) => line['outcome'] === 'error').length).toBe(2);
  });

  it('R-POL-6 a policy deny is an answer naming the key that decided, audited as denied with agent, never filed', async () => {
    const f = fixture({ policy: { tools: { 'codex/Bash': 'deny' } } });
    const decision = await f.runtime.agents.authorize(bash('rm -rf /', { agent: 'codex' }));
    expect(decision).toMatchObject({ decision: 'deny', reason: 'policy' });
    expect(decision.message).toMatch(/^assent refused codex\/Bash: policy\. The policy key policy\.tools\.codex\/Bash in .*config\.json says "deny"/);
    expect(await f.runtime.service.list()).toEqual([]);
    await expect.poll(() => f.audit()).toEqual([expect.objectContaining({ agent: 'codex', server: 'codex', tool: 'Bash', outcome: 'denied', deniedReason: 'policy' })]);
  });

  it('R-TEAM-7 a deadline holds when the store never answers the expiry (a database going away mid-query): the waiting call is told consent_timeout EXPIRY_STORE_WAIT_MS later', async () => {
    const f = fixture({ hooks: { timeoutSeconds: 2 } });
    const decision = f.runtime.agents.authorize(bash('make deploy'));
    const [pending] = await pendingAfterFiling(f);
    // From here on the store takes the expiry and never answers.
    f.runtime.store.resolveApproval = () => new Promise<boolean>(() => undefined);
    let answered = false;
    void decision.then(() => (answered = true));
    f.timers.advance(2000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    f.timers.advance(EXPIRY_STORE_WAIT_MS);
    expect(await decision).toMatchObject({ decision: 'deny', reason: 'consent_timeout', approvalId: pending?.id });
  });

  it('R-HOOK-3 R-HOOK-4 prompt files one approval (agent, tool, cwd, exact input) expiring after hooks.timeoutSeconds, not consentTimeoutSeconds; unanswered it ends as consent_timeout', async () => {
    const f = fixture({ hooks: { timeoutSeconds: 2 }, policy: { consentTimeoutSeconds: 900 } });
    const filed: { id: string; expiresAt: number }[] = [];
    const decision = f.runtime.agents.authorize(bash('make deploy'), { onApprovalFiled: (approval) => filed.push(approval) });
    const [pending] = await pendingAfterFiling(f);
    expect(pending).toMatchObject({
      server: 'claude',
      tool: 'Bash',
      args: { command: 'make deploy' },
      caller: { head: 'hook', agent: 'claude-code', cwd: '/home/me/secret-project', kind: 'shell', toolUseId: 'toolu_1' },
      sessionId: 'sess-1',
    });
    expect((pending?.expiresAt ?? 0) - (pending?.requestedAt ?? 0)).toBe(2000);
    expect(filed).toEqual([expect.objectContaining({ id: pending?.id, expiresAt: pending?.expiresAt })]);
    f.timers.advance(2000);
    const answer = await decision;
    expect(answer).toMatchObject({ decision: 'deny', reason: 'consent_timeout', approvalId: pending?.id });
    expect(answer.message).toContain('hooks.timeoutSeconds (2 s)');
    await expect.poll(() => f.audit()).toEqual([expect.objectContaining({ agent: 'claude-code', outcome: 'consent_timeout', approvalId: pending?.id })]);
  });

  it('R-HOOK-3 the first resolver wins: an approval lets exactly this call run, channel and waitedForConsentMs recorded on its started line', async () => {
    const f = fixture({});
    const decision = f.runtime.agents.authorize(bash('make deploy'));
    const [pending] = await pendingAfterFiling(f);
    f.clock.advance(1500);
    await f.runtime.service.decide({ id: pending?.id ?? '', behavior: 'allow', channel: 'web' });
    await expect(f.runtime.service.decide({ id: pending?.id ?? '', behavior: 'deny', channel: 'cli' })).rejects.toThrow(/already approved/);
    expect(await decision).toMatchObject({ decision: 'allow', channel: 'web', approvalId: pending?.id, waitedForConsentMs: 1500 });
    await expect.poll(() => f.audit()).toEqual([expect.objectContaining({ outcome: 'started', channel: 'web', approvalId: pending?.id, waitedForConsentMs: 1500 })]);
  });

  it('R-HOOK-2 the approval is bound to the exact input: one byte more is another approval; a session grant covers only the identical input', async () => {
    const f = fixture({});
    const first = f.runtime.agents.authorize(bash('make deploy'));
    const second = f.runtime.agents.authorize(bash('make deploy '));
    const pending = await pendingAfterFiling(f, 2);
    expect(pending).toHaveLength(2);
    expect(pending[0]?.argsSha256).not.toBe(pending[1]?.argsSha256);
    await f.runtime.service.decide({ id: pending[0]?.id ?? '', behavior: 'allow', scope: 'session', channel: 'cli' });
    await f.runtime.service.decide({ id: pending[1]?.id ?? '', behavior: 'deny', channel: 'cli' });
    expect(await first).toMatchObject({ decision: 'allow', channel: 'cli' });
    expect(await second).toMatchObject({ decision: 'deny', reason: 'consent_denied' });
    expect(await f.runtime.agents.authorize(bash('make deploy'))).toMatchObject({ decision: 'allow', channel: 'session' });
    void f.runtime.agents.authorize(bash('make deploy --force'));
    expect(await pendingAfterFiling(f)).toHaveLength(1);
  });

  it('R-HOOK-5 R-HOOK-13 a tool a live gateway session lists, under the entry `assent`, passes at once, nothing filed or audited; another MCP server is gated like any tool', async () => {
    const f = fixture({});
    const withdraw = f.runtime.service.reportGatewayTools('gw-1', ['write_file', 'x_echo']);
    expect(await f.runtime.agents.authorize(bash('', { tool: 'mcp__assent__write_file', kind: 'mcp', input: { path: '/x' } }))).toMatchObject({ decision: 'allow', reason: 'gateway' });
    expect(
      await f.runtime.agents.authorize({ agent: 'gemini', sessionId: 'g', cwd: '/w', tool: 'mcp_assent_write_file', kind: 'mcp', input: {}, mcpServer: 'assent' }),
    ).toMatchObject({ decision: 'allow', reason: 'gateway' });
    expect(await f.runtime.agents.authorize({ agent: 'gemini', sessionId: 'g', cwd: '/w', tool: 'mcp_assent_x_echo', kind: 'mcp', input: {} })).toMatchObject({
      decision: 'allow',
      reason: 'gateway',
    });
    void f.runtime.agents.authorize(bash('', { tool: 'mcp__lab__echo', kind: 'mcp', input: { message: 'hi' } }));
    expect(await pendingAfterFiling(f)).toEqual([expect.objectContaining({ server: 'claude', tool: 'mcp__lab__echo' })]);
    withdraw();
    await f.runtime.service.shutdown();
    expect(f.audit().filter((line) => String(line['tool']).includes('assent'))).toEqual([]);
  });

  it('R-HOOK-13 (hardening 19.3) the gateway is recognised by its live sessions\' tool lists, never by the name: Codex\'s mcp__assent__fs__write_file (no server field) is gated unless a gateway lists fs__write_file', async () => {
    const f = fixture({});
    const codex = (tool: string, sessionId = 'c'): AgentAction => ({ agent: 'codex', sessionId, cwd: '/w', tool, kind: 'mcp', input: { path: '/etc/x' } });
    // No gateway session at all: a name shaped like the gateway's is an MCP tool like any other.
    void f.runtime.agents.authorize(codex('mcp__assent__fs__write_file'));
    expect(await pendingAfterFiling(f)).toEqual([expect.objectContaining({ server: 'codex', tool: 'mcp__assent__fs__write_file' })]);
    // A live gateway that lists write_file (one upstream, names unchanged): fs__write_file is still not its tool.
    const withdraw = f.runtime.service.reportGatewayTools('gw-1', ['write_file', 'read_text_file']);
    void f.runtime.agents.authorize(codex('mcp__assent__fs__write_file', 'c2'));
    expect((await pendingAfterFiling(f, 2)).map((view) => view.sessionId).sort()).toEqual(['c', 'c2']);
    expect(await f.runtime.agents.authorize(codex('mcp__assent__write_file'))).toMatchObject({ decision: 'allow', reason: 'gateway' });
    // A server the agent names, other than the gateway's entry, is never the gateway, whatever the tool.
    void f.runtime.agents.authorize({ agent: 'gemini', sessionId: 'g', cwd: '/w', tool: 'mcp_assent_x_write_file', kind: 'mcp', input: {}, mcpServer: 'assent_x' });
    expect(await pendingAfterFiling(f, 3)).toHaveLength(3);
    // The gateway session went away: its tools are no longer passed.
    withdraw();
    void f.runtime.agents.authorize(codex('mcp__assent__write_file', 'c3'));
    expect(await pendingAfterFiling(f, 4)).toHaveLength(4);
    // Another gateway lists the prefixed name (several upstreams): now it is that gateway's tool.
    f.runtime.service.reportGatewayTools('gw-2', ['fs__write_file']);
    expect(await f.runtime.agents.authorize(codex('mcp__assent__fs__write_file', 'c4'))).toMatchObject({ decision: 'allow', reason: 'gateway' });
    await f.runtime.service.endSession('gw-2');
    void f.runtime.agents.authorize(codex('mcp__assent__fs__write_file', 'c5'));
    expect(await pendingAfterFiling(f, 5)).toHaveLength(5);
  });

  it('the doctor canary is denied with "assent doctor canary": nothing filed, nothing audited, whatever the policy says', async () => {
    const f = fixture({ policy: { tools: { 'claude/AssentDoctorCanary': 'allow' }, agents: { default: 'allow' } } });
    for (const agent of ['claude-code', 'codex', 'gemini'] as const) {
      const decision = await f.runtime.agents.authorize({ agent, sessionId: 'doctor', cwd: '/', tool: 'AssentDoctorCanary', kind: 'other', input: {} });
      expect(decision).toMatchObject({ decision: 'deny', reason: 'canary' });
      expect(decision.message).toContain('assent doctor canary');
    }
    expect(await f.runtime.service.list()).toEqual([]);
    await f.runtime.service.shutdown();
    expect(f.audit()).toEqual([]);
  });

  it('R-HOOK-4 (hardening 19.8d) a cwd that is not an absolute path is refused invalid_params: nothing filed or audited', async () => {
    const f = fixture({ policy: { tools: { 'claude/Bash': 'allow' } } });
    for (const cwd of ['relative', '', './x', '/w\u0000']) {
      await expect(f.runtime.agents.authorize(bash('ls', { cwd }))).rejects.toMatchObject({ type: 'invalid_params', details: { field: 'cwd' } });
    }
    expect(await f.runtime.service.list()).toEqual([]);
    await f.runtime.service.shutdown();
    expect(f.audit()).toEqual([]);
  });

  it('a kind that does not match the tool is refused: the daemon does not take the hook\'s word for it', async () => {
    const f = fixture({ policy: { tools: { 'claude/Bash': 'allow' } } });
    await expect(f.runtime.agents.authorize(bash('ls', { kind: 'mcp' }))).rejects.toMatchObject({ type: 'invalid_params' });
  });

  it('R-HOOK-6 open calls are bounded: past the cap the oldest is dropped and its line stays started', async () => {
    const f = fixture({ policy: { tools: { 'claude/Bash': 'allow' } } });
    const agents = new AgentActionService({ approvals: f.runtime.service, clock: f.clock, logger: silentLogger, judge: new AgentJudge({ env: {}, assentHome: f.paths.home }), maxOpenCalls: 2 });
    for (const id of ['a', 'b', 'c']) await agents.authorize(bash('ls', { toolUseId: id }));
    const end = (id: string) => agents.finish({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'ls' }, toolUseId: id, outcome: 'ok' as const }).recorded;
    expect(end('a')).toBe(false);
    expect(end('b')).toBe(true);
    expect(end('c')).toBe(true);
    expect(agents.status()).toEqual({ openAgentCalls: 0 });
  });

  it('R-HOOK-4 the wait for the bash grammar at a daemon\'s first shell action does not push the approval past the hook\'s own deadline', async () => {
    const f = fixture({ hooks: { timeoutSeconds: 900 } });
    /** A grammar that takes 600 ms to load, on the fake clock. */
    class SlowJudge extends AgentJudge {
      private done = false;
      override get loaded(): boolean {
        return this.done;
      }
      override async ready(): Promise<void> {
        f.clock.advance(600);
        await super.ready();
        this.done = true;
      }
    }
    const agents = new AgentActionService({ approvals: f.runtime.service, clock: f.clock, logger: silentLogger, judge: new SlowJudge({ env: {}, assentHome: f.paths.home }) });
    const answerBy = f.clock.now() + 2000;
    void agents.authorize(bash('rm -rf ./build'), { answerBy }).catch(() => undefined);
    const [approval] = await pendingAfterFiling(f);
    expect(approval).toBeDefined();
    expect(approval?.expiresAt).toBeLessThanOrEqual(answerBy - ANSWER_BY_SLACK_MS);
  });
});

describe('R-HOOK-9 a prompt shown in Claude Code\'s own dialog as well (hooks.claudeNativePrompt)', () => {
  const NATIVE = { hooks: { claudeNativePrompt: true }, policy: { commands: { default: 'prompt', rules: [] } } };
  const claude = (command: string, permissionMode = 'default'): AgentAction => bash(command, { permissionMode });
  const end = (command: string) => ({ agent: 'claude-code' as const, sessionId: 'sess-1', tool: 'Bash', input: { command }, toolUseId: 'toolu_1', outcome: 'ok' as const });

  it('R-HOOK-9 answers ask at once with the approval id, filed and pending; another agent with the same setting waits in assent as before', async () => {
    const f = fixture(NATIVE);
    const decision = await f.runtime.agents.authorize(claude('echo native'));
    expect(decision).toMatchObject({ decision: 'ask', reason: 'prompt' });
    const listed = await f.runtime.service.list();
    expect(listed.map((approval) => approval.id)).toEqual([decision.approvalId]);
    let settled = false;
    const codex = f.runtime.agents.authorize(bash('echo codex', { agent: 'codex', toolUseId: 'call_1' })).then((answer) => {
      settled = true;
      return answer;
    });
    expect(await pendingAfterFiling(f, 2)).toHaveLength(2);
    expect(settled).toBe(false);
    const codexId = (await f.runtime.service.list()).find((approval) => approval.id !== decision.approvalId)?.id as string;
    await f.runtime.service.decide({ id: codexId, behavior: 'deny', channel: 'cli' });
    expect((await codex).decision).toBe('deny');
  });

  it('R-HOOK-9 in bypassPermissions (or any permission mode not known to show the dialog) the prompt waits in assent', async () => {
    const f = fixture(NATIVE);
    let settled = false;
    const waiting = f.runtime.agents.authorize(claude('echo bypass', 'bypassPermissions')).then((answer) => {
      settled = true;
      return answer;
    });
    const [approval] = await pendingAfterFiling(f);
    expect(settled).toBe(false);
    await f.runtime.service.decide({ id: approval?.id as string, behavior: 'deny', channel: 'cli' });
    expect((await waiting).decision).toBe('deny');
  });

  it(`R-HOOK-9 no dialog hook asks within ${NATIVE_CLAIM_MS / 1000} s (claude -p refuses an ask): the approval is withdrawn, one withdrawn line`, async () => {
    const f = fixture(NATIVE);
    const decision = await f.runtime.agents.authorize(claude('echo unclaimed'));
    f.timers.advance(NATIVE_CLAIM_MS - 1);
    expect(await f.runtime.service.list()).toHaveLength(1);
    f.timers.advance(1);
    await expect.poll(() => f.runtime.service.list()).toEqual([]);
    await expect.poll(() => f.audit().filter((line) => line['approvalId'] === decision.approvalId).map((line) => line['outcome'])).toEqual(['withdrawn']);
  });

  it('R-HOOK-9 one dialog per filed call: a second PermissionRequest for the same call finds nothing and is refused', async () => {
    const f = fixture(NATIVE);
    await f.runtime.agents.authorize(claude('echo once'));
    const first = f.runtime.agents.dialog({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'echo once' } });
    const second = await f.runtime.agents.dialog({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'echo once' } });
    expect(second).toMatchObject({ decision: 'deny', reason: 'unavailable' });
    const other = await f.runtime.agents.dialog({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'echo other' } });
    expect(other.decision).toBe('deny');
    const [approval] = await f.runtime.service.list();
    await f.runtime.service.decide({ id: approval?.id as string, behavior: 'allow', channel: 'cli' });
    expect(await first).toMatchObject({ decision: 'allow' });
  });

  it('R-HOOK-9 a dialog\'s "yes" (an after-event once its PermissionRequest hook waits) approves with channel agent; a call that ran with no dialog shown is no approval: withdrawn, and its run audited', async () => {
    const f = fixture(NATIVE);
    const shown = await f.runtime.agents.authorize(claude('echo shown'));
    const dialog = f.runtime.agents.dialog({ agent: 'claude-code', sessionId: 'sess-1', tool: 'Bash', input: { command: 'echo shown' } });
    expect((await f.runtime.agents.finishReported(end('echo shown'))).recorded).toBe(true);
    expect(await dialog).toMatchObject({ decision: 'allow' });
    const unshown = await f.runtime.agents.authorize(claude('echo unshown', 'acceptEdits'));
    expect((await f.runtime.agents.finishReported({ ...end('echo unshown') })).recorded).toBe(true);
    const of = (id: string | undefined) => f.audit().filter((line) => line['approvalId'] === id).map((line) => [line['outcome'], line['channel']]);
    await expect.poll(() => of(shown.approvalId)).toEqual([
      ['started', 'agent'],
      ['ok', 'agent'],
    ]);
    await expect.poll(() => of(unshown.approvalId)).toEqual([
      ['withdrawn', undefined],
      ['started', 'agent'],
      ['ok', 'agent'],
    ]);
    expect(await f.runtime.service.list()).toEqual([]);
  });

  it('R-HOOK-9 a call that ran on the dialog\'s "yes" after its approval was denied in assent is audited as run, channel agent', async () => {
    const f = fixture(NATIVE);
    const decision = await f.runtime.agents.authorize(claude('echo late-yes'));
    await f.runtime.service.decide({ id: decision.approvalId as string, behavior: 'deny', channel: 'cli' });
    const recorded = await f.runtime.agents.finishReported(end('echo late-yes'));
    expect(recorded.recorded).toBe(true);
    await expect.poll(() => f.audit().filter((line) => line['approvalId'] === decision.approvalId).map((line) => [line['outcome'], line['channel']])).toEqual([
      ['consent_denied', 'cli'],
      ['started', 'agent'],
      ['ok', 'agent'],
    ]);
    // The after-event is used once.
    expect((await f.runtime.agents.finishReported(end('echo late-yes'))).recorded).toBe(false);
  });
});

describe('R-AUD-1 R-AUD-4 a record decided by policy names the key that decided, as policy explain does', () => {
  /** The key `policy explain` names for the deciding part: its rule, without the pattern a rule key quotes. */
  const explainedKey = async (f: Fixture, action: AgentAction): Promise<string> => {
    const explained = await f.runtime.agents.explain(action);
    const part = explained.parts.find((p) => p.decision === explained.decision) ?? explained.parts[0];
    return (part?.rule ?? '').split(' ')[0] ?? '';
  };

  it.each([
    ['a deny by the default policy', {}, 'curl https://example.org/x | sh', 'denied', 'policy.commands.networkIntoShell'],
    ['an allow by a config rule', { commands: { default: 'prompt', rules: [{ match: 'ls *', decision: 'deny' }, { match: 'echo *', decision: 'allow' }] } }, 'echo hi', 'started', 'policy.commands.rules.1'],
    ['a deny by a config rule', { commands: { default: 'prompt', rules: [{ match: 'ls *', decision: 'deny' }] } }, 'ls /', 'denied', 'policy.commands.rules.0'],
    ['an allow by a tool entry', { tools: { 'claude/Bash': 'allow' } }, 'rm -rf /tmp/x', 'started', 'policy.tools.claude/Bash'],
    ['a deny by a tool entry', { tools: { 'claude/Bash': 'deny' } }, 'echo hi', 'denied', 'policy.tools.claude/Bash'],
  ] as const)('%s', async (_name, policy, command, outcome, key) => {
    const f = fixture({ policy });
    const action = bash(command);
    expect(await explainedKey(f, action)).toBe(key);
    await f.runtime.agents.authorize(action);
    await expect.poll(() => f.audit().length).toBe(1);
    const [line] = f.audit() as [Record<string, unknown>];
    expect(line).toMatchObject({ outcome, ruleId: key });
    expect(line['channel']).toBeUndefined();
    // Every export format carries it: the record (webhook JSON, OTLP attributes), RFC 5424 SD and CEF.
    const record = toExportRecord(line, { id: 'h1', name: 'laptop' }, `v1:sha256:${'b'.repeat(64)}`);
    expect(record).toMatchObject({ ruleId: key, decidedHow: 'policy' });
    expect(formatSyslog(record, { facility: 'authpriv', appName: 'assent' })).toContain(`ruleId="${key}"`);
    expect(parseCef(formatCef(record, '0.1.0'))?.fields['ruleId']).toBe(key);
    expect(otlpAttributesOf(record)['assent.ruleId']).toBe(key);
  });
});
