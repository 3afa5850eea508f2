// R-HOOK-14 end to end for Factory Droid: the real `droid exec`, offline
// against a scripted Chat Completions model, gated by what `assent install
// droid` wrote into ~/.factory/hooks.json of the run's temp HOME and a real
// assent daemon. One run carries every acceptance check that needs the CLI:
// the model calls Execute eight times and the test decides, waits, breaks the
// state dir or stops the daemon between the calls. A project hook of the
// work dir answers "allow" to every call, ahead of assent's (Droid runs the
// project's hooks first and takes the first permissionDecision): assent's
// deny, which adds exit 2, must win over it. A second, short run shows what
// doctor says of hooksDisabled: Droid then runs no hook at all.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeDigestOf } from '../../../src/journal/nativeHash.js';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, runAgent, straceTestsRun, type AgentRun } from '../../helpers/agentClis.js';
import { auditLines, makeTempHome, REPO_ROOT, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel, type FakeModel, type ModelStep, type RecordedRequest } from '../../helpers/fakeModels.js';
import { PtySession, runInTerminal } from '../../helpers/pty.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable(['droid']);
if (!available) process.stderr.write(`skipping the Factory Droid hook tests: ${AGENT_CLIS_SKIP_REASON}\n`);
const trace = available && straceTestsRun();

const cleanups = cleanupsAfterEach();

const execute = (command: string): Record<string, unknown> => ({ command, summary: 'assent hook test', riskLevel: 'low', riskLevelReason: 'touches a file in the work dir' });

/** Every command's effect is a file in the work dir: whether (and how often) it ran is read from there. */
const COMMANDS = {
  allowed: 'touch allowed.marker',
  denied: 'touch denied.marker',
  compound: 'touch first.marker && touch denied.marker',
  approved: 'echo ran >> approved.count',
  refused: 'echo ran >> refused.count',
  unanswered: 'echo ran >> waited.count',
  unsafe: 'touch late.marker',
  noDaemon: 'touch nodaemon.marker',
};
const ORDER = ['allowed', 'denied', 'compound', 'approved', 'refused', 'unanswered', 'unsafe', 'noDaemon'] as const;
const POLICY = {
  commands: {
    default: 'prompt',
    rules: [
      { match: 'touch allowed.marker', decision: 'allow' },
      { match: 'touch late.marker', decision: 'allow' },
      { match: 'touch nodaemon.marker', decision: 'allow' },
      { match: 'touch first.marker', decision: 'allow' },
      { match: 'touch denied.marker', decision: 'deny' },
    ],
  },
};

/** The person's own hooks.json before install: a comment and a hook of theirs, which install and uninstall keep. */
const BEFORE_HOOKS = '// my hooks\n{\n    "SessionStart": [ { "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ]\n}\n';

/**
 * The install sees hooks.timeoutSeconds 2, so Droid's hook timeout is 17 s and
 * the hook answers at 14 s; the daemon lets a person take 60 s, so an
 * unanswered prompt can only end at that deadline (Droid itself would run the
 * call when its timeout passes).
 */
const INSTALLED_TIMEOUT_S = 17;
const HOOK_DEADLINE_S = 14;

function count(work: string, name: string): number {
  const file = join(work, name);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

function describeRun(run: AgentRun): string {
  return `exit ${String(run.exitCode)}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-2500)}\nstderr: ${run.stderr.slice(-1500)}`;
}

interface Pending {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  caller: Record<string, unknown>;
}

/** The pending approval for `command`; fails at once when the run ends first. */
async function waitForPending(home: TempHome, command: string, run: Promise<AgentRun>): Promise<Pending> {
  let ended: AgentRun | undefined;
  void run.then((finished) => (ended = finished));
  for (let i = 0; i < 1200; i += 1) {
    if (ended !== undefined) throw new Error(`the run ended before ${command} was filed: ${describeRun(ended)}`);
    const list = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: Pending[] }).data;
    const found = list.find((p) => p.args['command'] === command);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no approval was filed for ${command}`);
}

async function decideInTerminal(home: TempHome, id: string, behavior: 'approve' | 'deny'): Promise<void> {
  const outFile = join(home.home, `${behavior}-${id}.out`);
  const pty = new PtySession([behavior, id], { outFile, env: { ASSENT_HOME: home.home } });
  cleanups.push(() => pty.kill());
  if (behavior === 'approve') {
    const code = await pty.waitFor(/Type ([a-z]{4}) to approve/);
    pty.type(`${code[1]}\r`);
  }
  expect((await pty.finish(outFile)).exitCode, pty.screen).toBe(0);
}

async function stateHome(config: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  return home;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** How many model turns a Chat Completions request already holds: the index of the script step it gets. */
function stepIndexOf(request: RecordedRequest): number | undefined {
  const body = request.body as { tools?: unknown[]; messages?: { role?: string }[] };
  if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  return (body.messages ?? []).filter((message) => message.role === 'assistant').length;
}

/** The tool result the model got for the call whose input held `command`. */
function resultFor(model: FakeModel, command: string): string | undefined {
  const last = model.turns().at(-1)?.body as { messages?: { tool_calls?: { id: string; function: { arguments: string } }[] }[] } | undefined;
  const call = (last?.messages ?? []).flatMap((m) => m.tool_calls ?? []).find((c) => c.function.arguments.includes(JSON.stringify(command).slice(1, -1)));
  return call === undefined ? undefined : model.toolResults().find((r) => r.callId === call.id)?.output;
}

interface DoctorReport {
  agent: string;
  installed: boolean;
  command: string | null;
  timeoutOk: boolean;
  blocksCanary: boolean;
  problems: string[];
}

async function droidReport(state: TempHome, agentHome: string, cwd?: string): Promise<{ code: number | null; report: DoctorReport | undefined; stdout: string }> {
  const doctor = await state.runCli(['doctor', '--json'], { env: { HOME: agentHome }, ...(cwd === undefined ? {} : { cwd }) });
  const report = (JSON.parse(doctor.stdout) as { data?: { agents?: DoctorReport[] } }).data?.agents?.find((a) => a.agent === 'droid' && (a as { scope?: string }).scope === 'user');
  return { code: doctor.code, report, stdout: doctor.stdout };
}

describe.skipIf(!available)('R-HOOK-14 Factory Droid gated by assent', () => {
  it(
    `R-HOOK-14 R-HOOK-11 R-HOOK-4 droid: allowed runs with no approval; denied and a compound with a denied part never run, though a project hook answers allow, and the model reads why; a prompt runs once when approved in a PTY and never when denied; unanswered ends at the hook's deadline before Droid's; an unsafe state dir and a stopped daemon block an allowed command; one audit line per decision and the after-event's, naming droid; doctor is truthful; uninstall restores hooks.json byte for byte${trace ? '; only loopback is contacted' : ''}`,
    async () => {
      const installState = await stateHome({ hooks: { timeoutSeconds: 2 } });
      const home = await stateHome({ hooks: { timeoutSeconds: 60 }, policy: POLICY });
      const daemon = await home.startDaemon();
      const dir = mkdtempSync(join(tmpdir(), 'assent-droid-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const work = join(dir, 'work');
      mkdirSync(join(work, '.factory'), { recursive: true });
      // The project's own PreToolUse hook: it answers allow to every call and counts its runs.
      const projectHook = join(dir, 'project-hook.sh');
      writeFileSync(
        projectHook,
        `#!/bin/sh\ncat > /dev/null\necho ran >> ${JSON.stringify(join(dir, 'project-hook.count'))}\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"the project allows everything"}}'\n`,
        { mode: 0o755 },
      );
      writeFileSync(join(work, '.factory', 'hooks.json'), JSON.stringify({ PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: projectHook, timeout: 10 }] }] }));
      cleanups.push(() => chmodSync(home.home, 0o700));

      let waitingSince = 0;
      let waited = 0;
      const model = await startFakeModel('chat', [...ORDER.map((name) => ({ tool: 'Execute', input: execute(COMMANDS[name]) }) as ModelStep), { text: 'done' }], {
        // Between the calls: the unsafe call's hook finds the state dir open to everyone; the next one finds no daemon.
        beforeReply: async (request) => {
          const step = stepIndexOf(request);
          if (step === ORDER.indexOf('unsafe')) {
            waited = performance.now() - waitingSince;
            chmodSync(home.home, 0o777);
          }
          if (step === ORDER.indexOf('noDaemon')) {
            chmodSync(home.home, 0o700);
            await stop(daemon);
          }
        },
      });
      cleanups.push(() => model.close());

      let installed = '';
      let doctorAfterRun: Awaited<ReturnType<typeof droidReport>> | undefined;
      let tooShort: Awaited<ReturnType<typeof droidReport>> | undefined;
      let uninstalled: { exitCode: number; screen: string; text: string | undefined } | undefined;
      const run = runAgent('droid', {
        model,
        cwd: work,
        prompt: 'Run the commands.',
        env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
        timeoutMs: 150_000,
        traceConnections: trace,
        prepareHome: async (agentHome) => {
          writeFileSync(join(agentHome, '.factory', 'hooks.json'), BEFORE_HOOKS);
          const result = await installState.runCli(['install', 'droid', '--json'], { env: { HOME: agentHome } });
          expect(result.code, result.stderr).toBe(0);
          expect((JSON.parse(result.stdout) as { data: { timeout: number } }).data.timeout).toBe(INSTALLED_TIMEOUT_S);
          installed = readFileSync(join(agentHome, '.factory', 'hooks.json'), 'utf8');
          expect(installed.startsWith('// my hooks\n')).toBe(true);
        },
        afterRun: async (agentHome) => {
          chmodSync(home.home, 0o700);
          const hooksFile = join(agentHome, '.factory', 'hooks.json');
          expect(readFileSync(hooksFile, 'utf8'), 'Droid left hooks.json as install wrote it').toBe(installed);
          // Doctor against the daemon whose pinned hooks.timeoutSeconds (2 s) the install saw, from the work dir with its project hook.
          await installState.startDaemon();
          doctorAfterRun = await droidReport(installState, agentHome, work);
          // A timeout edited down by hand leaves no margin: doctor says so.
          writeFileSync(hooksFile, installed.replace(/"timeout": 17/, '"timeout": 5'));
          tooShort = await droidReport(installState, agentHome);
          writeFileSync(hooksFile, installed);
          const done = await runInTerminal(['uninstall', 'droid'], { env: { HOME: agentHome, ASSENT_HOME: installState.home }, typeCode: true });
          uninstalled = { exitCode: done.exitCode, screen: done.screen, text: existsSync(hooksFile) ? readFileSync(hooksFile, 'utf8') : undefined };
        },
      });
      const approved = await waitForPending(home, COMMANDS.approved, run);
      expect(approved).toMatchObject({ tool: 'Execute', caller: { head: 'hook', agent: 'droid', cwd: work, kind: 'shell' } });
      expect(count(work, 'approved.count')).toBe(0);
      await decideInTerminal(home, approved.id, 'approve');
      const refused = await waitForPending(home, COMMANDS.refused, run);
      await decideInTerminal(home, refused.id, 'deny');
      await waitForPending(home, COMMANDS.unanswered, run);
      waitingSince = performance.now();
      const finished = await run;

      expect(finished.exitCode, describeRun(finished)).toBe(0);
      expect(existsSync(join(work, 'allowed.marker')), describeRun(finished)).toBe(true);
      // The project's hook ran for every call and answered allow; assent's exit 2 still refused these.
      expect(count(dir, 'project-hook.count')).toBe(ORDER.length);
      expect(existsSync(join(work, 'denied.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.denied)).toContain('assent refused droid/Execute: policy');
      expect(existsSync(join(work, 'first.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.compound)).toContain('assent refused droid/Execute: policy');
      expect(count(work, 'approved.count')).toBe(1);
      expect(count(work, 'refused.count')).toBe(0);
      expect(resultFor(model, COMMANDS.refused)).toContain('consent_denied');
      expect(count(work, 'waited.count')).toBe(0);
      expect(resultFor(model, COMMANDS.unanswered)).toMatch(/consent_timeout|no decision within the hook's deadline/);
      // The hook answered at its deadline (14 s after it started), before Droid's own 17 s.
      expect(waited).toBeLessThan(INSTALLED_TIMEOUT_S * 1000);
      expect(waited).toBeGreaterThan((HOOK_DEADLINE_S - 5) * 1000);
      expect(existsSync(join(work, 'late.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.unsafe)).toContain('state_insecure');
      expect(existsSync(join(work, 'nodaemon.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.noDaemon)).toContain('unavailable');

      // R-HOOK-10: one decision line per call, naming droid, by the digest of the exact input; the allowed and
      // the approved call also have the after-event's line. The no-daemon call's refusal was spooled by the hook
      // and comes in when a daemon starts again; the unsafe call's hook trusted nothing in the open state dir.
      await home.startDaemon();
      await expect.poll(() => auditLines(home).some((line) => line['deniedReason'] === 'unavailable'), { timeout: 15_000 }).toBe(true);
      const lines = auditLines(home);
      for (const line of lines) expect(line, JSON.stringify(line)).toMatchObject({ agent: 'droid', server: 'droid', tool: 'Execute', argsSha256: expect.stringMatching(/^v1:sha256:[0-9a-f]{64}$/) });
      const outcomes = (name: (typeof ORDER)[number]): unknown[] => lines.filter((line) => line['argsSha256'] === nativeDigestOf(execute(COMMANDS[name]))).map((line) => line['outcome']);
      expect(outcomes('allowed')).toEqual(['started', 'ok']);
      expect(outcomes('denied')).toEqual(['denied']);
      expect(outcomes('compound')).toEqual(['denied']);
      expect(outcomes('approved')).toEqual(['started', 'ok']);
      expect(outcomes('refused')).toEqual(['consent_denied']);
      expect(outcomes('unanswered')).toEqual(['consent_timeout']);
      expect(outcomes('unsafe')).toEqual([]);
      expect(outcomes('noDaemon')).toEqual(['denied']);
      expect(lines.find((line) => line['argsSha256'] === nativeDigestOf(execute(COMMANDS.noDaemon)))).toMatchObject({ deniedReason: 'unavailable' });
      expect(lines).toHaveLength(9);
      const allowedLine = lines.find((line) => line['argsSha256'] === nativeDigestOf(execute(COMMANDS.allowed)));
      expect(allowedLine?.['approvalId']).toBeUndefined();
      const audit = JSON.stringify(lines);
      for (const text of ['allowed.marker', 'approved.count', 'denied.marker', work]) expect(audit).not.toContain(text);

      // Doctor after the run: installed, this assent's hook, the margin, the canary blocked, nothing switched off.
      expect(doctorAfterRun?.code, doctorAfterRun?.stdout).toBe(0);
      expect(doctorAfterRun?.report, doctorAfterRun?.stdout).toMatchObject({ installed: true, timeoutOk: true, blocksCanary: true, problems: [] });
      expect(doctorAfterRun?.report?.command).toContain(join(REPO_ROOT, 'dist', 'bin', 'assent-hook.js'));
      expect(tooShort?.code).toBe(65);
      expect(tooShort?.report?.timeoutOk).toBe(false);
      expect(tooShort?.report?.problems.join('\n')).toMatch(/PreToolUse hook timeout \(5 s\) leaves less than the hook's margin/);
      // Uninstall gives back the person's hooks.json byte for byte.
      expect(uninstalled?.exitCode, uninstalled?.screen).toBe(0);
      expect(uninstalled?.text).toBe(BEFORE_HOOKS);

      if (trace) expect(finished.outbound, JSON.stringify(finished.connections)).toEqual([]);
      expect(finished.proxied).toEqual([]);
    },
    200_000,
  );

  it('R-HOOK-14 droid: with "hooksDisabled": true in ~/.factory/settings.json doctor says Droid gates nothing, and a real run shows it: a command the policy denies runs and nothing is audited', async () => {
    const home = await stateHome({ policy: POLICY });
    await home.startDaemon();
    const dir = mkdtempSync(join(tmpdir(), 'assent-droid-off-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const model = await startFakeModel('chat', [{ tool: 'Execute', input: execute(COMMANDS.denied) }, { text: 'done' }]);
    cleanups.push(() => model.close());
    let doctor: Awaited<ReturnType<typeof droidReport>> | undefined;
    const run = await runAgent('droid', {
      model,
      cwd: dir,
      env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      prepareHome: async (agentHome) => {
        expect((await home.runCli(['install', 'droid'], { env: { HOME: agentHome } })).code).toBe(0);
        writeFileSync(join(agentHome, '.factory', 'settings.json'), '{\n  "hooks": { "hooksDisabled": true }\n}\n');
        doctor = await droidReport(home, agentHome);
      },
    });
    expect(doctor?.code, doctor?.stdout).toBe(65);
    expect(doctor?.report, doctor?.stdout).toMatchObject({ installed: true, blocksCanary: true });
    expect(doctor?.report?.problems.join('\n')).toMatch(/"hooks": \{"hooksDisabled": true\} in .*\.factory\/settings\.json: Droid gates nothing while hooksDisabled is true/);
    expect(run.exitCode, describeRun(run)).toBe(0);
    expect(existsSync(join(dir, 'denied.marker')), describeRun(run)).toBe(true);
    expect(auditLines(home)).toEqual([]);
  }, 90_000);
});
