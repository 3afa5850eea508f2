// R-HOOK-14 end to end for Auggie: the real `auggie -p`, offline against a
// fake Augment tenant (test/helpers/fakeAugment.ts) whose `/get-models` answer
// switches hooks on, gated by what `assent install auggie` wrote into
// ~/.augment/settings.json of the run's temp HOME and a real assent daemon.
// One run carries every acceptance check that needs the CLI: the model calls
// launch-process eight times and the test decides, waits, breaks the state dir
// or stops the daemon between the calls. A second, short run has the tenant
// leave hooks off: Auggie then runs a command the policy denies, and doctor,
// reading Auggie's own log, says so.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeDigestOf } from '../../../src/journal/nativeHash.js';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, runAgent, straceTestsRun, type AgentRun } from '../../helpers/agentClis.js';
import { auditLines, CLI_ENTRY, makeTempHome, REPO_ROOT, type TempHome } from '../../helpers/daemon.js';
import { augmentStepIndex, augmentToolInput, startFakeAugment } from '../../helpers/fakeAugment.js';
import type { FakeModel, ModelStep } from '../../helpers/fakeModels.js';
import { PtySession, runInTerminal } from '../../helpers/pty.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable(['auggie']);
if (!available) process.stderr.write(`skipping the Auggie hook tests: ${AGENT_CLIS_SKIP_REASON}\n`);
const trace = available && straceTestsRun();

const cleanups = cleanupsAfterEach();

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

/** The person's own settings.json before install, hand-formatted, with a key and a hook of theirs that install and uninstall keep. */
const BEFORE_SETTINGS = '{\n    "model": "fake-model",\n    "hooks": {\n        "SessionStart": [ { "hooks": [ { "type": "command", "command": "/usr/bin/true" } ] } ]\n    }\n}\n';

/**
 * The install sees hooks.timeoutSeconds 2, so Auggie's hook timeout is 17 s
 * (17000 ms in settings.json) and the hook answers at 14 s; the daemon lets a
 * person take 60 s, so an unanswered prompt can only end at that deadline
 * (Auggie itself would run the call when its timeout passes).
 */
const INSTALLED_TIMEOUT_S = 17;
const HOOK_DEADLINE_S = 14;

function launch(work: string, command: string): Record<string, unknown> {
  return { command, wait: true, max_wait_seconds: 30, cwd: work };
}

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

/** The pending approval whose args hold `value` under `key` (the command, by default); fails at once when the run ends first. */
async function waitForPending(home: TempHome, value: string, run: Promise<AgentRun>, key = 'command'): Promise<Pending> {
  let ended: AgentRun | undefined;
  void run.then((finished) => (ended = finished));
  for (let i = 0; i < 1200; i += 1) {
    if (ended !== undefined) throw new Error(`the run ended before ${value} was filed: ${describeRun(ended)}`);
    const list = (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: Pending[] }).data;
    const found = list.find((p) => p.args[key] === value);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no approval was filed for ${value}`);
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

/** The tool result the model got for the call whose input held `command`. */
function resultFor(model: FakeModel, command: string): string | undefined {
  const last = model.turns().at(-1)?.body as Record<string, unknown> | undefined;
  if (last === undefined) return undefined;
  return model.toolResults().find((result) => augmentToolInput(last, result.callId)?.['command'] === command)?.output;
}

interface DoctorReport {
  agent: string;
  scope: string;
  installed: boolean;
  command: string | null;
  timeoutOk: boolean;
  blocksCanary: boolean;
  auggieHooks?: string;
  problems: string[];
  notes: string[];
}

/** Doctor as the person at that HOME would run it: the same TMPDIR as Auggie's, so the same augment-log.txt. */
async function auggieReport(state: TempHome, agentHome: string): Promise<{ code: number | null; report: DoctorReport | undefined; stdout: string }> {
  const doctor = await state.runCli(['doctor', '--json'], { env: { HOME: agentHome, TMPDIR: join(agentHome, 'tmp') } });
  const report = (JSON.parse(doctor.stdout) as { data?: { agents?: DoctorReport[] } }).data?.agents?.find((a) => a.agent === 'auggie' && a.scope === 'user');
  return { code: doctor.code, report, stdout: doctor.stdout };
}

describe.skipIf(!available)('R-HOOK-14 Auggie gated by assent', () => {
  it(
    `R-HOOK-14 R-HOOK-11 R-HOOK-4 auggie: allowed runs with no approval; denied and a compound with a denied part never run and the model reads why; a prompt runs once when approved in a PTY and never when denied; unanswered ends at the hook's deadline before Auggie's; an unsafe state dir and a stopped daemon block an allowed command; one audit line per decision and the after-event's, naming auggie; doctor is truthful (installed, this assent, the margin, the server switch Auggie's log shows); uninstall restores settings.json byte for byte${trace ? '; only loopback is contacted' : ''}`,
    async () => {
      const installState = await stateHome({ hooks: { timeoutSeconds: 2 } });
      const home = await stateHome({ hooks: { timeoutSeconds: 60 }, policy: POLICY });
      const daemon = await home.startDaemon();
      const dir = mkdtempSync(join(tmpdir(), 'assent-auggie-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const work = join(dir, 'work');
      mkdirSync(work);
      cleanups.push(() => chmodSync(home.home, 0o700));

      let waitingSince = 0;
      let waited = 0;
      const steps = [...ORDER.map((name) => ({ tool: 'launch-process', input: launch(work, COMMANDS[name]) }) as ModelStep), { text: 'done' }];
      const model = await startFakeAugment(steps, {
        enableHooks: true,
        // Between the calls: the unsafe call's hook finds the state dir open to everyone; the next one finds no daemon.
        beforeReply: async (request) => {
          const step = augmentStepIndex(request);
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
      let doctorAfterRun: Awaited<ReturnType<typeof auggieReport>> | undefined;
      let tooShort: Awaited<ReturnType<typeof auggieReport>> | undefined;
      let uninstalled: { exitCode: number; screen: string; text: string | undefined } | undefined;
      const run = runAgent('auggie', {
        model,
        cwd: work,
        prompt: 'Run the commands.',
        env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
        timeoutMs: 150_000,
        traceConnections: trace,
        prepareHome: async (agentHome) => {
          writeFileSync(join(agentHome, '.augment', 'settings.json'), BEFORE_SETTINGS);
          const result = await installState.runCli(['install', 'auggie', '--json'], { env: { HOME: agentHome } });
          expect(result.code, result.stderr).toBe(0);
          // install reports the timeout in the unit it writes: milliseconds for Auggie.
          expect((JSON.parse(result.stdout) as { data: { timeout: number } }).data.timeout).toBe(INSTALLED_TIMEOUT_S * 1000);
          installed = readFileSync(join(agentHome, '.augment', 'settings.json'), 'utf8');
          expect(installed).toContain(`"timeout": ${INSTALLED_TIMEOUT_S * 1000}`);
          expect(installed).toContain('"includeMCPMetadata": true');
        },
        afterRun: async (agentHome) => {
          chmodSync(home.home, 0o700);
          const settingsFile = join(agentHome, '.augment', 'settings.json');
          expect(readFileSync(settingsFile, 'utf8'), 'Auggie left settings.json as install wrote it').toBe(installed);
          // Doctor against the daemon whose pinned hooks.timeoutSeconds (2 s) the install saw.
          await installState.startDaemon();
          doctorAfterRun = await auggieReport(installState, agentHome);
          // A timeout edited down by hand leaves no margin: doctor says so.
          writeFileSync(settingsFile, installed.replace(`"timeout": ${INSTALLED_TIMEOUT_S * 1000}`, '"timeout": 5000'));
          tooShort = await auggieReport(installState, agentHome);
          writeFileSync(settingsFile, installed);
          const done = await runInTerminal(['uninstall', 'auggie'], { env: { HOME: agentHome, ASSENT_HOME: installState.home }, typeCode: true });
          uninstalled = { exitCode: done.exitCode, screen: done.screen, text: existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : undefined };
        },
      });
      const approved = await waitForPending(home, COMMANDS.approved, run);
      expect(approved).toMatchObject({ tool: 'launch-process', caller: { head: 'hook', agent: 'auggie', cwd: work, kind: 'shell' } });
      expect(count(work, 'approved.count')).toBe(0);
      await decideInTerminal(home, approved.id, 'approve');
      const refused = await waitForPending(home, COMMANDS.refused, run);
      await decideInTerminal(home, refused.id, 'deny');
      await waitForPending(home, COMMANDS.unanswered, run);
      waitingSince = performance.now();
      const finished = await run;

      expect(finished.exitCode, describeRun(finished)).toBe(0);
      expect(existsSync(join(work, 'allowed.marker')), describeRun(finished)).toBe(true);
      expect(existsSync(join(work, 'denied.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.denied)).toContain('assent refused auggie/launch-process: policy');
      expect(existsSync(join(work, 'first.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.compound)).toContain('assent refused auggie/launch-process: policy');
      expect(count(work, 'approved.count')).toBe(1);
      expect(count(work, 'refused.count')).toBe(0);
      expect(resultFor(model, COMMANDS.refused)).toContain('consent_denied');
      expect(count(work, 'waited.count')).toBe(0);
      expect(resultFor(model, COMMANDS.unanswered)).toMatch(/consent_timeout|no decision within the hook's deadline/);
      // The hook answered at its deadline (14 s after it started), before Auggie's own 17 s, after which Auggie runs the call.
      expect(waited).toBeLessThan(INSTALLED_TIMEOUT_S * 1000);
      expect(waited).toBeGreaterThan((HOOK_DEADLINE_S - 5) * 1000);
      expect(existsSync(join(work, 'late.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.unsafe)).toContain('state_insecure');
      expect(existsSync(join(work, 'nodaemon.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.noDaemon)).toContain('unavailable');

      // R-HOOK-10: one decision line per call, naming auggie, by the digest of the exact input; the allowed and
      // the approved call also have the after-event's line. The no-daemon call's refusal was spooled by the hook
      // and comes in when a daemon starts again; the unsafe call's hook trusted nothing in the open state dir.
      await home.startDaemon();
      await expect.poll(() => auditLines(home).some((line) => line['deniedReason'] === 'unavailable'), { timeout: 15_000 }).toBe(true);
      const lines = auditLines(home);
      for (const line of lines) expect(line, JSON.stringify(line)).toMatchObject({ agent: 'auggie', server: 'auggie', tool: 'launch-process', argsSha256: expect.stringMatching(/^v1:sha256:[0-9a-f]{64}$/) });
      const outcomes = (name: (typeof ORDER)[number]): unknown[] => lines.filter((line) => line['argsSha256'] === nativeDigestOf(launch(work, COMMANDS[name]))).map((line) => line['outcome']);
      expect(outcomes('allowed')).toEqual(['started', 'ok']);
      expect(outcomes('denied')).toEqual(['denied']);
      expect(outcomes('compound')).toEqual(['denied']);
      expect(outcomes('approved')).toEqual(['started', 'ok']);
      expect(outcomes('refused')).toEqual(['consent_denied']);
      expect(outcomes('unanswered')).toEqual(['consent_timeout']);
      expect(outcomes('unsafe')).toEqual([]);
      expect(outcomes('noDaemon')).toEqual(['denied']);
      expect(lines.find((line) => line['argsSha256'] === nativeDigestOf(launch(work, COMMANDS.noDaemon)))).toMatchObject({ deniedReason: 'unavailable' });
      expect(lines).toHaveLength(9);
      const allowedLine = lines.find((line) => line['argsSha256'] === nativeDigestOf(launch(work, COMMANDS.allowed)));
      expect(allowedLine?.['approvalId']).toBeUndefined();
      const audit = JSON.stringify(lines);
      for (const text of ['allowed.marker', 'approved.count', 'denied.marker', work]) expect(audit).not.toContain(text);

      // Doctor after the run: installed, this assent's hook, the margin, the canary blocked, and what Auggie's log
      // says of Augment's switch at its last start (on), with how the person checks it.
      expect(doctorAfterRun?.code, doctorAfterRun?.stdout).toBe(0);
      expect(doctorAfterRun?.report, doctorAfterRun?.stdout).toMatchObject({ installed: true, timeoutOk: true, blocksCanary: true, auggieHooks: 'on', problems: [] });
      expect(doctorAfterRun?.report?.command).toContain(join(REPO_ROOT, 'dist', 'bin', 'assent-hook.js'));
      const notes = doctorAfterRun?.report?.notes.join('\n') ?? '';
      expect(notes).toMatch(/Auggie runs hooks only while Augment's server switches them on .*doctor cannot ask that server: its last start \(.*augment-log\.txt\) had them on, and read hooks from .*\.augment\/settings\.json/);
      expect(notes).toMatch(/type \/hooks/);
      expect(tooShort?.code).toBe(65);
      expect(tooShort?.report?.timeoutOk).toBe(false);
      expect(tooShort?.report?.problems.join('\n')).toMatch(/PreToolUse hook timeout \(5 s\) leaves less than the hook's margin/);
      // Uninstall gives back the person's settings.json byte for byte.
      expect(uninstalled?.exitCode, uninstalled?.screen).toBe(0);
      expect(uninstalled?.text).toBe(BEFORE_SETTINGS);

      expect(model.requests.filter((request) => request.kind === 'unknown').map((request) => request.path)).toEqual([]);
      if (trace) expect(finished.outbound, JSON.stringify(finished.connections)).toEqual([]);
      expect(finished.proxied).toEqual([]);
    },
    200_000,
  );

  it('R-HOOK-14 R-HOOK-5 auggie: an MCP tool of its own server (<tool>_<server>) is gated by the hook under that server\'s name; one reached through `assent install --mcp`\'s entry (<tool>_assent) is approved once, at the gateway, not again by the hook', async () => {
    const everything = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    const home = await stateHome({ servers: { everything: { command: process.execPath, args: [everything, 'stdio'] } }, policy: { default: 'allow', tools: { 'everything/echo': 'prompt' } } });
    await home.startDaemon();
    const dir = mkdtempSync(join(tmpdir(), 'assent-auggie-mcp-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // Auggie waits for its MCP servers to start before its first model request, so the gateway's tools are offered from the first turn.
    const model = await startFakeAugment([
      { tool: 'echo_assent', input: { message: 'through the gateway' } },
      { tool: 'echo_everything', input: { message: 'straight to the server' } },
      { text: 'done' },
    ]);
    cleanups.push(() => model.close());
    const run = runAgent('auggie', {
      model,
      cwd: dir,
      env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
      timeoutMs: 90_000,
      prepareHome: async (agentHome) => {
        const installed = await home.runCli(['install', 'auggie', '--mcp'], { env: { HOME: agentHome } });
        expect(installed.code, installed.stderr).toBe(0);
        // The gateway entry install wrote runs this assent's CLI.
        const file = join(agentHome, '.augment', 'settings.json');
        const settings = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> };
        expect(settings.mcpServers['assent']).toEqual({ command: process.execPath, args: [CLI_ENTRY, 'mcp'] });
        expect(Object.keys(settings.mcpServers).sort()).toEqual(['assent', 'everything']);
        // Auggie starts MCP servers with only PATH, HOME, USER, SHELL, TERM and LOGNAME of its environment (its hooks get
        // all of it): this daemon's ASSENT_HOME, not the default ~/.assent, has to be written into the entry.
        settings.mcpServers['assent'] = { command: process.execPath, args: [CLI_ENTRY, 'mcp'], env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' } };
        writeFileSync(file, JSON.stringify(settings, null, 2));
      },
    });
    const gateway = await waitForPending(home, 'through the gateway', run, 'message');
    expect(gateway).toMatchObject({ server: 'everything', tool: 'echo' });
    expect(gateway.caller['head']).not.toBe('hook');
    await decideInTerminal(home, gateway.id, 'approve');
    const direct = await waitForPending(home, 'straight to the server', run, 'message');
    expect(direct).toMatchObject({ tool: 'echo_everything', caller: { head: 'hook', agent: 'auggie', kind: 'mcp' } });
    await decideInTerminal(home, direct.id, 'approve');
    const finished = await run;
    expect(finished.exitCode, describeRun(finished)).toBe(0);
    const results = model.toolResults().map((result) => result.output);
    expect(results.some((output) => output.includes('Echo: through the gateway')), JSON.stringify(results)).toBe(true);
    expect(results.some((output) => output.includes('Echo: straight to the server')), JSON.stringify(results)).toBe(true);
    // Two approvals, one each: the gateway's (server everything) and the hook's (its started and ok lines); the
    // hook's answer for the gateway's own tool filed and audited nothing.
    const approvals = auditLines(home).filter((line) => line['approvalId'] !== undefined);
    expect(new Set(approvals.map((line) => line['approvalId'])).size).toBe(2);
    expect(approvals.map((line) => [line['server'], line['tool'], line['outcome']])).toEqual([
      ['everything', 'echo', 'ok'],
      ['auggie', 'echo_everything', 'started'],
      ['auggie', 'echo_everything', 'ok'],
    ]);
    expect(auditLines(home).filter((line) => line['agent'] === 'auggie').map((line) => line['tool'])).toEqual(['echo_everything', 'echo_everything']);
    expect(model.turns()[0]?.body).toMatchObject({ tool_definitions: expect.arrayContaining([expect.objectContaining({ name: 'echo_assent' })]) });
  }, 120_000);

  it("R-HOOK-14 auggie: while Augment's server leaves enable_hooks off, Auggie runs no hook: a command the policy denies runs, nothing is audited, and doctor says Auggie's last start had hooks off and how to check", async () => {
    const home = await stateHome({ policy: POLICY });
    await home.startDaemon();
    const dir = mkdtempSync(join(tmpdir(), 'assent-auggie-off-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const model = await startFakeAugment([{ tool: 'launch-process', input: launch(dir, COMMANDS.denied) }, { text: 'done' }], { enableHooks: false });
    cleanups.push(() => model.close());
    let doctor: Awaited<ReturnType<typeof auggieReport>> | undefined;
    const run = await runAgent('auggie', {
      model,
      cwd: dir,
      env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      prepareHome: async (agentHome) => {
        expect((await home.runCli(['install', 'auggie'], { env: { HOME: agentHome } })).code).toBe(0);
      },
      afterRun: async (agentHome) => {
        doctor = await auggieReport(home, agentHome);
      },
    });
    expect(run.exitCode, describeRun(run)).toBe(0);
    expect(existsSync(join(dir, 'denied.marker')), describeRun(run)).toBe(true);
    expect(auditLines(home)).toEqual([]);
    expect(doctor?.code, doctor?.stdout).toBe(65);
    expect(doctor?.report, doctor?.stdout).toMatchObject({ installed: true, blocksCanary: true, timeoutOk: true, auggieHooks: 'off' });
    expect(doctor?.report?.problems.join('\n')).toMatch(/Auggie's last start \(.*augment-log\.txt\) loaded enableHooks false from Augment's server: Auggie then runs no hook, assent's neither.*type \/hooks/);
  }, 90_000);
});
