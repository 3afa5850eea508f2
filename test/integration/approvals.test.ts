// The approval loop over a real daemon and socket (issue: daemon, prompt policy,
// local approvals, audit): R-D-4..8, R-CLI-1..3, R-AUD-1, R-POL-4.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { makeTempHome, type TempHome, auditLines, waitForAudit } from '../helpers/daemon.js';
import { PtySession, runInTerminal } from '../helpers/pty.js';

const homes: TempHome[] = [];
const clients: DaemonClient[] = [];
const ptys: PtySession[] = [];

afterEach(async () => {
  for (const pty of ptys.splice(0)) pty.kill();
  for (const client of clients.splice(0)) client.close();
  for (const home of homes.splice(0)) await home.cleanup();
});

async function setup(config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<TempHome> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify(config), { mode: 0o600 });
  await home.startDaemon({ ...env });
  return home;
}

async function connect(home: TempHome): Promise<DaemonClient> {
  const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
  clients.push(client);
  return client;
}

// `servers.fs` names the alias the policy keys use (R-CFG-1); no gateway starts it here.
const PROMPT_WRITE = { notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'allow', tools: { 'fs/write_file': 'prompt', 'fs/move_file': 'deny' } } };

interface Pending {
  id: string;
  sessionId: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  argsSha256: string;
}

async function waitForPending(home: TempHome, count = 1): Promise<Pending[]> {
  for (let i = 0; i < 200; i += 1) {
    const result = await home.runCli(['pending', '--json']);
    const parsed = JSON.parse(result.stdout) as { ok: boolean; data: Pending[] };
    if (parsed.data.length >= count) return parsed.data;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no pending approval appeared');
}

function authorize(client: DaemonClient, params: Record<string, unknown>) {
  return client.call<{ callId: string; consent?: { channel: string; approvalId?: string; ruleId?: string }; waitedForConsentMs: number }>('calls.authorize', params).then(
    (value) => ({ ok: true as const, value, at: Date.now() }),
    (error: { type?: string; details?: Record<string, unknown>; message: string }) => ({ ok: false as const, error, at: Date.now() }),
  );
}

async function approveInPty(home: TempHome, id: string, extra: string[] = []): Promise<void> {
  const pty = new PtySession(['approve', id, ...extra], { outFile: join(home.home, `approve-${id}.out`), env: { ASSENT_HOME: home.home } });
  ptys.push(pty);
  const match = await pty.waitFor(/Type ([a-z]{4}) to approve/);
  pty.type(`${match[1]}\r`);
  const { exitCode } = await pty.finish(join(home.home, `approve-${id}.out`));
  expect(exitCode, pty.screen).toBe(0);
}

describe('prompt calls wait for a human', () => {
  it('R-D-4 R-D-5 R-CLI-1 R-CLI-2 R-AUD-1 a prompt call blocks, is listed with complete args, and `assent approve` releases it', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const watcher = await connect(home);
    let resolvedAt = 0;
    watcher.onNotification('event', (event) => {
      if ((event as { kind: string }).kind === 'approval_resolved') resolvedAt = Date.now();
    });
    await watcher.call('events.subscribe', { kinds: ['approval_resolved'] });

    const secret = 'ARG-VALUE-never-in-audit';
    const pendingCall = authorize(client, { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/tmp/a', content: secret }, caller: { name: 'test' } });
    const [listed] = await waitForPending(home);
    expect(listed?.id).toMatch(/^[abcdefghijkmnopqrstuvwxyz]{5}$/);
    expect(listed?.args).toEqual({ path: '/tmp/a', content: secret });
    expect(listed?.server).toBe('fs');

    await approveInPty(home, listed!.id);
    const result = await pendingCall;
    expect(result.ok).toBe(true);
    expect(resolvedAt).toBeGreaterThan(0);
    expect(result.at - resolvedAt).toBeLessThan(100);
    if (!result.ok) return;
    expect(result.value.consent).toEqual({ channel: 'cli', approvalId: listed!.id });
    await new Promise((r) => setTimeout(r, 30));
    await client.call('calls.finish', { callId: result.value.callId, outcome: 'ok' });
    const line = await waitForAudit(home, (r) => r['approvalId'] === listed!.id);
    expect(line).toMatchObject({ channel: 'cli', outcome: 'ok', server: 'fs', tool: 'write_file', sessionId: 's1' });
    expect(line['waitedForConsentMs']).toBeGreaterThan(0);
    expect(line['durationMs']).toBeGreaterThanOrEqual(20);
    expect(line['durationMs']).toBeLessThan(line['waitedForConsentMs'] as number);
    expect(line['argsSha256']).toBe(listed!.argsSha256);
    expect(readdirSync(home.paths.auditDir).map((f) => readFileSync(join(home.paths.auditDir, f), 'utf8')).join('')).not.toContain(secret);
  });

  it('R-D-6 deny gives policy_denied/consent_denied with the reason; the timeout gives consent_timeout', async () => {
    // The deny goes through two CLI starts, which take seconds on a loaded machine: under the default
    // consent timeout (90 s) nothing races them (hardening 19.8g).
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const denied = authorize(client, { sessionId: 's1', server: 'fs', tool: 'write_file', args: { n: 1 } });
    const [first] = await waitForPending(home);
    const deny = await home.runCli(['deny', first!.id, '--reason', 'not that file']);
    expect(deny.code).toBe(0);
    const d = await denied;
    expect(d.ok).toBe(false);
    if (!d.ok) {
      expect(d.error.type).toBe('policy_denied');
      expect(d.error.details?.['reason']).toBe('consent_denied');
      expect(d.error.message).toContain('not that file');
    }
    // Only then is the consent timeout made short, explicitly: the reviewed revision applied over the socket,
    // as `assent config reload` does after its challenge. Nothing but the daemon's own timer ends this call.
    writeFileSync(home.paths.config, JSON.stringify({ ...PROMPT_WRITE, policy: { ...PROMPT_WRITE.policy, consentTimeoutSeconds: 1 } }), { mode: 0o600 });
    const { fileRevision } = await client.call<{ fileRevision: string }>('config.status', {});
    expect(await client.call('config.apply', { revision: fileRevision })).toMatchObject({ applied: true });
    const timedOut = await authorize(client, { sessionId: 's1', server: 'fs', tool: 'write_file', args: { n: 2 } });
    expect(timedOut.ok).toBe(false);
    if (!timedOut.ok) expect(timedOut.error.details?.['reason']).toBe('consent_timeout');
    await waitForAudit(home, (r) => r['outcome'] === 'consent_timeout');
    await waitForAudit(home, (r) => r['outcome'] === 'consent_denied' && r['channel'] === 'cli');
  });

  it('R-D-6 a policy deny never prompts and names the config key', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const r = await authorize(client, { sessionId: 's1', server: 'fs', tool: 'move_file', args: {} });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.details?.['reason']).toBe('policy');
      expect(String(r.error.details?.['hint'])).toContain('policy.tools');
    }
    expect(await waitForPending(home, 0)).toEqual([]);
  });

  it('R-D-6 a session that ends while waiting is denied; SIGTERM denies pending, flushes audit and exits 0', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const waiting = authorize(client, { sessionId: 'gone', server: 'fs', tool: 'write_file', args: {} });
    await waitForPending(home);
    await client.call('sessions.end', { sessionId: 'gone' });
    const ended = await waiting;
    expect(ended.ok).toBe(false);
    if (!ended.ok) expect(ended.error.details?.['detail']).toBe('session_ended');

    const other = await connect(home);
    const shutdownCall = authorize(other, { sessionId: 's2', server: 'fs', tool: 'write_file', args: {} });
    await waitForPending(home);
    const pid = Number(readFileSync(home.paths.pid, 'utf8').trim());
    const exited = new Promise<number | null>((resolve) => {
      const timer = setInterval(() => {
        try {
          process.kill(pid, 0);
        } catch {
          clearInterval(timer);
          resolve(0);
        }
      }, 20);
    });
    process.kill(pid, 'SIGTERM');
    const r = await shutdownCall;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.details?.['detail'], JSON.stringify(r.error)).toBe('shutdown');
    await exited;
    expect(auditLines(home).some((l) => l['deniedReason'] === 'shutdown')).toBe(true);
  });
});

describe('R-D-7 durability across a crash', () => {
  it('after kill -9 and a restart, a pending approval is listed, can be approved, and a re-attached waiter gets the decision', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    void authorize(client, { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/x' } });
    const [pending] = await waitForPending(home);
    const pid = Number(readFileSync(home.paths.pid, 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    await home.startDaemon();
    const after = await waitForPending(home);
    expect(after.map((a) => a.id)).toContain(pending!.id);
    const again = await connect(home);
    const waiter = again.call<{ state: string; channel: string }>('approvals.wait', { id: pending!.id });
    await approveInPty(home, pending!.id);
    await expect(waiter).resolves.toMatchObject({ state: 'approved', channel: 'cli' });
  });
});

describe('single use across re-attach', () => {
  it('calls.resume cannot let a second call through an approval that already admitted one', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const params = { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/once' } };
    const first = authorize(client, params);
    const [pending] = await waitForPending(home);
    await approveInPty(home, pending!.id);
    expect((await first).ok).toBe(true);
    const again = await client.call('calls.resume', { ...params, approvalId: pending!.id }).then(
      () => 'admitted',
      (error: { type?: string }) => error.type,
    );
    expect(again).toBe('conflict');
    const other = await client.call('calls.resume', { ...params, args: { path: '/other' }, approvalId: pending!.id }).then(
      () => 'admitted',
      (error: { type?: string }) => error.type,
    );
    expect(other).toBe('not_found');
  });
});

describe('R-D-8 session scope and R-POL-4 rules', () => {
  it('approve --session lets the same tool pass in that session only', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const first = authorize(client, { sessionId: 'sA', server: 'fs', tool: 'write_file', args: { n: 1 } });
    const [pending] = await waitForPending(home);
    await approveInPty(home, pending!.id, ['--session']);
    expect((await first).ok).toBe(true);
    const second = await authorize(client, { sessionId: 'sA', server: 'fs', tool: 'write_file', args: { n: 2 } });
    expect(second.ok).toBe(true);
    if (second.ok) {
      expect(second.value.consent).toEqual({ channel: 'session', approvalId: pending!.id });
      await client.call('calls.finish', { callId: second.value.callId, outcome: 'ok' });
      await waitForAudit(home, (r) => r['channel'] === 'session' && r['approvalId'] === pending!.id);
    }
    const other = authorize(client, { sessionId: 'sB', server: 'fs', tool: 'write_file', args: { n: 3 } });
    const [prompted] = await waitForPending(home);
    expect(prompted?.sessionId).toBe('sB');
    await home.runCli(['deny', prompted!.id]);
    expect((await other).ok).toBe(false);
  });

  it('a rule turns matching prompt calls into allow, never overrides deny, and stops after revoke', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const added = await runInTerminal(['rules', 'add', '--tool', 'fs/write_file', '--arg', '/path:prefix=/srv/data/', '--json'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(added.exitCode, added.screen + added.stdout).toBe(0);
    const rule = (JSON.parse(added.stdout) as { data: { id: string } }).data;
    const allowed = await authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/srv/data/a.txt' } });
    expect(allowed.ok).toBe(true);
    if (allowed.ok) {
      expect(allowed.value.consent).toEqual({ channel: 'rule', ruleId: rule.id });
      await client.call('calls.finish', { callId: allowed.value.callId, outcome: 'ok' });
      await waitForAudit(home, (r) => r['ruleId'] === rule.id && r['channel'] === 'rule');
    }
    const denyRule = await runInTerminal(['rules', 'add', '--tool', 'fs/move_file', '--json'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(denyRule.exitCode).toBe(0);
    const stillDenied = await authorize(client, { sessionId: 's', server: 'fs', tool: 'move_file', args: {} });
    expect(stillDenied.ok).toBe(false);
    const outside = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/etc/passwd' } });
    const [p] = await waitForPending(home);
    await home.runCli(['deny', p!.id]);
    expect((await outside).ok).toBe(false);
    expect((await home.runCli(['rules', 'revoke', rule.id])).code).toBe(0);
    const afterRevoke = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/srv/data/a.txt' } });
    const [q] = await waitForPending(home);
    expect(q?.args).toEqual({ path: '/srv/data/a.txt' });
    await home.runCli(['deny', q!.id]);
    expect((await afterRevoke).ok).toBe(false);
  });
});

describe('R-CLI-2 approving needs a terminal', () => {
  it('a headless approve is refused with terminal-required and exit 77, and nothing is decided', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const waiting = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: {} });
    const [p] = await waitForPending(home);
    const r = await home.runCli(['approve', p!.id, '--json'], { input: 'abcd\n' });
    expect(r.code).toBe(77);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { type: 'terminal_required' } });
    expect((await waitForPending(home))[0]?.id).toBe(p!.id);
    await home.runCli(['deny', p!.id]);
    await waiting;
  });
});

describe('R-CLI-2 R-POL-4 every command that widens what an agent may do needs a terminal', () => {
  it('headless `rules add` (every form, R-POL-6 issue 12 item 5), `web` and `token create` are refused with exit 77 and change nothing', async () => {
    const home = await setup(PROMPT_WRITE);
    const tokenFile = join(home.home, 'headless.token');
    for (const args of [
      ['rules', 'add', '--tool', 'fs/write_file', '--json'],
      ['rules', 'add', '--command', 'npm test', '--json'],
      ['rules', 'add', '--path', '/**', '--agent', 'codex', '--json'],
      ['rules', 'add', '--url', 'https://**/*', '--json'],
      ['web', '--json'],
      ['token', 'create', '--name', 'agent', '--ttl', '1h', '--out', tokenFile, '--json'],
    ]) {
      const r = await home.runCli(args, { input: 'abcd\n' });
      expect(r.code, args.join(' ')).toBe(77);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { type: 'terminal_required' } });
    }
    const rules = JSON.parse((await home.runCli(['rules', 'list', '--json'])).stdout) as { data: unknown[] };
    expect(rules.data).toEqual([]);
    expect(existsSync(tokenFile)).toBe(false);
    // In a terminal, a wrong code adds nothing either.
    const wrong = new PtySession(['rules', 'add', '--tool', 'fs/write_file'], { outFile: join(home.home, 'rule.out'), env: { ASSENT_HOME: home.home } });
    ptys.push(wrong);
    await wrong.waitFor(/Type ([a-z]{4}) to add it/);
    wrong.type('zzzz\r');
    expect((await wrong.finish(join(home.home, 'rule.out'))).exitCode).toBe(77);
    expect((JSON.parse((await home.runCli(['rules', 'list', '--json'])).stdout) as { data: unknown[] }).data).toEqual([]);
  });
});

/** Waits for a call's answer, failing with the watch screen (not a bare test timeout) if none comes. */
async function within<T>(promise: Promise<T>, pty: PtySession, what: string, ms = 15_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer for ${what} within ${ms} ms; watch screen:\n${pty.screen}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('R-CLI-3 watch', () => {
  it('shows a new request with its full escaped preview within 1 s, answers inline, and drops one answered elsewhere', async () => {
    const home = await setup(PROMPT_WRITE);
    const client = await connect(home);
    const pty = new PtySession(['watch'], { outFile: join(home.home, 'watch.out'), env: { ASSENT_HOME: home.home } });
    ptys.push(pty);
    await pty.waitFor(/Waiting for requests/);
    const sentAt = performance.now();
    const first = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { path: '/tmp/\u001b[2J\u202e\u00e9' } });
    const match = await pty.waitFor(/type ([a-z]{4}) \+ Enter to approve once/, 5000);
    expect(performance.now() - sentAt).toBeLessThan(1000);
    expect(pty.screen).toContain('"path": "/tmp/\\u001b[2J\\u202e\\u00e9"');
    expect(pty.screen).not.toContain('\u001b[2J');
    pty.type(`${match[1]}\r`);
    const r = await within(first, pty, 'the approved call');
    expect(r.ok).toBe(true);
    // The socket head stamps every decision `cli`; the queue's own word is kept beside it (hardening 1).
    if (r.ok) expect(r.value.consent?.channel).toBe('cli');
    const events = await client.call<{ kind: string; data: Record<string, unknown> }[]>('events.since', { cursor: 0 });
    const approvalId = r.ok ? r.value.consent?.approvalId : undefined;
    expect(events.find((e) => e.kind === 'approval_resolved' && e.data['id'] === approvalId)?.data).toMatchObject({ channel: 'cli', claimedChannel: 'watch' });

    const second = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { n: 2 } });
    const [p] = await waitForPending(home);
    await pty.waitFor(new RegExp(`\\[${p!.id}\\] type`));
    await home.runCli(['deny', p!.id]);
    await pty.waitFor(new RegExp(`${p!.id} \\(fs/write_file\\) was denied via cli elsewhere; removed`));
    expect((await within(second, pty, 'the call denied elsewhere')).ok).toBe(false);

    const third = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { n: 3 } });
    const [t] = await waitForPending(home);
    await pty.waitFor(new RegExp(`\\[${t!.id}\\] type`));
    pty.type('n');
    const denied = await within(third, pty, 'the call denied with n');
    expect(denied.ok).toBe(false);
    pty.type('q');
    const end = await pty.finish(join(home.home, 'watch.out'), 5000);
    expect(end.exitCode).toBe(0);
  }, 60_000);
});

describe('R-D-10 notifications', () => {
  function fakeNotifier(dir: string, exitCode: number): string {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done >> "${join(dir, 'notify.log')}"\necho >> "${join(dir, 'notify.log')}"\nexit ${exitCode}\n`, { mode: 0o755 });
    return bin;
  }

  it('calls notify-send once per request naming the tool and id, never an argument value', async () => {
    const home = makeTempHome();
    homes.push(home);
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ ...PROMPT_WRITE, notifications: true }));
    const bin = fakeNotifier(home.home, 0);
    await home.startDaemon({ PATH: `${bin}:${process.env['PATH']}` });
    const client = await connect(home);
    const waiting = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: { content: 'SECRET-ARG-42' } });
    const [p] = await waitForPending(home);
    for (let i = 0; i < 100 && !readFileSafe(join(home.home, 'notify.log')).includes(p!.id); i += 1) await new Promise((r) => setTimeout(r, 20));
    const log = readFileSafe(join(home.home, 'notify.log'));
    expect(log.trim().split('\n')).toHaveLength(1);
    expect(log).toContain('fs/write_file');
    expect(log).toContain(p!.id);
    expect(log).not.toContain('SECRET-ARG-42');
    await home.runCli(['deny', p!.id]);
    await waiting;
  });

  it('a failing notifier is counted in daemon status and the call path is unaffected; notifications:false turns it off', async () => {
    const home = makeTempHome();
    homes.push(home);
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ ...PROMPT_WRITE, notifications: true }));
    const bin = fakeNotifier(home.home, 3);
    await home.startDaemon({ PATH: `${bin}:${process.env['PATH']}` });
    const client = await connect(home);
    const waiting = authorize(client, { sessionId: 's', server: 'fs', tool: 'write_file', args: {} });
    const [p] = await waitForPending(home);
    let failures = 0;
    for (let i = 0; i < 100 && failures === 0; i += 1) {
      const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { approvals: { notifications: { failures: number } } } };
      failures = status.data.approvals.notifications.failures;
      if (failures === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(failures).toBe(1);
    await approveInPty(home, p!.id);
    expect((await waiting).ok).toBe(true);

    const quiet = makeTempHome();
    homes.push(quiet);
    mkdirSync(quiet.home, { recursive: true, mode: 0o700 });
    writeFileSync(quiet.paths.config, JSON.stringify({ ...PROMPT_WRITE, notifications: false }));
    const quietBin = fakeNotifier(quiet.home, 0);
    await quiet.startDaemon({ PATH: `${quietBin}:${process.env['PATH']}` });
    const qc = await connect(quiet);
    const qwait = authorize(qc, { sessionId: 's', server: 'fs', tool: 'write_file', args: {} });
    const [qp] = await waitForPending(quiet);
    await new Promise((r) => setTimeout(r, 200));
    expect(readFileSafe(join(quiet.home, 'notify.log'))).toBe('');
    await quiet.runCli(['deny', qp!.id]);
    await qwait;
  });
});

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
