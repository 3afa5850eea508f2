// `assent action mcp|review|connect` (SPEC §6): the single-action MCP heads.
// Registration stays light; each command loads the MCP SDK only when it runs,
// so `action run` and `action confirm` start as fast as before.
import type { Command } from 'commander';
import { BAD_ARGUMENTS_LINE, exitCodeForReport, refusalReport } from '../../../exec/report.js';
import type { ExecReport } from '../../../exec/report.js';
import { AssentError } from '../../../core/base/errors.js';
import { ExitWith } from '../output.js';

const systemClock = { now: () => Date.now(), monotonic: () => performance.now() };

const USAGE = {
  mcp:
    'Usage: assent action mcp POLICY REQUEST\n\nA stdio MCP server with one tool, execute_selected (no arguments), which runs the action in REQUEST once per call\nwhen POLICY allows it. ask and deny never launch anything here. Each result carries the redacted report. See docs/exec.md.\n',
  review:
    'Usage: assent action review POLICY REQUEST ENDPOINT_FILE\n\nRun in your own terminal. Listens on 127.0.0.1 for one MCP client (started with `assent action connect ENDPOINT_FILE`)\nand asks you to type "RUN <challenge>" here before every execute_selected call runs. Ends when the client leaves,\non Ctrl+C, or after 15 minutes. See docs/exec.md.\n',
  connect:
    'Usage: assent action connect ENDPOINT_FILE\n\nThe stdio relay an MCP client launches to reach a running `assent action review` broker. See docs/exec.md.\n',
};

function badArguments(): never {
  process.stdout.write(BAD_ARGUMENTS_LINE);
  throw new ExitWith(1);
}

function writeReport(report: ExecReport): never {
  process.stdout.write(`${JSON.stringify(report)}\n`);
  throw new ExitWith(exitCodeForReport(report));
}

/** `--help` prints usage and exits 0; otherwise exactly `count` non-empty, non-flag paths. */
function parsePositional(raw: string[], which: keyof typeof USAGE, count: number): string[] {
  if (raw.length === 1 && (raw[0] === '--help' || raw[0] === '-h')) {
    process.stdout.write(USAGE[which]);
    throw new ExitWith(0);
  }
  if (raw.length !== count || raw.some((arg) => arg === '' || arg.startsWith('-'))) badArguments();
  return raw;
}

function subcommand(action: Command, name: string, description: string): Command {
  return action.command(name).description(description).argument('[args...]').helpOption(false).allowUnknownOption(true).allowExcessArguments(true);
}

function messageOf(error: unknown): string {
  return error instanceof AssentError ? error.message : 'unexpected failure';
}

/** Registers `action mcp`, `action review` and `action connect` on the `action` command. */
export function registerActionMcpCommands(action: Command): void {
  subcommand(action, 'mcp', 'stdio MCP server with one tool, execute_selected, that runs the selected action when policy allows it.').action(
    async (raw: string[]) => {
      const [policy, request] = parsePositional(raw, 'mcp', 2) as [string, string];
      await runActionMcp({ policy, request });
    },
  );
  subcommand(action, 'review', 'Review broker: serve execute_selected to one MCP client; every call needs RUN <challenge> typed in this terminal.').action(
    async (raw: string[]) => {
      const [policy, request, endpoint] = parsePositional(raw, 'review', 3) as [string, string, string];
      await runActionReview({ policy, request }, endpoint);
    },
  );
  subcommand(action, 'connect', 'stdio relay from an MCP client to a running `assent action review` broker.').action(async (raw: string[]) => {
    const [endpoint] = parsePositional(raw, 'connect', 1) as [string];
    await runActionConnect(endpoint);
  });
}

async function runActionMcp(paths: { policy: string; request: string }): Promise<never> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { createExecuteSelectedServer } = await import('../../action/executeSelected.js');
  const { runActionFlow } = await import('../../../exec/actionFlow.js');
  const server = createExecuteSelectedServer(
    () => runActionFlow(paths, { signals: process, diagnose: (text) => process.stderr.write(text) }),
    'Runs the one action the operator selected (policy and request files) when the policy allows it, and returns a redacted report. ' +
      'Takes no arguments. If the policy asks for a person (policy-ask) or denies, nothing is launched.',
  );
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await server.close();
  throw new ExitWith(0);
}

async function runActionReview(paths: { policy: string; request: string }, endpointPath: string): Promise<never> {
  const { isInteractiveTerminal, confirmDeadlineFromEnv } = await import('../../../channels/ttyChallenge.js');
  // R-TTY-1: checked before anything else is read.
  if (!isInteractiveTerminal(process.stdin, process.stderr)) {
    process.stderr.write('assent: action review needs a terminal on stdin and stderr; run it in your own terminal, not from an agent.\n');
    writeReport(refusalReport('terminal-required'));
  }
  const { ReviewSession } = await import('../../action/reviewSession.js');
  const { BrokerSignals, lifetimeFromEnv, startReviewBroker } = await import('../../action/reviewBroker.js');
  const { createExecuteSelectedServer } = await import('../../action/executeSelected.js');
  const say = (text: string): void => void process.stderr.write(text);
  const confirmationSignals = new BrokerSignals();
  const session = new ReviewSession({
    paths,
    clock: systemClock,
    input: process.stdin,
    output: process.stderr,
    signals: confirmationSignals,
    deadlineMs: confirmDeadlineFromEnv(process.env),
    onInputEnded: () => {
      say('\nassent: the terminal input ended (Ctrl+D); the review broker stops.\n');
      broker?.stop('terminal-closed');
    },
  });
  let broker: Awaited<ReturnType<typeof startReviewBroker>> | undefined;
  const refusal = await session.open();
  if (refusal) writeReport(refusal);
  try {
    broker = await startReviewBroker({
      endpointPath,
      say,
      processSignals: process,
      confirmationSignals,
      lifetimeMs: lifetimeFromEnv(process.env),
      createServer: () =>
        createExecuteSelectedServer(
          (cancelled) => session.confirmCall(cancelled),
          'Asks the operator to confirm, in their terminal, the one action they selected, then runs it once and returns a redacted report. ' +
            'Takes no arguments. Each call needs a fresh confirmation; a refusal runs nothing.',
        ),
    });
  } catch (error) {
    session.close();
    say(`assent: ${messageOf(error)}\n`);
    writeReport(refusalReport('preparation-failed'));
  }
  if (broker === undefined) return writeReport(refusalReport('preparation-failed'));
  say(
    `assent: review broker listening on 127.0.0.1:${broker.port} (policy decision: ${session.decision}).\n` +
      `Endpoint file: ${endpointPath}\n` +
      `Configure the MCP client to launch: assent action connect ${endpointPath}\n` +
      'Every execute_selected call will ask you here. Ctrl+C stops the broker; it ends by itself after 15 minutes.\n',
  );
  await broker.ended;
  session.close();
  if (process.stdin.isTTY) process.stdin.destroy();
  throw new ExitWith(0);
}

async function runActionConnect(endpointPath: string): Promise<never> {
  const { readEndpointFile } = await import('../../action/endpointFile.js');
  const { relayToBroker } = await import('../../action/relay.js');
  try {
    const endpoint = readEndpointFile(endpointPath);
    await relayToBroker(endpoint, { input: process.stdin, output: process.stdout });
  } catch (error) {
    process.stderr.write(`assent: ${messageOf(error)}\n`);
    throw new ExitWith(2);
  }
  throw new ExitWith(0);
}
