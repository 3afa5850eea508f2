// Passkey-confirmed approvals in the service (R-REM-6, R-REM-7), with a fake
// clock and a software authenticator: the enrolment needs the page's code
// typed at the terminal; an approval that needs a passkey is approved only by
// an assertion over its own challenge (approval id, action digest, a fresh
// single-use nonce); every other way of approving is refused and leaves it
// pending; the deciding transaction re-checks the credential and its counter.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import type { Rule } from '../../../src/core/policy/toolPolicy.js';
import { approvalChallenge } from '../../../src/core/approval/passkeyChallenge.js';
import type { DaemonContext } from '../../../src/heads/daemon/daemonMain.js';
import { createApprovalRuntime, type ApprovalRuntime } from '../../../src/heads/daemon/daemonRuntime.js';
import { ensureStateDir, resolveStatePaths, type StatePaths } from '../../../src/state/statePaths.js';
import type { AuthorizeResult, Timers } from '../../../src/service/approvalService.js';
import { silentLogger } from '../../../src/service/logger.js';
import { PasskeyService, relyingPartyOf, type RelyingParty } from '../../../src/service/passkeys.js';
import { SoftAuthenticator } from '../../helpers/softAuthenticator.js';

const RP: RelyingParty = { rpId: 'assent.test', origin: 'https://assent.test:8443' };
const PAGE = 'web:0a1b2c3d';

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
  passkeys: PasskeyService;
  paths: StatePaths;
  clock: FakeClock;
  timers: ManualTimers;
  audit(): Record<string, unknown>[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function fixture(policy: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Fixture {
  const root = mkdtempSync(join(tmpdir(), 'as-passkeys-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const paths = resolveStatePaths({ ASSENT_HOME: join(root, 'h') });
  ensureStateDir(paths);
  const config = {
    notifications: false,
    web: { listen: '127.0.0.1:0' },
    servers: { fs: { command: '/bin/true' } },
    policy: { default: 'allow', tools: { 'fs/write_file': 'prompt', 'fs/read_file': 'prompt' }, presence: { 'fs/write_*': 'passkey' }, ...policy },
    ...extra,
  };
  writeFileSync(paths.config, JSON.stringify(config), { mode: 0o600 });
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
  const passkeys = new PasskeyService({
    store: runtime.journal,
    approvals: runtime.service,
    clock,
    random: (n) => randomBytes(n),
    logger: silentLogger,
    relyingParty: () => RP,
  });
  const audit = (): Record<string, unknown>[] =>
    readdirSync(paths.auditDir)
      .filter((name) => name.endsWith('.jsonl'))
      .flatMap((name) => readFileSync(join(paths.auditDir, name), 'utf8').split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { runtime, passkeys, paths, clock, timers, audit };
}

/** Enrols a software passkey the way the page and the terminal do together. */
async function enrol(f: Fixture, page = PAGE): Promise<{ authenticator: SoftAuthenticator; id: string }> {
  const authenticator = new SoftAuthenticator(RP.origin);
  const { code } = f.passkeys.beginEnrolment(page);
  f.passkeys.confirmEnrolment(code);
  const options = await f.passkeys.registrationOptions(page);
  const info = await f.passkeys.register(page, authenticator.register(options));
  return { authenticator, id: info.id };
}

/** Files a prompt call and returns its waiting promise and approval id. */
async function file(f: Fixture, tool: string, args: Record<string, unknown> = { path: '/srv/a', content: 'x' }): Promise<{ call: Promise<AuthorizeResult>; id: string }> {
  let id = '';
  const call = f.runtime.service.authorize({ sessionId: 's1', server: 'fs', tool, args, caller: {} }, { onApprovalFiled: (approval) => (id = approval.id) });
  call.catch(() => undefined);
  // Filing is durable first: the id arrives a moment after the call.
  for (let i = 0; i < 200 && id === ''; i += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(id).not.toBe('');
  return { call, id };
}

async function challenge(f: Fixture, id: string): Promise<{ nonce: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const request = await f.passkeys.assertionOptions(PAGE, id);
  return { nonce: request.nonce, options: request.options };
}

describe('passkey enrolment (R-REM-6)', () => {
  it('R-REM-6 enrolment needs the page\'s code confirmed at the terminal; then the page registers a passkey, listed with the session that enrolled it', async () => {
    const f = fixture();
    const authenticator = new SoftAuthenticator(RP.origin);
    const { code, expiresAt } = f.passkeys.beginEnrolment(PAGE);
    expect(code).toMatch(/^[a-km-z]{8}$/);
    expect(expiresAt).toBe(f.clock.now() + 120_000);
    // Not confirmed yet: no registration options, no registration.
    await expect(f.passkeys.registrationOptions(PAGE)).rejects.toMatchObject({ type: 'forbidden', message: expect.stringContaining('assent web passkeys add') });
    expect(() => f.passkeys.confirmEnrolment('wrongcod')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
    expect(f.passkeys.confirmEnrolment(code.toUpperCase())).toEqual({ enrolledBy: PAGE, expiresAt: f.clock.now() + 120_000 });
    // Another page session has no enrolment of its own.
    await expect(f.passkeys.registrationOptions('web:ffffffff')).rejects.toMatchObject({ type: 'forbidden' });
    const options = await f.passkeys.registrationOptions(PAGE);
    expect(options.authenticatorSelection?.userVerification).toBe('required');
    expect(options.rp.id).toBe('assent.test');
    const info = await f.passkeys.register(PAGE, authenticator.register(options));
    expect(info).toMatchObject({ id: expect.stringMatching(/^p[a-km-z]{5}$/), credentialId: authenticator.id, enrolledBy: PAGE, rpId: 'assent.test' });
    expect(f.passkeys.list()).toEqual([info]);
    // The enrolment is used up: a second registration needs a new code.
    await expect(f.passkeys.register(PAGE, authenticator.register(options))).rejects.toMatchObject({ type: 'forbidden' });
  });

  it('R-REM-6 an enrolment code expires (fake clock), a confirmed enrolment too, and five wrong codes cancel every open enrolment', async () => {
    const f = fixture();
    const { code } = f.passkeys.beginEnrolment(PAGE);
    f.clock.advance(120_000);
    expect(() => f.passkeys.confirmEnrolment(code)).toThrow(expect.objectContaining({ type: 'unauthorized' }));

    const second = f.passkeys.beginEnrolment(PAGE);
    f.passkeys.confirmEnrolment(second.code);
    f.clock.advance(120_001);
    await expect(f.passkeys.registrationOptions(PAGE)).rejects.toMatchObject({ type: 'forbidden', message: expect.stringContaining('no open passkey enrolment') });

    const third = f.passkeys.beginEnrolment(PAGE);
    for (let i = 0; i < 4; i += 1) expect(() => f.passkeys.confirmEnrolment('zzzzzzzz')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
    expect(() => f.passkeys.confirmEnrolment('zzzzzzzz')).toThrow(expect.objectContaining({ message: expect.stringContaining('every open enrolment was cancelled') }));
    expect(() => f.passkeys.confirmEnrolment(third.code)).toThrow(expect.objectContaining({ type: 'unauthorized' }));
  });

  it('R-REM-6 a registration without user verification, or over another challenge, enrols nothing', async () => {
    const f = fixture();
    const authenticator = new SoftAuthenticator(RP.origin);
    authenticator.userVerified = false;
    const first = f.passkeys.beginEnrolment(PAGE);
    f.passkeys.confirmEnrolment(first.code);
    await expect(f.passkeys.register(PAGE, authenticator.register(await f.passkeys.registrationOptions(PAGE)))).rejects.toMatchObject({
      type: 'invalid_params',
      message: expect.stringContaining('User verification'),
    });
    authenticator.userVerified = true;
    const second = f.passkeys.beginEnrolment(PAGE);
    f.passkeys.confirmEnrolment(second.code);
    const options = await f.passkeys.registrationOptions(PAGE);
    await expect(f.passkeys.register(PAGE, authenticator.register({ ...options, challenge: 'AAAA' }))).rejects.toMatchObject({ type: 'invalid_params' });
    expect(f.passkeys.list()).toEqual([]);
  });

  it('R-REM-7 the relying party is the host name of web.publicUrl; an IP address, plain http or no publicUrl offer no passkeys', () => {
    expect(relyingPartyOf('https://assent.test:8443/')).toEqual({ rpId: 'assent.test', origin: 'https://assent.test:8443' });
    expect(relyingPartyOf('https://approvals.example.com')).toEqual({ rpId: 'approvals.example.com', origin: 'https://approvals.example.com' });
    expect(relyingPartyOf(undefined)).toMatch(/web\.publicUrl/);
    expect(relyingPartyOf('https://192.168.1.20:7788')).toMatch(/refuses IP origins/);
    expect(relyingPartyOf('https://[fd00::1]:7788')).toMatch(/refuses IP origins/);
    expect(relyingPartyOf('http://assent.test')).toMatch(/secure context/);
    const f = fixture();
    const none = new PasskeyService({ store: f.runtime.journal, approvals: f.runtime.service, clock: f.clock, random: (n) => randomBytes(n), logger: silentLogger, relyingParty: () => relyingPartyOf(undefined) });
    expect(() => none.beginEnrolment(PAGE)).toThrow(expect.objectContaining({ type: 'unavailable', message: expect.stringContaining('web.publicUrl') }));
  });
});

describe('passkey-confirmed approvals (R-REM-6)', () => {
  it('R-REM-6 the approval view says presence passkey; an allow through any other channel is presence_required and it stays pending; deny works', async () => {
    const f = fixture();
    const { call, id } = await file(f, 'write_file');
    expect((await f.runtime.service.get(id)).presence).toBe('passkey');
    expect((await f.runtime.service.list())[0]?.presence).toBe('passkey');
    for (const channel of ['cli', 'web']) {
      for (const claimed of [undefined, 'watch', 'tty', 'elicitation']) {
        const attempt = (): Promise<unknown> => f.runtime.service.decide({ id, behavior: 'allow', channel, ...(claimed === undefined ? {} : { claimedChannel: claimed }) });
        await expect(attempt()).rejects.toThrow(expect.objectContaining({ type: 'presence_required', message: expect.stringContaining('passkey') }));
      }
    }
    // The export-proof path is refused alike.
    await expect(f.runtime.service.approveWithProof({ id, behavior: 'allow', channel: 'cli' })).rejects.toThrow(expect.objectContaining({ type: 'presence_required' }));
    expect((await f.runtime.service.get(id)).state).toBe('pending');
    await f.runtime.service.decide({ id, behavior: 'deny', channel: 'cli' });
    await expect(call).rejects.toMatchObject({ type: 'policy_denied' });
    // A tool without presence is approved as before and its view has no presence.
    const other = await file(f, 'read_file');
    expect((await f.runtime.service.get(other.id)).presence).toBeUndefined();
    await f.runtime.service.decide({ id: other.id, behavior: 'allow', channel: 'cli' });
    await expect(other.call).resolves.toMatchObject({ decision: 'allow' });
  });

  it('R-REM-6 an assertion over the approval\'s challenge approves it once; the call resumes; the audit has channel web, presence passkey and the credential id', async () => {
    const f = fixture();
    const { authenticator } = await enrol(f);
    const { call, id } = await file(f, 'write_file');
    const { nonce, options } = await challenge(f, id);
    const approval = await f.runtime.service.get(id);
    expect(options.challenge).toBe(approvalChallenge({ approvalId: id, actionDigest: approval.argsSha256, nonce }));
    expect(options.userVerification).toBe('required');
    expect(options.allowCredentials?.map((c) => c.id)).toEqual([authenticator.id]);
    const decided = await f.passkeys.approve(PAGE, { approvalId: id, nonce, response: authenticator.assert(options) });
    expect(decided).toMatchObject({ id, state: 'approved', channel: 'web', scope: 'call' });
    const admitted = await call;
    expect(admitted).toMatchObject({ decision: 'allow', consent: { channel: 'web', approvalId: id } });
    await f.runtime.service.finish({ callId: admitted.callId, outcome: 'ok', durationMs: 3 });
    await f.runtime.service.shutdown();
    expect(f.audit().find((line) => line['approvalId'] === id)).toMatchObject({ outcome: 'ok', channel: 'web', presence: 'passkey', credentialId: authenticator.id });
    expect(f.passkeys.list()[0]?.lastUsedAt).toBe(f.clock.now());
  });

  it('R-REM-6 a replayed assertion, or one made for another approval, is refused and that approval stays pending', async () => {
    const f = fixture();
    const { authenticator } = await enrol(f);
    const a = await file(f, 'write_file', { path: '/srv/a', content: 'a' });
    const b = await file(f, 'write_file', { path: '/srv/b', content: 'b' });
    const forA = await challenge(f, a.id);
    const assertionA = authenticator.assert(forA.options);
    // A's nonce and assertion presented for B.
    await expect(f.passkeys.approve(PAGE, { approvalId: b.id, nonce: forA.nonce, response: assertionA })).rejects.toMatchObject({
      type: 'presence_required',
      details: { reason: 'other_approval' },
    });
    // B's own fresh nonce, but the signature over A's challenge: the binding does not verify.
    const forB = await challenge(f, b.id);
    const forged = authenticator.assert(forB.options, { challenge: forA.options.challenge });
    await expect(f.passkeys.approve(PAGE, { approvalId: b.id, nonce: forB.nonce, response: forged })).rejects.toMatchObject({
      type: 'presence_required',
      details: { reason: 'assertion_invalid' },
    });
    expect((await f.runtime.service.get(b.id)).state).toBe('pending');
    // The first presentation of A's nonce spent it: A's genuine assertion is now a replay.
    await expect(f.passkeys.approve(PAGE, { approvalId: a.id, nonce: forA.nonce, response: assertionA })).rejects.toMatchObject({ details: { reason: 'challenge_unknown' } });
    const fresh = await challenge(f, a.id);
    const assertion = authenticator.assert(fresh.options);
    await f.passkeys.approve(PAGE, { approvalId: a.id, nonce: fresh.nonce, response: assertion });
    await expect(a.call).resolves.toMatchObject({ decision: 'allow' });
    await expect(f.passkeys.approve(PAGE, { approvalId: a.id, nonce: fresh.nonce, response: assertion })).rejects.toMatchObject({ details: { reason: 'challenge_unknown' } });
    expect((await f.runtime.service.get(b.id)).state).toBe('pending');
  });

  it('R-REM-6 a challenge expires with the fake clock, works only for the page session it was issued to, and never outlives its approval', async () => {
    const f = fixture();
    const { authenticator } = await enrol(f);
    const { id } = await file(f, 'write_file');
    const first = await challenge(f, id);
    expect((await f.passkeys.assertionOptions(PAGE, id)).expiresAt).toBeLessThanOrEqual((await f.runtime.service.get(id)).expiresAt);
    f.clock.advance(90_000); // the approval's deadline (90 s) is before the challenge lifetime (120 s)
    await expect(f.passkeys.approve(PAGE, { approvalId: id, nonce: first.nonce, response: authenticator.assert(first.options) })).rejects.toMatchObject({ details: { reason: 'challenge_unknown' } });

    const later = await file(f, 'write_file');
    const second = await challenge(f, later.id);
    await expect(f.passkeys.approve('web:99999999', { approvalId: later.id, nonce: second.nonce, response: authenticator.assert(second.options) })).rejects.toMatchObject({
      details: { reason: 'other_session' },
    });
    expect((await f.runtime.service.get(later.id)).state).toBe('pending');
  });

  it('R-REM-6 removing the passkey makes its next assertion fail, also one already being checked (the deciding transaction looks again)', async () => {
    const f = fixture();
    const { authenticator, id: passkeyId } = await enrol(f);
    const { id } = await file(f, 'write_file');
    const { nonce, options } = await challenge(f, id);
    const inFlight = f.passkeys.approve(PAGE, { approvalId: id, nonce, response: authenticator.assert(options) });
    // Removed while the signature is being verified.
    f.passkeys.remove(passkeyId);
    await expect(inFlight).rejects.toMatchObject({ type: 'presence_required', details: { reason: 'credential_unknown' } });
    expect((await f.runtime.service.get(id)).state).toBe('pending');
    const again = await f.passkeys.assertionOptions(PAGE, id).catch((error: unknown) => error);
    expect(again).toMatchObject({ type: 'presence_required', details: { reason: 'no_passkey' } });
    expect(() => f.passkeys.remove(passkeyId)).toThrow(expect.objectContaining({ type: 'not_found' }));
  });

  it('R-REM-6 an assertion after removal is refused as not enrolled', async () => {
    const f = fixture();
    const { authenticator, id: passkeyId } = await enrol(f);
    await enrol(f, 'web:11111111');
    const { id } = await file(f, 'write_file');
    f.passkeys.remove(passkeyId);
    const { nonce, options } = await challenge(f, id);
    await expect(f.passkeys.approve(PAGE, { approvalId: id, nonce, response: authenticator.assert(options) })).rejects.toMatchObject({ details: { reason: 'credential_unknown' } });
    expect((await f.runtime.service.get(id)).state).toBe('pending');
  });

  it('R-REM-6 without user verification, with a counter that does not move on, or from another origin, the assertion is refused', async () => {
    const f = fixture();
    const { authenticator } = await enrol(f);
    const { call, id } = await file(f, 'write_file');
    authenticator.userVerified = false;
    let request = await challenge(f, id);
    await expect(f.passkeys.approve(PAGE, { approvalId: id, nonce: request.nonce, response: authenticator.assert(request.options) })).rejects.toMatchObject({
      details: { reason: 'user_verification' },
    });
    authenticator.userVerified = true;
    request = await challenge(f, id);
    await expect(f.passkeys.approve(PAGE, { approvalId: id, nonce: request.nonce, response: authenticator.assert(request.options, { origin: 'https://evil.test' }) })).rejects.toMatchObject({
      details: { reason: 'assertion_invalid' },
    });
    request = await challenge(f, id);
    await f.passkeys.approve(PAGE, { approvalId: id, nonce: request.nonce, response: authenticator.assert(request.options) });
    await call;
    // A second approval signed with the counter where it was: a cloned authenticator.
    const next = await file(f, 'write_file', { path: '/srv/next' });
    request = await challenge(f, next.id);
    await expect(f.passkeys.approve(PAGE, { approvalId: next.id, nonce: request.nonce, response: authenticator.assert(request.options, { keepCounter: true }) })).rejects.toMatchObject({
      details: { reason: 'assertion_invalid' },
    });
    expect((await f.runtime.service.get(next.id)).state).toBe('pending');
  });

  it('R-REM-6 no rule and no session grant approves an action that needs a passkey; a rule for one is refused and left out of gateway snapshots', async () => {
    const f = fixture();
    await expect(f.runtime.service.addRule({ id: 'rabcde', version: 1, tool: 'fs/write_file', args: [], createdAt: f.clock.now() })).rejects.toThrow(
      expect.objectContaining({ type: 'invalid_params', message: expect.stringContaining('policy.presence') }),
    );
    // A rule from before the presence entry (journaled directly) decides nothing for it.
    f.runtime.journal.insertRule({ id: 'rold', version: 1, tool: 'fs/write_file', args: [], createdAt: f.clock.now() });
    await f.runtime.service.applyConfig(f.runtime.service.config);
    expect(f.runtime.service.rulesWithoutPresence().map((rule) => rule.id)).toEqual([]);
    const { authenticator } = await enrol(f);
    const first = await file(f, 'write_file');
    // Asked for the session, a passkey approval covers this call only.
    const request = await challenge(f, first.id);
    expect((await f.passkeys.approve(PAGE, { approvalId: first.id, nonce: request.nonce, response: authenticator.assert(request.options) })).scope).toBe('call');
    await first.call;
    const second = await file(f, 'write_file');
    expect(await f.runtime.service.get(second.id)).toMatchObject({ state: 'pending', presence: 'passkey' });
    await expect(f.runtime.service.decide({ id: second.id, behavior: 'allow', scope: 'session', channel: 'cli' })).rejects.toThrow(expect.objectContaining({ type: 'presence_required' }));
  });
});

describe('passkey rules and counters (R-REM-6; issue 19 item 1)', () => {
  it('R-REM-6 a --command, --path or --url rule that could approve a presence-marked agent tool is refused, naming the tool and why; one for an unmarked agent or kind is added', async () => {
    const f = fixture({ presence: { 'claude/Bash': 'passkey', 'gemini/web_fetch': 'passkey' } });
    const rule = (form: Record<string, unknown>): Rule => ({ id: `r${Math.random().toString(36).slice(2, 7)}`, version: 1, args: [], createdAt: f.clock.now(), ...form }) as Rule;
    for (const form of [{ command: 'npm test' }, { command: 'npm test', agent: 'claude-code' }, { path: '${cwd}/dist/**' }, { path: '/tmp/**', access: 'read', agent: 'claude-code' }, { url: 'https://docs.example.com/*', agent: 'gemini' }]) {
      const refused = await f.runtime.service.addRule(rule(form)).catch((error: unknown) => error);
      expect(refused, JSON.stringify(form)).toMatchObject({ type: 'invalid_params', message: expect.stringContaining('policy.presence marks') });
      expect((refused as Error).message).toMatch(/claude\/Bash|gemini\/web_fetch/);
      expect((refused as Error).message).toContain('nothing was added');
    }
    const refused = (await f.runtime.service.addRule(rule({ command: 'git status' })).catch((error: unknown) => error)) as Error;
    expect(refused.message).toContain('claude/Bash');
    expect(refused.message).toContain('--agent');
    // Not marked: codex's shell, and URLs for Claude Code.
    for (const form of [{ command: 'npm test', agent: 'codex' }, { url: 'https://docs.example.com/*', agent: 'claude-code' }, { path: '/tmp/**', agent: 'codex' }]) {
      await expect(f.runtime.service.addRule(rule(form)), JSON.stringify(form)).resolves.toMatchObject(form);
    }
    expect((await f.runtime.service.listRules()).length).toBe(3);
  });

  it('R-REM-6 R-TEAM-3 a passkey approval is the page session\'s decision: four-eyes does not take it for the owner\'s, and the counter is written with the approval', async () => {
    const f = fixture({}, { approvals: { fourEyes: true } });
    const { authenticator } = await enrol(f);
    const { call, id } = await file(f, 'write_file');
    const request = await challenge(f, id);
    const decided = await f.passkeys.approve(PAGE, { approvalId: id, nonce: request.nonce, response: authenticator.assert(request.options) });
    expect(decided).toMatchObject({ state: 'approved', decidedBy: PAGE, presence: 'passkey' });
    await expect(call).resolves.toMatchObject({ decision: 'allow' });
    expect(f.runtime.journal.findPasskeyByCredentialId(authenticator.id)?.counter).toBe(authenticator.counter);
  });

  it('R-REM-6 the passkey counter is written only when the decision commits: a repeat approval by the same page under a quorum changes nothing, its counter included', async () => {
    const f = fixture({ quorum: { 'fs/write_file': 2 } });
    const { authenticator } = await enrol(f);
    const { call, id } = await file(f, 'write_file');
    let request = await challenge(f, id);
    await f.passkeys.approve(PAGE, { approvalId: id, nonce: request.nonce, response: authenticator.assert(request.options) });
    const afterFirst = f.runtime.journal.findPasskeyByCredentialId(authenticator.id);
    expect((await f.runtime.service.get(id))).toMatchObject({ state: 'pending', approvedBy: [PAGE] });
    f.clock.advance(1000);
    request = await challenge(f, id);
    await f.passkeys.approve(PAGE, { approvalId: id, nonce: request.nonce, response: authenticator.assert(request.options) });
    // Nothing was recorded by the repeat, so nothing of the passkey moved either.
    expect(f.runtime.journal.findPasskeyByCredentialId(authenticator.id)).toEqual(afterFirst);
    expect((await f.runtime.service.get(id))).toMatchObject({ state: 'pending', approvedBy: [PAGE] });
    // Another page session's assertion completes the quorum and records the counter.
    const other = 'web:99999999';
    const issued = await f.passkeys.assertionOptions(other, id);
    f.clock.advance(1000);
    await f.passkeys.approve(other, { approvalId: id, nonce: issued.nonce, response: authenticator.assert(issued.options) });
    await expect(call).resolves.toMatchObject({ decision: 'allow' });
    expect(f.runtime.journal.findPasskeyByCredentialId(authenticator.id)).toMatchObject({ counter: authenticator.counter, lastUsedAt: f.clock.now() });
  });
});

describe('passkey requirements that outlive a change (R-REM-6)', () => {
  it('R-REM-6 R-CFG-4 a pending approval filed as needing a passkey still needs one after a reload drops the presence entry', async () => {
    const f = fixture();
    const { id } = await file(f, 'write_file');
    const pinned = f.runtime.service.config;
    await f.runtime.service.applyConfig({ ...pinned, config: { ...pinned.config, policy: { ...pinned.config.policy, presence: {} } }, revision: 'without-presence' });
    await expect(f.runtime.service.decide({ id, behavior: 'allow', channel: 'cli' })).rejects.toThrow(expect.objectContaining({ type: 'presence_required' }));
    expect((await f.runtime.service.get(id)).presence).toBe('passkey');
    // A new one is filed under the policy now in force.
    const later = await file(f, 'write_file');
    expect((await f.runtime.service.get(later.id)).presence).toBeUndefined();
  });

  it('R-REM-6 each new passkey is announced with the command that removes it', async () => {
    const f = fixture();
    const sent: { title: string; body: string }[] = [];
    const passkeys = new PasskeyService({
      store: f.runtime.journal,
      approvals: f.runtime.service,
      clock: f.clock,
      random: (n) => randomBytes(n),
      logger: silentLogger,
      relyingParty: () => RP,
      notifier: { notify: (notification) => sent.push(notification), sent: 0, failures: 0 },
    });
    const { code } = passkeys.beginEnrolment(PAGE);
    passkeys.confirmEnrolment(code);
    const info = await passkeys.register(PAGE, new SoftAuthenticator(RP.origin).register(await passkeys.registrationOptions(PAGE)));
    expect(sent).toEqual([{ title: 'assent: a passkey was added', body: expect.stringContaining(`assent web passkeys remove ${info.id}`) }]);
  });
});
