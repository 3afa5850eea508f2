// `assent policy explain AGENT TOOL --input JSON [--cwd DIR] [--json]` (R-POL-9):
// the decision one agent action would get, part by part, without running or
// filing anything. With a running daemon, its pinned policy answers; without
// one, the current config.json (never a daemon started for the question).
import type { Command } from 'commander';
import { parseAgentName, type AgentName } from '../../../core/agent/agentAction.js';
import type { AgentPolicyExplanation } from '../../../core/policy/agentPolicy.js';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { connectForCli } from '../../daemon/clientConnection.js';
import type { DaemonClient } from '../../daemon/rpcClient.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';

interface ExplainOptions {
  input: string;
  cwd?: string;
  json?: boolean;
}

function parseInput(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AssentError('invalid_params', `--input is not JSON (${error instanceof Error ? error.message : String(error)}); give the tool_input object, e.g. --input '{"command":"git status"}'`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AssentError('invalid_params', `--input must be a JSON object (the tool_input), e.g. --input '{"command":"git status"}'`);
  }
  return value as Record<string, unknown>;
}

/** The running daemon, or undefined when none answers (no daemon is started for this). */
async function runningDaemon(): Promise<DaemonClient | undefined> {
  try {
    return await connectForCli({ autoSpawn: false, timeoutMs: 2000 });
  } catch (error) {
    if (error instanceof AssentError && error.type === 'unavailable' && error.details?.['reason'] === 'not-running') return undefined;
    throw error;
  }
}

async function explainLocally(params: { agent: AgentName; tool: string; input: Record<string, unknown>; cwd: string }): Promise<AgentPolicyExplanation> {
  const [{ resolveStatePaths }, { loadConfigFile }, { compilePolicy }, { AgentJudge }, { evaluateAgentAction }, { agentActionKind, agentToolId }, { explainAgentPolicy }] = await Promise.all([
    import('../../../state/statePaths.js'),
    import('../../../journal/configFile.js'),
    import('../../../core/policy/toolPolicy.js'),
    import('../../../shell/agentJudge.js'),
    import('../../../service/agentActions.js'),
    import('../../../core/agent/agentAction.js'),
    import('../../../core/policy/agentPolicy.js'),
  ]);
  const paths = resolveStatePaths(process.env);
  const loaded = loadConfigFile(paths.config);
  // Auto-approval rules live in the daemon's journal; without a daemon they are not consulted.
  const snapshot = compilePolicy(loaded.config.policy, []);
  const judge = new AgentJudge({ env: process.env, assentHome: paths.home });
  const kind = agentActionKind(params.agent, params.tool);
  if (kind === 'shell') await judge.ready();
  const result = evaluateAgentAction({ snapshot, config: { config: loaded.config, revision: loaded.revision }, judge, nowMs: Date.now() }, { ...params, kind });
  return explainAgentPolicy(result, agentToolId(params.agent, params.tool));
}

function render(explanation: AgentPolicyExplanation, source: string): string {
  const lines = [`decision: ${explanation.decision}  (${source})`];
  for (const part of explanation.parts) {
    lines.push(`  ${part.decision.padEnd(6)} ${part.kind.padEnd(7)} ${escapeText(part.text)}`);
    lines.push(`         decided by ${escapeText(part.rule ?? 'policy')}`);
    if (part.reason !== undefined) lines.push(`         why: ${escapeText(part.reason)}`);
  }
  return `${lines.join('\n')}\n`;
}

export function registerPolicyCommands(program: Command): void {
  const policy = program.command('policy').description('Show how the policy decides');
  policy
    .command('explain')
    .description('Explain the decision for one agent action: each simple command, path or URL with the rule or default that decided it (runs nothing, files nothing)')
    .argument('<agent>', 'claude-code (or claude), codex, gemini, opencode, kilo, copilot, qwen, droid, auggie or cline')
    .argument('<tool>', "the agent's tool name, e.g. Bash, Read, apply_patch, run_shell_command")
    .requiredOption('--input <json>', 'the tool_input as JSON, e.g. \'{"command":"git status"}\'')
    .option('--cwd <dir>', "the agent's working directory (default: this one)")
    .option('--json', 'print {ok, data:{decision, parts}}')
    .action(async (agentText: string, tool: string, options: ExplainOptions) => {
      let client: DaemonClient | undefined;
      try {
        const agent = parseAgentName(agentText);
        if (agent === undefined) throw new AssentError('invalid_params', `unknown agent ${JSON.stringify(agentText)}; use claude-code (or claude), codex, gemini, opencode, kilo, copilot, qwen, droid, auggie or cline`);
        const { resolve } = await import('node:path');
        const params = { agent, tool, input: parseInput(options.input), cwd: resolve(options.cwd ?? process.cwd()) };
        client = await runningDaemon();
        const explanation =
          client === undefined ? await explainLocally(params) : await client.call<AgentPolicyExplanation>('policy.explain', params);
        const source = client === undefined ? 'config.json; no daemon runs, so auto-approval rules were not consulted' : "the daemon's pinned policy";
        if (options.json) printJsonOk(explanation, { source: client === undefined ? 'config' : 'daemon' });
        else process.stdout.write(render(explanation, source));
      } catch (error) {
        throw new ExitWith(reportFailure(error, options));
      } finally {
        client?.close();
      }
    });
}
