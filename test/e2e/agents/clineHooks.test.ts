// R-HOOK-14 end to end for Cline CLI: the real `cline --json`, offline against
// a scripted Chat Completions model, gated by the hook files `assent install
// cline` wrote into ~/.cline/hooks of each run's temp HOME and a real assent
// daemon. Cline's only refusal, {"cancel":true}, ends the task, so each refusal
// needs a run of its own: the first run carries an allowed call, one a person
// approves in a PTY and a policy deny; the others one refusal each (a person's
// deny, no decision in time, an unsafe state dir, no daemon). A PreToolUse hook
// of the person's own in ~/Documents/Cline/Hooks answers {} to every call:
// assent's cancel must still win.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeDigestOf } from '../../../src/journal/nativeHash.js';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, runAgent, straceTestsRun, type AgentRun } from '../../helpers/agentClis.js';
import { auditLines, makeTempHome, REPO_ROOT, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel, type FakeModel, type ModelStep } from '../../helpers/fakeModels.js';
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
    `R-HOOK-14 R-HOOK-4 cline: allowed runs with no approval; a prompt runs once when approved in a PTY; a policy deny, a person's deny, no decision in time, an unsafe state dir and a stopped daemon never run it, though the person's own hook answers {}, and each ends the task; one audit line per decision and the after-event's, naming cline; doctor is truthful; uninstall restores ~/.cline/hooks byte for byte${trace ? '; only loopback is contacted' : ''}`,
    async () => {
      const home = await stateHome({ hooks: { timeoutSeconds: CONSENT_TIMEOUT_S }, policy: POLICY });
      const daemon = await home.startDaemon();
      const dir = mkdtempSync(join(tmpdir(), 'assent-cline-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const work = join(dir, 'work');
      mkdirSync(work, { recursive: true });
      cleanups.push(() => chmodSync(home.home, 0o700));
      const ownCount = join(dir, 'own-hook.count');
      const runs: AgentRun[] = [];

      /** One run of Cline calling run_commands with each of `names`, in order; `during` decides while it runs. */
      const scene = async (
        names: readonly Name[],
        during: (run: Promise<AgentRun>) => Promise<void> = async () => undefined,
        after?: (agentHome: string) => Promise<void>,
        installed?: () => void | Promise<void>,
      ): Promise<{ run: AgentRun; model: FakeModel }> => {
        const model = await startFakeModel('chat', [...names.map((name) => ({ tool: 'run_commands', input: runCommands(COMMANDS[name]) }) as ModelStep), { text: 'done' }]);
        cleanups.push(() => model.close());
        const run = runAgent('cline', {
          model,
          cwd: work,
          prompt: 'Run the commands.',
          env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
          timeoutMs: 120_000,
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
            await installed?.();
          },
          ...(after === undefined ? {} : { afterRun: after }),
        });
        await during(run);
        const finished = await run;
        runs.push(finished);
        return { run: finished, model };
      };

      // 1: allowed, approved in a PTY, then denied by the policy, which ends the task.
      let doctor: Awaited<ReturnType<typeof clineReport>> | undefined;
      const first = await scene(
        ['allowed', 'approved', 'denied', 'noDaemon'],
        async (run) => {
          const approved = await waitForPending(home, COMMANDS.approved, run);
          expect(approved).toMatchObject({ tool: 'run_commands', caller: { head: 'hook', agent: 'cline', cwd: work, kind: 'shell' } });
          expect(count(work, 'approved.count')).toBe(0);
          await decideInTerminal(home, approved.id, 'approve');
        },
        async (agentHome) => {
          doctor = await clineReport(home, agentHome);
        },
      );
      expect(first.run.exitCode, describeRun(first.run)).toBe(0);
      expect(existsSync(join(work, 'allowed.marker')), describeRun(first.run)).toBe(true);
      expect(count(work, 'approved.count')).toBe(1);
      expect(existsSync(join(work, 'denied.marker'))).toBe(false);
      // The cancel ended the task: the model got no turn after the denied call, so the next one never came.
      expect(first.model.turns()).toHaveLength(3);
      expect(existsSync(join(work, 'nodaemon.marker'))).toBe(false);

      // 2: a person's deny in a PTY.
      await scene(['refused'], async (run) => {
        const refused = await waitForPending(home, COMMANDS.refused, run);
        await decideInTerminal(home, refused.id, 'deny');
      });
      expect(count(work, 'refused.count')).toBe(0);
      // 3: nobody decides: the approval expires at hooks.timeoutSeconds, well before Cline's 120 s.
      const started = performance.now();
      await scene(['unanswered']);
      expect(performance.now() - started).toBeLessThan(60_000);
      expect(count(work, 'waited.count')).toBe(0);
      // 4: the state dir is open to everyone.
      await scene(['unsafe'], undefined, async () => chmodSync(home.home, 0o700), () => chmodSync(home.home, 0o777));
      expect(existsSync(join(work, 'late.marker'))).toBe(false);
      // 5: no daemon; then uninstall, typed in a terminal.
      let uninstalled: { exitCode: number; screen: string; before: Record<string, string>; after: Record<string, string> } | undefined;
      await scene(['noDaemon'], undefined, async (agentHome) => {
        await home.startDaemon();
        const hooks = join(agentHome, '.cline', 'hooks');
        const done = await runInTerminal(['uninstall', 'cline'], { env: { HOME: agentHome, ASSENT_HOME: home.home }, typeCode: true });
        uninstalled = { exitCode: done.exitCode, screen: done.screen, before: { 'TaskComplete.sh': OWN_TASK_HOOK }, after: snapshotDir(hooks) };
      }, () => stop(daemon));
      expect(existsSync(join(work, 'nodaemon.marker'))).toBe(false);
      for (const run of runs) {
        expect(run.exitCode, describeRun(run)).toBe(0);
        if (trace) expect(run.outbound, JSON.stringify(run.connections)).toEqual([]);
        expect(run.proxied).toEqual([]);
      }
      // The person's own hook ran for every call and answered {}; assent's cancel still won.
      expect(count(dir, 'own-hook.count')).toBe(7);

      // R-HOOK-10: one decision line per call, naming cline, by the digest of the exact input; the allowed and
      // the approved call also have the after-event's line. The no-daemon call's refusal was spooled by the hook
      // and comes in when a daemon starts again (after the last run); the unsafe call's hook trusted nothing in the open state dir.
      await expect.poll(() => auditLines(home).some((line) => line['deniedReason'] === 'unavailable'), { timeout: 15_000 }).toBe(true);
      const lines = auditLines(home);
      for (const line of lines) expect(line, JSON.stringify(line)).toMatchObject({ agent: 'cline', server: 'cline', tool: 'run_commands', argsSha256: expect.stringMatching(/^v1:sha256:[0-9a-f]{64}$/) });
      const outcomes = (name: Name): unknown[] => lines.filter((line) => line['argsSha256'] === nativeDigestOf(runCommands(COMMANDS[name]))).map((line) => line['outcome']);
      expect(outcomes('allowed')).toEqual(['started', 'ok']);
      expect(outcomes('approved')).toEqual(['started', 'ok']);
      expect(outcomes('denied')).toEqual(['denied']);
      expect(outcomes('refused')).toEqual(['consent_denied']);
      expect(outcomes('unanswered')).toEqual(['consent_timeout']);
      expect(outcomes('unsafe')).toEqual([]);
      expect(outcomes('noDaemon')).toEqual(['denied']);
      expect(lines).toHaveLength(8);
      const allowedLine = lines.find((line) => line['argsSha256'] === nativeDigestOf(runCommands(COMMANDS.allowed)));
      expect(allowedLine?.['approvalId']).toBeUndefined();
      const audit = JSON.stringify(lines);
      for (const text of ['allowed.marker', 'approved.count', 'denied.marker', work]) expect(audit).not.toContain(text);

      // Doctor after the first run: installed, this assent's hook, the canary blocked; the fixed timeout and the
      // other hook folder are said, not failed (hooks.timeoutSeconds 10 fits in Cline's 120 s).
      expect(doctor?.code, doctor?.stdout).toBe(0);
      expect(doctor?.report, doctor?.stdout).toMatchObject({ installed: true, timeoutOk: true, blocksCanary: true, problems: [] });
      expect(doctor?.report?.command).toContain(join(REPO_ROOT, 'dist', 'bin', 'assent-hook.js'));
      expect(doctor?.report?.notes.join('\n')).toMatch(/Documents\/Cline\/Hooks: one that answers "overrideInput"/);
      expect(doctor?.report?.notes.join('\n')).toMatch(/ends the whole task/);
      // Uninstall gives back ~/.cline/hooks byte for byte: the person's own hook, and no file of assent's.
      expect(uninstalled?.exitCode, uninstalled?.screen).toBe(0);
      expect(uninstalled?.after).toEqual(uninstalled?.before);
    },
    240_000,
  );
});
