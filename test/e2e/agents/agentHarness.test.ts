// The agent CLI harness and the hook contracts it observes (SPEC §17, AGENT-CLIS.md):
// the real Claude Code, Codex and Gemini CLI, offline against scripted fake models,
// with a trivial recording hook written by the test (not assent). What each CLI
// does with allow, deny, exit 1 and exit 2 is why `assent hook` answers as R-HOOK-4 says.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AGENT_CLIS_SKIP_REASON,
  AGENT_EVENTS,
  AGENT_NAMES,
  AGENT_WIRE,
  agentClisAvailable,
  runAgent,
  straceTestsRun,
  type AgentName,
  type AgentRun,
  type McpServerSpec,
} from '../../helpers/agentClis.js';
import { REPO_ROOT } from '../../helpers/daemon.js';
import { startFakeModel, type FakeModel, type ModelStep, type ToolResult } from '../../helpers/fakeModels.js';
import { cleanupsAfterEach } from '../../helpers/cleanups.js';

const available = agentClisAvailable();
if (!available) process.stderr.write(`skipping agent CLI tests: ${AGENT_CLIS_SKIP_REASON}\n`);
// Under CI=true the strace tests always run: a missing strace fails them rather than skipping them (hardening 19.8f).
const canTrace = available && straceTestsRun();

const DENY_REASON = 'harness-deny: the test hook refused this call';
const STDERR_REASON = 'harness-stderr: the test hook refused this call';
const MARKER = 'ran.marker';
const RUN_TIMEOUT_MS = 45_000;
const TEST_TIMEOUT_MS = 60_000;

// A recording hook: appends the event it got to a log, then answers as told.
// argv: mode (allow | deny | exit1 | exit2 | record | hang), format (claude | gemini), log file.
const HOOK_SCRIPT = `
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
const [mode, format, log] = process.argv.slice(2);
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  let event;
  try { event = JSON.parse(input); } catch { event = { unparsed: input }; }
  appendFileSync(log, JSON.stringify(event) + '\\n');
  const answer = (decision, reason) => format === 'gemini'
    ? { decision, ...(reason ? { reason } : {}) }
    : { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, ...(reason ? { permissionDecisionReason: reason } : {}) } };
  if (mode === 'allow') process.stdout.write(JSON.stringify(answer('allow')));
  if (mode === 'deny') process.stdout.write(JSON.stringify(answer('deny', ${JSON.stringify(DENY_REASON)})));
  if (mode === 'exit1') process.exit(1);
  if (mode === 'hang') {
    // Never answers, and leaves behind a grandchild in a session of its own, out of
    // reach of a process-group kill (a stopped Codex leaves both running).
    spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)', log], { stdio: 'ignore', detached: true }).unref();
    setInterval(() => {}, 60000);
  }
  if (mode === 'exit2') {
    process.stdout.write(JSON.stringify(answer('deny', ${JSON.stringify(DENY_REASON)})));
    process.stderr.write(${JSON.stringify(`${STDERR_REASON}\n`)});
    process.exit(2);
  }
});
`;

type HookMode = 'allow' | 'deny' | 'exit1' | 'exit2' | 'record' | 'hang';

/** How each CLI's model asks for its shell tool, and the name its hook sees. */
const SHELL: Record<AgentName, { step: (command: string) => ModelStep; hookTool: string }> = {
  claude: { step: (command) => ({ tool: 'Bash', input: { command, description: 'harness command' } }), hookTool: 'Bash' },
  codex: { step: (command) => ({ tool: 'exec_command', input: { cmd: command } }), hookTool: 'Bash' },
  gemini: { step: (command) => ({ tool: 'run_shell_command', input: { command } }), hookTool: 'run_shell_command' },
};

/** The stdin fields each CLI's before-tool and after-tool hook received for a shell call, as observed. */
const EVENT_FIELDS: Record<AgentName, { before: string[]; after: string[] }> = {
  claude: {
    before: ['cwd', 'effort', 'hook_event_name', 'permission_mode', 'prompt_id', 'session_id', 'tool_input', 'tool_name', 'tool_use_id', 'transcript_path'],
    after: ['cwd', 'duration_ms', 'effort', 'hook_event_name', 'permission_mode', 'prompt_id', 'session_id', 'tool_input', 'tool_name', 'tool_response', 'tool_use_id', 'transcript_path'],
  },
  codex: {
    before: ['cwd', 'hook_event_name', 'model', 'permission_mode', 'session_id', 'tool_input', 'tool_name', 'tool_use_id', 'transcript_path', 'turn_id'],
    after: ['cwd', 'hook_event_name', 'model', 'permission_mode', 'session_id', 'tool_input', 'tool_name', 'tool_response', 'tool_use_id', 'transcript_path', 'turn_id'],
  },
  gemini: {
    before: ['cwd', 'hook_event_name', 'session_id', 'timestamp', 'tool_input', 'tool_name', 'transcript_path'],
    after: ['cwd', 'hook_event_name', 'session_id', 'timestamp', 'tool_input', 'tool_name', 'tool_response', 'transcript_path'],
  },
};

/** What the model is told when a before-tool hook denies with a reason (deny JSON, exit 0). */
const DENIED_RESULT: Record<AgentName, (command: string) => string> = {
  claude: () => `PreToolUse:Bash hook error: ${DENY_REASON}`,
  codex: (command) => `Command blocked by PreToolUse hook: ${DENY_REASON}. Command: ${command}`,
  gemini: () => `Tool execution blocked: ${DENY_REASON}`,
};

const everythingServer: McpServerSpec = {
  command: process.execPath,
  args: [join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
};

/** A script that calls server-everything's `echo` through each CLI's MCP naming. */
const MCP_ECHO: Record<AgentName, { steps: ModelStep[]; hookTool: string }> = {
  // Claude Code defers MCP tools: the model must load it with ToolSearch first.
  claude: {
    steps: [
      { tool: 'ToolSearch', input: { query: 'select:mcp__everything__echo', max_results: 1 } },
      { tool: 'mcp__everything__echo', input: { message: 'harness echo' } },
    ],
    hookTool: 'mcp__everything__echo',
  },
  codex: { steps: [{ tool: 'echo', namespace: 'mcp__everything', input: { message: 'harness echo' } }], hookTool: 'mcp__everything__echo' },
  gemini: { steps: [{ tool: 'mcp_everything_echo', input: { message: 'harness echo' } }], hookTool: 'mcp_everything_echo' },
};

interface Scene {
  agent: AgentName;
  dir: string;
  work: string;
  model: FakeModel;
  run: AgentRun;
  /** Every hook event received, in order. */
  events: Record<string, unknown>[];
}

const cleanups = cleanupsAfterEach();

interface SceneOptions {
  steps: ModelStep[];
  before: HookMode;
  after?: boolean;
  mcp?: boolean;
  trace?: boolean;
  timeoutMs?: number;
  setup?: (work: string) => void;
}

/** One headless run of `agent`: a fresh dir with the hook script and work dir, a fake model playing `steps` then "done". */
async function scene(agent: AgentName, options: SceneOptions): Promise<Scene> {
  const dir = mkdtempSync(join(tmpdir(), `assent-harness-${agent}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const work = join(dir, 'work');
  mkdirSync(work);
  options.setup?.(work);
  const hookFile = join(dir, 'hook.mjs');
  writeFileSync(hookFile, HOOK_SCRIPT);
  const log = join(dir, 'hook-events.ndjson');
  const format = agent === 'gemini' ? 'gemini' : 'claude';
  const hook = (mode: HookMode): string => `'${process.execPath}' '${hookFile}' ${mode} ${format} '${log}'`;
  const model = await startFakeModel(AGENT_WIRE[agent], [...options.steps, { text: 'done' }]);
  cleanups.push(() => model.close());
  const hooks: Record<string, string> = { [AGENT_EVENTS[agent].before]: hook(options.before) };
  if (options.after === true) hooks[AGENT_EVENTS[agent].after] = hook('record');
  const run = await runAgent(agent, {
    model,
    cwd: work,
    prompt: 'Run the harness command.',
    hooks,
    hookTimeoutSeconds: 30,
    ...(options.mcp === true ? { mcpServers: { everything: everythingServer } } : {}),
    timeoutMs: options.timeoutMs ?? RUN_TIMEOUT_MS,
    traceConnections: options.trace === true,
  });
  const events = existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    : [];
  return { agent, dir, work, model, run, events };
}

function describeRun(s: Scene): string {
  return `exit ${String(s.run.exitCode)}${s.run.timedOut ? ' (timed out)' : ''}\nstdout: ${s.run.stdout.slice(0, 2000)}\nstderr: ${s.run.stderr.slice(0, 2000)}\nhook events: ${JSON.stringify(s.events).slice(0, 2000)}`;
}

function onlyResult(s: Scene): ToolResult {
  const results = s.model.toolResults();
  expect(results, describeRun(s)).toHaveLength(1);
  return results[0] as ToolResult;
}

const command = `touch ${MARKER}`;

/** Live processes whose command line mentions `needle` (Linux /proc). */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (/\) Z /.test(readFileSync(`/proc/${entry}/stat`, 'latin1'))) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(needle)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

describe('(hardening 19.8f) the strace tests under CI', () => {
  it('run under CI=true whatever strace says, so a missing or powerless strace fails them; elsewhere they run only where strace works', () => {
    const missing = (): string => 'strace could not be started (spawnSync strace ENOENT)';
    const works = (): undefined => undefined;
    expect(straceTestsRun({ CI: 'true' }, missing)).toBe(true);
    expect(straceTestsRun({ CI: 'true' }, works)).toBe(true);
    expect(straceTestsRun({}, missing)).toBe(false);
    expect(straceTestsRun({ CI: '1' }, missing)).toBe(false);
    expect(straceTestsRun({}, works)).toBe(true);
  });
});

describe.skipIf(!available)('SPEC §17 agent CLI harness: the real CLIs offline, with a recording hook', () => {
  for (const agent of AGENT_NAMES) {
    const { before, after } = AGENT_EVENTS[agent];

    describe(agent, () => {
      it(
        `(a, R-HOOK-6 fields) an allowing ${before} hook lets the shell call run; it gets tool_name, tool_input.command, session_id, cwd, hook_event_name; ${after} follows with the outcome`,
        async () => {
          const s = await scene(agent, { steps: [SHELL[agent].step(command)], before: 'allow', after: true });
          expect(s.run.exitCode, describeRun(s)).toBe(0);
          expect(existsSync(join(s.work, MARKER)), describeRun(s)).toBe(true);
          expect(s.events.map((e) => e['hook_event_name'])).toEqual([before, after]);
          const [pre, post] = s.events as [Record<string, unknown>, Record<string, unknown>];
          expect(pre).toMatchObject({ hook_event_name: before, tool_name: SHELL[agent].hookTool, tool_input: { command }, cwd: s.work });
          expect(typeof pre['session_id']).toBe('string');
          expect(Object.keys(pre).sort()).toEqual(EVENT_FIELDS[agent].before);
          expect(post).toMatchObject({ hook_event_name: after, tool_name: SHELL[agent].hookTool, tool_input: { command }, session_id: pre['session_id'], cwd: s.work });
          expect(post).toHaveProperty('tool_response');
          expect(Object.keys(post).sort()).toEqual(EVENT_FIELDS[agent].after);
          // Claude Code and Codex send the model's call id to both events; Gemini CLI sends none.
          if (agent === 'gemini') expect(pre).not.toHaveProperty('tool_use_id');
          else expect(post['tool_use_id']).toBe(pre['tool_use_id']);
          expect(s.run.proxied).toEqual([]);
          expect(onlyResult(s).output).not.toContain('blocked');
        },
        TEST_TIMEOUT_MS,
      );

      it(
        `(b) a deny answer in ${agent}'s format blocks the call and the model's next request carries the reason`,
        async () => {
          const s = await scene(agent, { steps: [SHELL[agent].step(command)], before: 'deny' });
          expect(s.run.exitCode, describeRun(s)).toBe(0);
          expect(s.events).toHaveLength(1);
          expect(existsSync(join(s.work, MARKER)), describeRun(s)).toBe(false);
          const result = onlyResult(s);
          expect(result.output).toBe(DENIED_RESULT[agent](command));
          if (agent !== 'codex') expect(result.isError).toBe(true);
        },
        TEST_TIMEOUT_MS,
      );

      if (agent === 'claude') {
        it(
          '(c, R-HOOK-4 rationale) a hook that exits 1 with no output decides nothing: Claude Code applies its own rules (in -p a file-creating command is refused, a read runs)',
          async () => {
            const write = await scene(agent, { steps: [SHELL[agent].step(command)], before: 'exit1' });
            expect(write.events).toHaveLength(1);
            expect(existsSync(join(write.work, MARKER)), describeRun(write)).toBe(false);
            const refused = onlyResult(write);
            expect(refused.isError).toBe(true);
            expect(refused.output).toContain('needs approval');

            const read = await scene(agent, {
              steps: [SHELL[agent].step('cat probe.txt')],
              before: 'exit1',
              setup: (work) => writeFileSync(join(work, 'probe.txt'), 'probe-content-7f3a\n'),
            });
            expect(read.events).toHaveLength(1);
            expect(onlyResult(read).output, describeRun(read)).toContain('probe-content-7f3a');
          },
          TEST_TIMEOUT_MS,
        );
      } else {
        it(
          `(c, R-HOOK-4 rationale) a hook that exits 1 with no output does not block: ${agent} runs the call`,
          async () => {
            const s = await scene(agent, { steps: [SHELL[agent].step(command)], before: 'exit1' });
            expect(s.events).toHaveLength(1);
            expect(existsSync(join(s.work, MARKER)), describeRun(s)).toBe(true);
          },
          TEST_TIMEOUT_MS,
        );
      }

      it(
        `(d, R-HOOK-4 rationale) deny JSON on stdout + a reason on stderr + exit 2 blocks; the model sees the ${agent === 'codex' ? 'stderr' : 'JSON'} reason`,
        async () => {
          const s = await scene(agent, { steps: [SHELL[agent].step(command)], before: 'exit2' });
          expect(s.events).toHaveLength(1);
          expect(existsSync(join(s.work, MARKER)), describeRun(s)).toBe(false);
          const output = onlyResult(s).output;
          if (agent === 'codex') {
            expect(output).toContain(STDERR_REASON);
            expect(output).not.toContain(DENY_REASON);
          } else {
            expect(output).toContain(DENY_REASON);
            expect(output).not.toContain(STDERR_REASON);
          }
        },
        TEST_TIMEOUT_MS,
      );

      it(
        `an MCP server from the harness config is offered; its tool reaches the ${before} hook as ${MCP_ECHO[agent].hookTool}`,
        async () => {
          const s = await scene(agent, { steps: MCP_ECHO[agent].steps, before: 'allow', mcp: true });
          expect(s.run.exitCode, describeRun(s)).toBe(0);
          const mcpEvent = s.events.find((e) => e['tool_name'] === MCP_ECHO[agent].hookTool);
          expect(mcpEvent, describeRun(s)).toMatchObject({ hook_event_name: before, tool_input: { message: 'harness echo' } });
          if (agent === 'claude') expect(mcpEvent).toMatchObject({ mcp_server: { name: 'everything' } });
          if (agent === 'codex') expect(mcpEvent).not.toHaveProperty('mcp_server');
          if (agent === 'gemini') expect(mcpEvent).toMatchObject({ mcp_context: { server_name: 'everything', tool_name: 'echo' } });
          const echoed = s.model.toolResults().at(-1);
          expect(echoed?.output, describeRun(s)).toContain('Echo: harness echo');
        },
        TEST_TIMEOUT_MS,
      );

      it.skipIf(!canTrace)(
        'connects to nothing but the fake model (strace -f -e trace=connect)',
        async () => {
          const s = await scene(agent, { steps: [SHELL[agent].step(command)], before: 'allow', trace: true });
          expect(s.run.exitCode, describeRun(s)).toBe(0);
          expect(existsSync(join(s.work, MARKER))).toBe(true);
          expect(s.run.connections?.length ?? 0).toBeGreaterThan(0);
          expect(s.run.outbound).toEqual([]);
          expect(s.run.proxied).toEqual([]);
        },
        TEST_TIMEOUT_MS,
      );
    });
  }

  it(
    'a run that outlives its timeout is killed with every process it started, even its hooks\' detached children, and its temp HOME is removed',
    async () => {
      const s = await scene('codex', { steps: [SHELL.codex.step(command)], before: 'hang', timeoutMs: 3_000 });
      expect(s.run.timedOut, describeRun(s)).toBe(true);
      expect(s.events).toHaveLength(1);
      expect(existsSync(s.run.home)).toBe(false);
      expect(processesMentioning(s.dir)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
