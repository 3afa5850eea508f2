// R-HOOK-14 end to end for Cline CLI: the real `cline --json`, offline against
// a scripted Chat Completions model, gated by the hook files `assent install
// cline` wrote into ~/.cline/hooks of the run's temp HOME and a real assent
// daemon. One run carries every acceptance check that needs the CLI: the model
// calls run_commands seven times and the test decides, waits, breaks the state
// dir or stops the daemon between the calls. Each refusal replaces the command
// with one that prints the reason, so the model reads it and the task goes on
// (Cline's cancel would end the task: clineHarness.test.ts). A PreToolUse hook
// of the person's own in ~/Documents/Cline/Hooks answers {} to every call:
// assent's refusal must still win.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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

const available = agentClisAvailable(['cline']);
if (!available) process.stderr.write(`skipping the Cline hook tests: ${AGENT_CLIS_SKIP_REASON}\n`);
const trace = available && straceTestsRun();

const cleanups = cleanupsAfterEach();

const runCommands = (command: string): Record<string, unknown> => ({ commands: [command] });

/** Every command's effect is a file in the work dir: whether (and how often) it ran is read from there. */
const COMMANDS = {
  allowed: 'touch allowed.marker',
  denied: 'touch denied.marker',
  approved: 'echo ran >> approved.count',
  refused: 'echo ran >> refused.count',
  unanswered: 'echo ran >> waited.count',
  unsafe: 'touch late.marker',
  noDaemon: 'touch nodaemon.marker',
};
const ORDER = ['allowed', 'denied', 'approved', 'refused', 'unanswered', 'unsafe', 'noDaemon'] as const;
type Name = keyof typeof COMMANDS;
const POLICY = {
  commands: {
    default: 'prompt',
    rules: [
      { match: 'touch allowed.marker', decision: 'allow' },
      { match: 'touch late.marker', decision: 'allow' },
      { match: 'touch nodaemon.marker', decision: 'allow' },
      { match: 'touch denied.marker', decision: 'deny' },
    ],
  },
};

/** Cline's hook timeout, fixed: the installed hook is told it whatever hooks.timeoutSeconds says. */
const INSTALLED_TIMEOUT_S = 120;
/** The daemon's hooks.timeoutSeconds: long enough for a decision in a PTY, short enough for the unanswered run. */
const CONSENT_TIMEOUT_S = 10;

/** A PreToolUse hook of the person's own: it answers {} (run) to every call and counts the calls it saw. */
function ownHook(countFile: string): string {
  return `#!/bin/sh\ncat > /dev/null\necho ran >> ${JSON.stringify(countFile)}\necho '{}'\n`;
}

/** The person's own TaskComplete hook in the folder assent writes to: install and uninstall leave it as it was. */
const OWN_TASK_HOOK = "#!/bin/sh\ncat > /dev/null\necho '{}'\n";

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
    const found = list.find((p) => JSON.stringify(p.args['commands']) === JSON.stringify([command]));
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
  scope: string;
  installed: boolean;
  command: string | null;
  timeoutOk: boolean;
  blocksCanary: boolean;
  problems: string[];
  notes: string[];
  pluginLoadedAt?: string | null;
}

async function clineReport(state: TempHome, agentHome: string): Promise<{ code: number | null; report: DoctorReport | undefined; stdout: string }> {
  const doctor = await state.runCli(['doctor', '--json'], { env: { HOME: agentHome } });
  const report = (JSON.parse(doctor.stdout) as { data?: { agents?: DoctorReport[] } }).data?.agents?.find((a) => a.agent === 'cline' && a.scope === 'user');
  return { code: doctor.code, report, stdout: doctor.stdout };
}

/** Every file under `dir` with its text, for a byte-for-byte comparison. */
function snapshotDir(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name), 'utf8')]));
}

describe.skipIf(!available)('R-HOOK-14 Cline CLI gated by assent', () => {
  it(
    `R-HOOK-14 R-HOOK-4 cline: allowed runs with no approval; denied never runs, though the person's own hook answers {}, and the model reads why and goes on; a prompt runs once when approved in a PTY and never when denied; unanswered ends at hooks.timeoutSeconds; an unsafe state dir and a stopped daemon block an allowed command; one audit line per decision and the after-event's, naming cline; doctor is truthful; uninstall restores ~/.cline/hooks byte for byte${trace ? '; only loopback is contacted' : ''}`,
    async () => {
      const home = await stateHome({ hooks: { timeoutSeconds: CONSENT_TIMEOUT_S }, policy: POLICY });
      const daemon = await home.startDaemon();
      const dir = mkdtempSync(join(tmpdir(), 'assent-cline-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const work = join(dir, 'work');
      mkdirSync(work, { recursive: true });
      cleanups.push(() => chmodSync(home.home, 0o700));

      let waitingSince = 0;
      let waited = 0;
      const model = await startFakeModel('chat', [...ORDER.map((name) => ({ tool: 'run_commands', input: runCommands(COMMANDS[name]) }) as ModelStep), { text: 'done' }], {
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

      let doctor: Awaited<ReturnType<typeof clineReport>> | undefined;
      let uninstalled: { exitCode: number; screen: string; files: Record<string, string> } | undefined;
      const ownCount = join(dir, 'own-hook.count');
      const run = runAgent('cline', {
        model,
        cwd: work,
        prompt: 'Run the commands.',
        env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
        timeoutMs: 150_000,
        traceConnections: trace,
        prepareHome: async (agentHome) => {
          const own = join(agentHome, 'Documents', 'Cline', 'Hooks');
          mkdirSync(own, { recursive: true });
          writeFileSync(join(own, 'PreToolUse.sh'), ownHook(ownCount));
          mkdirSync(join(agentHome, '.cline', 'hooks'), { recursive: true });
          writeFileSync(join(agentHome, '.cline', 'hooks', 'TaskComplete.sh'), OWN_TASK_HOOK);
          const result = await home.runCli(['install', 'cline', '--json'], { env: { HOME: agentHome } });
          expect(result.code, result.stderr).toBe(0);
          expect((JSON.parse(result.stdout) as { data: { timeout: number } }).data.timeout).toBe(INSTALLED_TIMEOUT_S);
        },
        afterRun: async (agentHome) => {
          chmodSync(home.home, 0o700);
          // Doctor and uninstall against a daemon again; it also takes in the no-daemon call's spooled refusal.
          await home.startDaemon();
          doctor = await clineReport(home, agentHome);
          const done = await runInTerminal(['uninstall', 'cline'], { env: { HOME: agentHome, ASSENT_HOME: home.home }, typeCode: true });
          uninstalled = { exitCode: done.exitCode, screen: done.screen, files: snapshotDir(join(agentHome, '.cline', 'hooks')) };
        },
      });
      const approved = await waitForPending(home, COMMANDS.approved, run);
      expect(approved).toMatchObject({ tool: 'run_commands', caller: { head: 'hook', agent: 'cline', cwd: work, kind: 'shell' } });
      expect(count(work, 'approved.count')).toBe(0);
      await decideInTerminal(home, approved.id, 'approve');
      const refused = await waitForPending(home, COMMANDS.refused, run);
      await decideInTerminal(home, refused.id, 'deny');
      await waitForPending(home, COMMANDS.unanswered, run);
      waitingSince = performance.now();
      const finished = await run;

      expect(finished.exitCode, describeRun(finished)).toBe(0);
      expect(existsSync(join(work, 'allowed.marker')), describeRun(finished)).toBe(true);
      // The person's own hook saw every call and answered {}; assent's refusal still won.
      expect(count(dir, 'own-hook.count')).toBe(ORDER.length);
      expect(existsSync(join(work, 'denied.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.denied)).toContain('assent refused cline/run_commands: policy');
      expect(count(work, 'approved.count')).toBe(1);
      expect(count(work, 'refused.count')).toBe(0);
      expect(resultFor(model, COMMANDS.refused)).toContain('consent_denied');
      expect(count(work, 'waited.count')).toBe(0);
      expect(resultFor(model, COMMANDS.unanswered)).toContain('consent_timeout');
      // The approval expired at hooks.timeoutSeconds, long before Cline's own 120 s.
      expect(waited).toBeLessThan(60_000);
      expect(waited).toBeGreaterThan((CONSENT_TIMEOUT_S - 5) * 1000);
      expect(existsSync(join(work, 'late.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.unsafe)).toContain('state_insecure');
      expect(existsSync(join(work, 'nodaemon.marker'))).toBe(false);
      expect(resultFor(model, COMMANDS.noDaemon)).toContain('unavailable');
      // Every refusal was one call's: the model got every turn and the task completed.
      expect(model.turns()).toHaveLength(ORDER.length + 1);

      // R-HOOK-10: one decision line per call, naming cline, by the digest of the exact input; the allowed and
      // the approved call also have the after-event's line (a refused call's, of the command that replaced it, matches
      // no call and adds none). The no-daemon call's refusal was spooled by the hook and came in with the next daemon;
      // the unsafe call's hook trusted nothing in the open state dir.
      await expect.poll(() => auditLines(home).some((line) => line['deniedReason'] === 'unavailable'), { timeout: 15_000 }).toBe(true);
      const lines = auditLines(home);
      for (const line of lines) expect(line, JSON.stringify(line)).toMatchObject({ agent: 'cline', server: 'cline', tool: 'run_commands', argsSha256: expect.stringMatching(/^v1:sha256:[0-9a-f]{64}$/) });
      const outcomes = (name: Name): unknown[] => lines.filter((line) => line['argsSha256'] === nativeDigestOf(runCommands(COMMANDS[name]))).map((line) => line['outcome']);
      expect(outcomes('allowed')).toEqual(['started', 'ok']);
      expect(outcomes('denied')).toEqual(['denied']);
      expect(outcomes('approved')).toEqual(['started', 'ok']);
      expect(outcomes('refused')).toEqual(['consent_denied']);
      expect(outcomes('unanswered')).toEqual(['consent_timeout']);
      expect(outcomes('unsafe')).toEqual([]);
      expect(outcomes('noDaemon')).toEqual(['denied']);
      expect(lines).toHaveLength(8);
      const allowedLine = lines.find((line) => line['argsSha256'] === nativeDigestOf(runCommands(COMMANDS.allowed)));
      expect(allowedLine?.['approvalId']).toBeUndefined();
      const audit = JSON.stringify(lines);
      for (const text of ['allowed.marker', 'approved.count', 'denied.marker', work]) expect(audit).not.toContain(text);

      // Doctor after the run: installed, this assent's hook, the canary refused; the person's other hook folder is named.
      expect(doctor?.code, doctor?.stdout).toBe(0);
      expect(doctor?.report, doctor?.stdout).toMatchObject({ installed: true, timeoutOk: true, blocksCanary: true, problems: [] });
      expect(doctor?.report?.command).toContain(join(REPO_ROOT, 'dist', 'bin', 'assent-hook.js'));
      expect(doctor?.report?.notes.join('\n')).toMatch(/Documents\/Cline\/Hooks: one that answers "overrideInput"/);
      // Uninstall gives back ~/.cline/hooks byte for byte: the person's own hook, and no file of assent's.
      expect(uninstalled?.exitCode, uninstalled?.screen).toBe(0);
      expect(uninstalled?.files).toEqual({ 'TaskComplete.sh': OWN_TASK_HOOK });

      if (trace) expect(finished.outbound, JSON.stringify(finished.connections)).toEqual([]);
      expect(finished.proxied).toEqual([]);
    },
    200_000,
  );
});
