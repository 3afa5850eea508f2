// The harness runs the real Cline CLI (`cline --json`, 3.0.65) offline against
// a scripted Chat Completions model, with a trivial hook written by the test
// (not assent): a PreToolUse hook that answers `{}` lets Cline's run_commands
// call run and sees its payload; one that answers `{"cancel":true}` keeps the
// command from running (and ends the task: Cline has no answer that refuses
// one call and goes on).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENT_CLIS_SKIP_REASON, agentClisAvailable, runAgent, straceTestsRun, type AgentRun } from '../../helpers/agentClis.js';
import { startFakeModel } from '../../helpers/fakeModels.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable(['cline']);
if (!available) process.stderr.write(`skipping the Cline harness tests: ${AGENT_CLIS_SKIP_REASON}\n`);
const trace = available && straceTestsRun();

const cleanups = cleanupsAfterEach();

function describeRun(run: AgentRun): string {
  return `exit ${String(run.exitCode)}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-2500)}\nstderr: ${run.stderr.slice(-1500)}`;
}

/** The `--json` output's lines, parsed. */
function events(run: AgentRun): Record<string, unknown>[] {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** One run: the model asks run_commands to touch a marker, then says done; the PreToolUse hook logs its stdin and prints `answer`. */
async function scene(answer: string): Promise<{ run: AgentRun; marker: string; log: string; turns: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'assent-cline-harness-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const work = join(dir, 'work');
  mkdirSync(work);
  const marker = join(dir, 'ran.marker');
  const log = join(dir, 'hook.log');
  const hook = join(dir, 'hook.sh');
  writeFileSync(hook, `#!/bin/sh\ncat >> '${log}'\necho >> '${log}'\necho '${answer}'\n`, { mode: 0o755 });
  const model = await startFakeModel('chat', [{ tool: 'run_commands', input: { commands: [`touch ${marker}`] } }, { text: 'done' }]);
  cleanups.push(() => model.close());
  const run = await runAgent('cline', { model, cwd: work, prompt: 'Touch the marker.', hooks: { PreToolUse: hook }, timeoutMs: 60_000, traceConnections: trace });
  return { run, marker, log, turns: run.requests.filter((r) => r.kind === 'turn').length };
}

describe.skipIf(!available)('the agent CLI harness runs Cline', () => {
  it(`cline: a PreToolUse hook answering {} sees the run_commands call and lets it run${trace ? '; only loopback is contacted' : ''}`, async () => {
    const { run, marker, log, turns } = await scene('{}');
    expect(run.exitCode, describeRun(run)).toBe(0);
    expect(existsSync(marker), describeRun(run)).toBe(true);
    const payloads = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(payloads).toHaveLength(1);
    expect(payloads[0]).toMatchObject({ hookName: 'tool_call', tool_call: { name: 'run_commands', input: { commands: [`touch ${marker}`] } }, preToolUse: { toolName: 'run_commands' } });
    expect(turns).toBe(2);
    expect(events(run).at(-1)).toMatchObject({ type: 'run_result', finishReason: 'completed', text: 'done' });
    if (trace) expect(run.outbound, JSON.stringify(run.connections)).toEqual([]);
    expect(run.proxied).toEqual([]);
  }, 90_000);

  it('cline: a PreToolUse hook answering {"cancel":true} keeps the command from running; Cline ends the task and still exits 0', async () => {
    const { run, marker, log, turns } = await scene('{"cancel":true,"errorMessage":"no"}');
    expect(existsSync(log), describeRun(run)).toBe(true);
    expect(existsSync(marker), describeRun(run)).toBe(false);
    // The task stops at the cancel: the model gets no turn with the call's result.
    expect(turns).toBe(1);
    expect(run.exitCode, describeRun(run)).toBe(0);
    expect(events(run)).toContainEqual(expect.objectContaining({ type: 'run_result', finishReason: 'aborted' }));
    expect(run.proxied).toEqual([]);
  }, 90_000);
});
