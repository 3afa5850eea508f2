// Issue 35 item 2 with the real daemon over its real socket in a temp
// ASSENT_HOME: a journal.db truncated or overwritten, an audit day file whose
// last line is torn, a config.json cut in the middle, and a 0-byte confirmed
// configuration. Each test damages the state of a home that has served calls,
// then asserts three things: a gated call made by the hook is refused (the
// command it would run, `touch MARKER`, never runs), the operator-facing
// messages (the hook's reason, `assent daemon run`, `assent doctor` in text and
// JSON, `assent audit verify`) name the file, the cause and the fix, and the
// audit chain verifies afterwards — after the documented repair where one is
// needed, which keeps the damaged file as a backup and changes nothing
// without a typed code or --yes.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';
import { auditLines, daemonsForHome, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { answerOf, runHook, shellEvent } from '../../helpers/hook.js';
import { PtySession, runInTerminal } from '../../helpers/pty.js';

const cleanups = cleanupsAfterEach();

const ALLOW_AGENTS = { notifications: false, web: { listen: '127.0.0.1:0' }, policy: { agents: { default: 'allow' } } };

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function newHome(config: Record<string, unknown> | string = ALLOW_AGENTS): TempHome {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, typeof config === 'string' ? config : JSON.stringify(config), { mode: 0o600 });
  return home;
}

/** A home whose daemon confirmed its config.json, decided `calls` allowed hook calls (each an audit line) and stopped. */
async function usedHome(config: Record<string, unknown> = ALLOW_AGENTS, calls = 3): Promise<TempHome> {
  const home = newHome(config);
  await home.startDaemon();
  for (let n = 0; n < calls; n += 1) {
    const answer = answerOf((await runHook(['claude-code'], shellEvent('claude-code', `ls /tmp/${n}`), home.env)).stdout);
    expect(answer.decision, answer.reason).toBe('allow');
  }
  expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
  expect(auditLines(home)).toHaveLength(calls);
  return home;
}

/**
 * What an agent does with the hook's answer to `touch MARKER`: it runs the
 * command only when the answer is allow. Returns the answer; the marker says
 * whether the command ran.
 */
async function gatedCall(home: TempHome, marker: string): Promise<{ decision: string; reason: string; code: number | null }> {
  const result = await runHook(['claude-code'], shellEvent('claude-code', `touch ${marker}`), home.env);
  const answer = answerOf(result.stdout);
  if (answer.decision === 'allow') execFileSync('/bin/sh', ['-c', `touch '${marker}'`]);
  return { decision: answer.decision, reason: answer.reason, code: result.code };
}

interface DoctorJson {
  ok: boolean;
  data: { state: { damaged: { kind: string; file: string; problem: string; effect: string; fix: string; line?: number }[] } };
  error?: { type: string; message: string };
}

async function doctor(home: TempHome): Promise<{ text: string; code: number | null; json: DoctorJson; jsonCode: number | null }> {
  const text = await home.runCli(['doctor'], { timeoutMs: 60_000 });
  const json = await home.runCli(['doctor', '--json'], { timeoutMs: 60_000 });
  return { text: text.stdout, code: text.code, json: JSON.parse(json.stdout) as DoctorJson, jsonCode: json.code };
}

async function verifies(home: TempHome): Promise<boolean> {
  const result = await home.runCli(['audit', 'verify']);
  return result.code === 0 && /^Audit log intact: \d+ lines\.\n$/.test(result.stdout);
}

function backupsOf(file: string): string[] {
  const dir = join(file, '..');
  const name = file.slice(dir.length + 1);
  return readdirSync(dir).filter((entry) => entry.startsWith(`${name}.assent-backup-`) && !/-(wal|shm)$/.test(entry));
}

/** A journal damage, a gated call refused, every message naming it, and `assent journal repair` with its backup. */
async function journalCase(damage: (file: string) => void, found: RegExp): Promise<{ home: TempHome; repair: { stdout: string } }> {
  const home = await usedHome();
  damage(home.paths.journal);
  const damaged = readFileSync(home.paths.journal);
  const marker = join(home.home, '..', 'marker');

  // 1. Fail closed: the hook's call is refused and names the file, the cause and the repair; no daemon runs on it.
  const call = await gatedCall(home, marker);
  expect(call.decision).toBe('deny');
  expect(call.code).toBe(2);
  expect(call.reason).toContain(`the journal ${home.paths.journal} is damaged`);
  expect(call.reason).toMatch(found);
  expect(call.reason).toContain('assent journal repair');
  expect(call.reason).toContain('No assent daemon decided it: none starts until the operator does what that says');
  expect(existsSync(marker)).toBe(false);
  expect(daemonsForHome(home.home)).toEqual([]);
  const run = await home.runCli(['daemon', 'run']);
  expect(run.code).toBe(65);
  expect(run.stderr).toMatch(new RegExp(`^assent: the journal ${home.paths.journal} is damaged .*so assent will not start on it; .*\`assent journal repair\``));

  // 2. doctor names it, in text and JSON.
  const report = await doctor(home);
  expect(report.code).toBe(65);
  expect(report.text).toContain(`- ${home.paths.journal}: SQLite cannot read it as a sound database`);
  expect(report.text).toMatch(/fix: stop here and run `assent journal repair`/);
  expect(report.jsonCode).toBe(65);
  expect(report.json.ok).toBe(false);
  expect(report.json.error?.type).toBe('state_damaged');
  expect(report.json.data.state.damaged).toEqual([expect.objectContaining({ kind: 'journal', file: home.paths.journal, fix: expect.stringContaining('assent journal repair') })]);

  // 3. No repair without a typed code or --yes: with no terminal it refuses and changes nothing.
  const refused = await home.runCli(['journal', 'repair']);
  expect(refused.code).toBe(77);
  expect(refused.stderr).toMatch(/not a terminal; run it in your own terminal, or add --yes .*nothing was changed/);
  expect(readFileSync(home.paths.journal).equals(damaged)).toBe(true);
  expect(backupsOf(home.paths.journal)).toEqual([]);

  // 4. The repair keeps the damaged bytes as the backup it names, and the chain verifies, the repair recorded in it.
  const repair = await home.runCli(['journal', 'repair', '--yes']);
  expect(repair.code, repair.stderr).toBe(0);
  const [backup, ...more] = backupsOf(home.paths.journal);
  expect(more).toEqual([]);
  const backupPath = join(home.home, backup ?? '');
  expect(repair.stdout).toContain(`Kept the damaged journal as it was: ${backupPath}`);
  expect(sha256(readFileSync(backupPath))).toBe(sha256(damaged));
  expect(statSync(backupPath).mode & 0o777).toBe(0o600);
  expect(await verifies(home)).toBe(true);
  expect(auditLines(home).at(-1)).toMatchObject({ server: 'assent', tool: 'journal repair', outcome: 'ok', caller: { backup } });
  return { home, repair };
}

describe('damaged journal.db (issue 35)', () => {
  it('truncated to half its size: the hook is refused naming journal.db and `assent journal repair`, doctor finds it, the repair keeps a backup, the chain verifies', async () => {
    const { home } = await journalCase((file) => truncateSync(file, Math.floor(statSync(file).size / 2)), /database disk image is malformed/);
    // The daemon starts on the new journal again; the chain still verifies after it served a call.
    expect(answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'ls /tmp'), home.env)).stdout).decision).toBe('allow');
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    expect(await verifies(home)).toBe(true);
  }, 120_000);

  it('random bytes over its header: refused as "not a database", repaired the same way', async () => {
    await journalCase((file) => {
      const fd = openSync(file, 'r+');
      writeSync(fd, Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 97 + 13) % 256)), 0, 100, 0);
      closeSync(fd);
    }, /file is not a database/);
  }, 120_000);

  it('random bytes over one page: the start-up quick_check finds it, and the repair carries the intact confirmed configuration over', async () => {
    let revision = '';
    const { home, repair } = await journalCase((file) => {
      const db = new Database(file, { readonly: true });
      const pageSize = Number(db.pragma('page_size', { simple: true }));
      const root = db.prepare<[], { rootpage: number }>("SELECT rootpage FROM sqlite_master WHERE name = 'events'").get()?.rootpage ?? 0;
      revision = (JSON.parse(db.prepare<[], { value: string }>("SELECT value FROM daemon_meta WHERE key = 'pinned_config'").get()?.value ?? '{}') as { revision: string }).revision;
      db.close();
      expect(root).toBeGreaterThan(1);
      const fd = openSync(file, 'r+');
      writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (root - 1) * pageSize);
      closeSync(fd);
    }, /quick_check|malformed/);
    expect(revision).toMatch(/^v1:sha256:/);
    expect(repair.stdout).toContain(`with the confirmed configuration (revision ${revision})`);
    await home.startDaemon();
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { config: { pinnedRevision: string } } };
    expect(status.data.config.pinnedRevision).toBe(revision);
  }, 120_000);
});

describe('a torn last line in the audit file (issue 35)', () => {
  it('the daemon refuses to start and leaves the torn bytes alone; verify names the line; `assent audit repair` needs a typed code, keeps a backup, cuts the line and records the cut; the chain verifies', async () => {
    const home = await usedHome();
    const [day] = readdirSync(home.paths.auditDir).filter((name) => name.endsWith('.jsonl'));
    const file = join(home.paths.auditDir, day ?? '');
    const whole = readFileSync(file);
    // A crash in the middle of writing the third line: its last 40 bytes (and the newline) never reached the disk.
    truncateSync(file, whole.length - 40);
    const torn = readFileSync(file);
    const tornStart = torn.lastIndexOf(0x0a) + 1;
    const marker = join(home.home, '..', 'marker');

    // 1. Fail closed, naming the file, the line and the repair; the torn bytes are neither dropped nor written over.
    const call = await gatedCall(home, marker);
    expect(call.decision).toBe('deny');
    expect(call.reason).toContain(`the audit file ${file} ends in a torn line: the last line (line 3, ${torn.length - tornStart} bytes) has no newline and its JSON is cut short`);
    expect(call.reason).toContain('run `assent audit repair`');
    expect(existsSync(marker)).toBe(false);
    const run = await home.runCli(['daemon', 'run']);
    expect(run.code).toBe(65);
    expect(run.stderr).toMatch(new RegExp(`^assent: the audit file ${file} ends in a torn line: .*assent will not start on it; run \`assent audit repair\``));
    expect(readFileSync(file).equals(torn)).toBe(true);

    // 2. verify names the first bad line, what is wrong and the fix; doctor finds it too.
    const verify = await home.runCli(['audit', 'verify']);
    expect(verify.code).toBe(65);
    expect(verify.stderr).toContain(`assent: audit chain broken at ${file}:3 (line 3): torn last line: not valid JSON (${torn.length - tornStart} bytes, no newline, its JSON cut short)`);
    expect(verify.stderr).toContain('run `assent audit repair`');
    const verifyJson = JSON.parse((await home.runCli(['audit', 'verify', '--json'])).stdout) as { ok: boolean; error: { details: { firstBroken: { line: number; path: string; fix: string } } } };
    expect(verifyJson.ok).toBe(false);
    expect(verifyJson.error.details.firstBroken).toMatchObject({ line: 3, path: file, fix: expect.stringContaining('assent audit repair') });
    const report = await doctor(home);
    expect(report.code).toBe(65);
    expect(report.text).toContain(`- ${file}:3: the last line (line 3, ${torn.length - tornStart} bytes) has no newline and its JSON is cut short`);
    expect(report.text).toContain('fix: run `assent audit repair`');
    expect(report.json.data.state.damaged).toEqual([expect.objectContaining({ kind: 'audit-tail', file, line: 3, fix: expect.stringContaining('assent audit repair') })]);

    // 3. No change without a typed code: no terminal refuses; a wrong code at the terminal refuses.
    const headless = await home.runCli(['audit', 'repair']);
    expect(headless.code).toBe(77);
    expect(headless.stderr).toMatch(/nothing was changed/);
    const wrong = new PtySession(['audit', 'repair'], { outFile: join(home.home, 'wrong.out'), env: { ASSENT_HOME: home.home } });
    cleanups.push(() => wrong.kill());
    await wrong.waitFor(/Type ([a-z]{4}) to repair/);
    wrong.type('zzzz\r');
    expect((await wrong.finish(join(home.home, 'wrong.out'))).exitCode).toBe(77);
    expect(readFileSync(file).equals(torn)).toBe(true);
    expect(backupsOf(file)).toEqual([]);

    // 4. The typed code repairs: the whole file is kept first, the torn line cut, the cut recorded in the chain.
    const repair = await runInTerminal(['audit', 'repair'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(repair.exitCode, repair.screen).toBe(0);
    const [backup] = backupsOf(file);
    const backupPath = join(home.paths.auditDir, backup ?? '');
    expect(repair.stdout).toContain(`Kept the whole file as it was: ${backupPath}`);
    expect(repair.stdout).toContain('assent audit verify: intact, 3 lines.');
    expect(readFileSync(backupPath).equals(torn)).toBe(true);
    const lines = auditLines(home);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatchObject({ seq: 3, server: 'assent', tool: 'audit repair', outcome: 'ok', caller: { line: 3, bytes: torn.length - tornStart, sha256: sha256(torn.subarray(tornStart)), backup } });
    expect(await verifies(home)).toBe(true);

    // 5. The daemon starts again and continues the chain after the cut.
    expect(answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'ls /tmp'), home.env)).stdout).decision).toBe('allow');
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    // The chain runs on without a gap; the calls refused while no daemon could start are audited from the hook's spool (R-AUD-1).
    const after = auditLines(home);
    expect(after.map((line) => line['seq'])).toEqual(after.map((_, index) => index + 1));
    expect(after.filter((line) => line['deniedReason'] !== 'unavailable')).toHaveLength(4);
    expect(after.filter((line) => line['deniedReason'] === 'unavailable').length).toBeGreaterThan(0);
    expect(await verifies(home)).toBe(true);
  }, 120_000);
});

describe('a config.json cut in the middle (issue 35)', () => {
  const FULL = JSON.stringify({ ...ALLOW_AGENTS, policy: { agents: { default: 'allow' }, tools: { 'claude/Read': 'allow' } } }, null, 2);

  it('before anything was confirmed: the daemon does not start on it, the hook is refused naming config.json and how to restore it; restored, the chain verifies', async () => {
    const home = newHome(FULL.slice(0, Math.floor(FULL.length / 2)));
    const marker = join(home.home, '..', 'marker');
    const call = await gatedCall(home, marker);
    expect(call.decision).toBe('deny');
    expect(call.reason).toContain(`config ${home.paths.config} ends in the middle of its JSON after ${Math.floor(FULL.length / 2)} bytes, as a write cut short leaves it`);
    expect(call.reason).toMatch(/restore it from your own copy, or run `assent init --force`/);
    expect(existsSync(marker)).toBe(false);
    expect(daemonsForHome(home.home)).toEqual([]);
    const report = await doctor(home);
    expect(report.code).toBe(65);
    expect(report.text).toContain(`- ${home.paths.config}: it ends in the middle of its JSON`);
    expect(report.text).toMatch(/now: a daemon with no confirmed configuration does not start on it/);
    expect(report.json.data.state.damaged).toEqual([expect.objectContaining({ kind: 'config', file: home.paths.config, fix: expect.stringContaining('assent init --force') })]);

    writeFileSync(home.paths.config, FULL);
    expect(answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'ls /tmp'), home.env)).stdout).decision).toBe('allow');
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    // The allow, and the refusal made while no daemon could start, audited from the hook's spool (R-AUD-1).
    expect(auditLines(home).filter((line) => line['deniedReason'] !== 'unavailable')).toHaveLength(1);
    expect(auditLines(home).filter((line) => line['deniedReason'] === 'unavailable')).toHaveLength(1);
    expect(await verifies(home)).toBe(true);
  }, 120_000);

  it('after a configuration was confirmed: the cut file never decides — the confirmed policy keeps refusing, doctor names the file, reload refuses it; the chain verifies', async () => {
    // The confirmed policy refuses the agent's shell; an edit that would allow it is cut halfway through its write.
    const home = await usedHome({ ...ALLOW_AGENTS, policy: { agents: { default: 'allow' }, tools: { 'claude/Bash': 'deny' } } }, 0);
    const edit = JSON.stringify({ ...ALLOW_AGENTS, policy: { agents: { default: 'allow' } } }, null, 2);
    writeFileSync(home.paths.config, edit.slice(0, Math.floor(edit.length / 2)));

    const marker = join(home.home, '..', 'marker');
    const call = await gatedCall(home, marker);
    expect(call.decision).toBe('deny');
    expect(call.reason).toMatch(/policy\.tools\.claude\/Bash/);
    expect(existsSync(marker)).toBe(false);
    const report = await doctor(home);
    expect(report.code).toBe(65);
    expect(report.text).toContain(`- ${home.paths.config}: it ends in the middle of its JSON`);
    expect(report.text).toContain('now: the daemon keeps running the configuration you last confirmed; this file is not applied');
    const refusedReload = await home.runCli(['config', 'reload']);
    expect(refusedReload.code).toBe(65);
    expect(refusedReload.stderr).toMatch(/config\.json has 1 error\(s\); run `assent config check`/);
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    expect(await verifies(home)).toBe(true);
  }, 120_000);
});

describe('a 0-byte confirmed configuration (issue 35)', () => {
  it('the daemon runs fail-closed — the hook is refused, agent shell commands included — and says the pin is empty; `assent config reload` replaces it, keeping the damaged record; the chain verifies', async () => {
    const home = await usedHome();
    const db = new Database(home.paths.journal);
    expect(db.prepare("UPDATE daemon_meta SET value = '' WHERE key = 'pinned_config'").run().changes).toBe(1);
    db.close();
    const marker = join(home.home, '..', 'marker');

    // 1. Fail closed: the fail-closed stand-in runs, not config.json, and it refuses even the commands the built-in rules allow.
    const call = await gatedCall(home, marker);
    expect(call.decision).toBe('deny');
    expect(call.reason).toContain(`the fail-closed stand-in for the confirmed configuration of ${home.paths.config}, which is damaged (\`assent config reload\` replaces it)`);
    expect(existsSync(marker)).toBe(false);
    // The built-in rules would allow both: a read of a path, and a command that names none.
    for (const command of ['ls /tmp', 'echo fail-closed']) expect(answerOf((await runHook(['claude-code'], shellEvent('claude-code', command), home.env)).stdout).decision).toBe('deny');

    // 2. Operators are told what is wrong and what to do: daemon status, daemon.log, doctor (text and JSON).
    const status = JSON.parse((await home.runCli(['daemon', 'status', '--json'])).stdout) as { data: { config: { confirmedInvalid?: { message: string } } } };
    expect(status.data.config.confirmedInvalid?.message).toContain(`kept in ${home.paths.journal} (meta key pinned_config), is damaged: empty (0 bytes)`);
    expect(status.data.config.confirmedInvalid?.message).toContain('`assent config reload`');
    expect(readFileSync(home.paths.log, 'utf8')).toContain('is damaged: empty (0 bytes); the daemon runs fail-closed');
    const report = await doctor(home);
    expect(report.code).toBe(65);
    expect(report.text).toContain(`- ${home.paths.journal}: the confirmed configuration kept in it (meta key pinned_config) is damaged: empty (0 bytes)`);
    expect(report.text).toContain('now: the daemon runs fail-closed');
    expect(report.json.data.state.damaged).toEqual([expect.objectContaining({ kind: 'confirmed-config', file: home.paths.journal, fix: expect.stringContaining('assent config reload') })]);

    // 3. The repair is a confirmed reload (a typed code); the damaged record is kept beside the new one.
    const reload = await runInTerminal(['config', 'reload'], { env: { ASSENT_HOME: home.home }, typeCode: true });
    expect(reload.exitCode, reload.screen).toBe(0);
    expect(answerOf((await runHook(['claude-code'], shellEvent('claude-code', 'ls /tmp'), home.env)).stdout).decision).toBe('allow');
    expect((await home.runCli(['daemon', 'stop'])).code).toBe(0);
    const after = new Database(home.paths.journal, { readonly: true });
    expect(after.prepare<[], { value: string }>("SELECT value FROM daemon_meta WHERE key = 'pinned_config_damaged'").get()?.value).toBe('');
    after.close();
    expect((await doctor(home)).json.data.state.damaged).toEqual([]);
    expect(await verifies(home)).toBe(true);
  }, 120_000);
});
