// R-HOOK-14 end to end: the real OpenCode, Kilo Code, Copilot CLI and Qwen Code,
// offline against a scripted Chat Completions model, gated by what `assent
// install <agent>` wrote into each run's temp HOME and a real assent daemon.
// OpenCode and Kilo start slowly, so one run per agent carries every check of
// the acceptance list that needs the CLI: the model calls the shell
// seven times in a row and the test decides, waits or breaks the state dir
// between the calls.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, runAgent, straceTestsRun, type AgentRun } from '../../helpers/agentClis.js';
import { MORE_AGENT_NAMES, type MoreAgentName } from '../../helpers/agentClisMore.js';
import { auditLines, makeTempHome, type TempHome } from '../../helpers/daemon.js';
import { startFakeModel, type FakeModel, type ModelStep } from '../../helpers/fakeModels.js';
import { PtySession } from '../../helpers/pty.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable(MORE_AGENT_NAMES);
if (!available) process.stderr.write(`skipping the OpenCode, Kilo, Copilot and Qwen hook tests: ${AGENT_CLIS_SKIP_REASON}\n`);
const trace = available && straceTestsRun();

const cleanups = cleanupsAfterEach();

const SHELL_TOOL: Record<MoreAgentName, string> = { opencode: 'bash', kilo: 'bash', copilot: 'bash', qwen: 'run_shell_command' };
const shellStep = (agent: MoreAgentName, command: string): ModelStep => ({ tool: SHELL_TOOL[agent], input: { command, description: 'assent hook test' } });
const toolId = (agent: MoreAgentName): string => `${agent}/${SHELL_TOOL[agent]}`;

/** Every command's effect is a file in the work dir: whether (and how often) it ran is read from there. */
const COMMANDS = {
  allowed: 'touch allowed.marker',
  denied: 'touch denied.marker',
  compound: 'touch first.marker && touch denied.marker',
  approved: 'echo ran >> approved.count',
  refused: 'echo ran >> refused.count',
  unanswered: 'echo ran >> waited.count',
  unsafe: 'touch late.marker',
  subagent: 'touch subagent.marker',
};
const POLICY = {
  commands: {
    default: 'prompt',
    rules: [
      { match: 'touch allowed.marker', decision: 'allow' },
      { match: 'touch late.marker', decision: 'allow' },
      { match: 'touch first.marker', decision: 'allow' },
      { match: 'touch denied.marker', decision: 'deny' },
      { match: 'touch subagent.marker', decision: 'deny' },
    ],
  },
};
/** The subagent's conversation starts with this prompt (OpenCode's task tool). */
const SUBAGENT_MARKER = 'assent-subagent-check';

/**
 * The install sees hooks.timeoutSeconds 2, so the agent's hook timeout (and the
 * plugin's deadline) is 17 s and the hook answers at 14 s; the daemon lets a
 * person take 60 s, so an unanswered prompt can only end at that deadline.
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

function auditText(home: TempHome): string {
  if (!existsSync(home.paths.auditDir)) return '';
  return readdirSync(home.paths.auditDir)
    .map((name) => readFileSync(join(home.paths.auditDir, name), 'utf8'))
    .join('');
}

async function stateWith(config: Record<string, unknown>, daemon: boolean): Promise<TempHome> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, ...config }), { mode: 0o600 });
  if (daemon) await home.startDaemon();
  return home;
}

/** The tool result the model got for the call whose input held `command` (the latest turn carries the whole history). */
function resultFor(model: FakeModel, command: string): string | undefined {
  const last = model.turns().at(-1)?.body as { messages?: { role?: string; tool_calls?: { id: string; function: { arguments: string } }[]; tool_call_id?: string; content?: unknown }[] } | undefined;
  const messages = last?.messages ?? [];
  const call = messages.flatMap((m) => m.tool_calls ?? []).find((c) => c.function.arguments.includes(JSON.stringify(command).slice(1, -1)));
  if (call === undefined) return undefined;
  const result = model.toolResults().find((r) => r.callId === call.id);
  return result?.output;
}

describe.skipIf(!available)('R-HOOK-14 OpenCode, Kilo Code, Copilot CLI and Qwen Code gated by assent', () => {
  for (const agent of MORE_AGENT_NAMES) {
    it(
      `R-HOOK-14 R-HOOK-11 R-HOOK-4 ${agent}: allowed runs; denied and a compound with a denied part never run and the model reads why; an unruled command runs once when approved in a PTY and never when denied; unanswered ends at the hook's deadline before the agent's; an unsafe state dir blocks an allowed command; the audit has no command text${trace ? '; only loopback is contacted' : ''}`,
      async () => {
        const installState = await stateWith({ hooks: { timeoutSeconds: 2 } }, false);
        const home = await stateWith({ hooks: { timeoutSeconds: 60 }, policy: POLICY }, true);
        const dir = mkdtempSync(join(tmpdir(), `assent-more-${agent}-`));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        const work = join(dir, 'work');
        mkdirSync(work);
        const steps: ModelStep[] = [COMMANDS.allowed, COMMANDS.denied, COMMANDS.compound, COMMANDS.approved, COMMANDS.refused, COMMANDS.unanswered, COMMANDS.unsafe].map((command) =>
          shellStep(agent, command),
        );
        // OpenCode's subagent: its own tool calls pass the plugin too.
        if (agent === 'opencode') steps.splice(3, 0, { tool: 'task', input: { description: 'check', prompt: `${SUBAGENT_MARKER}: touch the marker`, subagent_type: 'general' } });
        const model = await startFakeModel('chat', [...steps, { text: 'done' }], { subagents: { [SUBAGENT_MARKER]: [shellStep(agent, COMMANDS.subagent), { text: 'subagent done' }] } });
        cleanups.push(() => model.close());
        cleanups.push(() => chmodSync(home.home, 0o700));
        let doctorAfterRun: { code: number | null; stdout: string } | undefined;
        const run = runAgent(agent, {
          model,
          cwd: work,
          prompt: 'Run the commands.',
          env: { ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
          timeoutMs: 150_000,
          traceConnections: trace,
          prepareHome: async (agentHome) => {
            const installed = await installState.runCli(['install', agent, '--json'], { env: { HOME: agentHome, XDG_CONFIG_HOME: join(agentHome, '.config') } });
            expect(installed.code, installed.stderr).toBe(0);
            expect((JSON.parse(installed.stdout) as { data: { timeout: number } }).data.timeout).toBe(INSTALLED_TIMEOUT_S);
          },
          afterRun: async (agentHome) => {
            chmodSync(home.home, 0o700);
            const doctor = await installState.runCli(['doctor', '--json'], { env: { HOME: agentHome, XDG_CONFIG_HOME: join(agentHome, '.config'), ASSENT_HOME: home.home } });
            doctorAfterRun = { code: doctor.code, stdout: doctor.stdout };
          },
        });
        const approved = await waitForPending(home, COMMANDS.approved, run);
        expect(approved).toMatchObject({ tool: SHELL_TOOL[agent], caller: { head: 'hook', agent, cwd: work, kind: 'shell' } });
        expect(count(work, 'approved.count')).toBe(0);
        await decideInTerminal(home, approved.id, 'approve');
        const refused = await waitForPending(home, COMMANDS.refused, run);
        await decideInTerminal(home, refused.id, 'deny');
        await waitForPending(home, COMMANDS.unanswered, run);
        const waitingSince = performance.now();
        // The next call's hook finds the state directory open to everyone; the pending one is already past that check.
        chmodSync(home.home, 0o777);
        const turnsBefore = model.turns().length;
        await expect.poll(() => model.turns().length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(turnsBefore);
        const waited = performance.now() - waitingSince;
        const finished = await run;
        chmodSync(home.home, 0o700);

        expect(finished.exitCode, describeRun(finished)).toBe(0);
        expect(existsSync(join(work, 'allowed.marker')), describeRun(finished)).toBe(true);
        expect(existsSync(join(work, 'denied.marker'))).toBe(false);
        expect(resultFor(model, COMMANDS.denied)).toContain(`assent refused ${toolId(agent)}: policy`);
        // The compound's first part is allowed on its own, but the call is one decision: nothing of it ran.
        expect(existsSync(join(work, 'first.marker'))).toBe(false);
        expect(resultFor(model, COMMANDS.compound)).toContain(`assent refused ${toolId(agent)}: policy`);
        expect(count(work, 'approved.count')).toBe(1);
        expect(count(work, 'refused.count')).toBe(0);
        expect(resultFor(model, COMMANDS.refused)).toContain('consent_denied');
        expect(count(work, 'waited.count')).toBe(0);
        // The approval the hook filed expires at the hook's deadline (R-HOOK-11): the daemon's consent_timeout, or the hook's own deadline answer.
        expect(resultFor(model, COMMANDS.unanswered)).toMatch(/consent_timeout|no decision within the hook's deadline/);
        // The hook answered at its deadline (14 s after it started), before the agent's own 17 s.
        expect(waited).toBeLessThan(INSTALLED_TIMEOUT_S * 1000);
        expect(waited).toBeGreaterThan((HOOK_DEADLINE_S - 5) * 1000);
        expect(existsSync(join(work, 'late.marker'))).toBe(false);
        expect(resultFor(model, COMMANDS.unsafe)).toContain('state_insecure');
        if (agent === 'opencode') {
          expect(existsSync(join(work, 'subagent.marker'))).toBe(false);
          // The subagent's conversation reached the model, and its shell call was decided under its own session id.
          expect(model.requests.some((request) => JSON.stringify(request.body).includes(SUBAGENT_MARKER))).toBe(true);
          const mainSession = auditLines(home).find((line) => line['outcome'] === 'started')?.['sessionId'];
          const subagentDenial = auditLines(home).find((line) => line['outcome'] === 'denied' && line['deniedReason'] === 'policy' && line['sessionId'] !== mainSession);
          expect(subagentDenial, JSON.stringify(auditLines(home))).toMatchObject({ agent: 'opencode', tool: 'bash' });
        }

        // R-HOOK-10: every line names the agent, the digest of the exact input and the outcome, never the command text.
        const lines = auditLines(home);
        expect(lines.length).toBeGreaterThanOrEqual(6);
        for (const line of lines) expect(line, JSON.stringify(line)).toMatchObject({ agent, argsSha256: expect.stringMatching(/^v1:sha256:[0-9a-f]{64}$/), outcome: expect.any(String) });
        expect(lines.map((line) => line['outcome'])).toEqual(expect.arrayContaining(['started', 'denied']));
        for (const text of ['allowed.marker', 'approved.count', 'refused.count', 'denied.marker', work]) expect(auditText(home)).not.toContain(text);

        // After the run: doctor (with the pinned hooks.timeoutSeconds of 2 s the install saw) finds the agent gated.
        const report = (JSON.parse(doctorAfterRun?.stdout ?? '{}') as { data?: { agents?: { agent: string; problems: string[]; pluginLoadedAt?: string | null }[] } }).data?.agents?.find((a) => a.agent === agent);
        expect(report, doctorAfterRun?.stdout).toBeDefined();
        if (agent === 'opencode' || agent === 'kilo') expect(report?.pluginLoadedAt, doctorAfterRun?.stdout).toEqual(expect.any(String));
        if (trace) expect(finished.outbound, JSON.stringify(finished.connections)).toEqual([]);
        expect(finished.proxied).toEqual([]);
      },
      180_000,
    );
  }
});
