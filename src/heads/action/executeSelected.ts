// The one MCP tool of the action heads, `execute_selected` (SPEC §6). The tool
// takes no arguments: the action is whatever the operator selected with the
// policy and request files, so the agent can only ask "run it", never "run this".
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import { exitCodeForReport } from '../../exec/report.js';
import type { ExecReport } from '../../exec/report.js';

export const EXECUTE_SELECTED = 'execute_selected';

/**
 * Runs the selected action once and returns its redacted report (R-EXEC-4).
 * `cancelled` aborts when the client cancels the request (MCP
 * `notifications/cancelled`), so a head can withdraw a prompt nobody awaits.
 */
export type ExecuteSelected = (cancelled: AbortSignal) => Promise<ExecReport>;

const REASON_HINTS: Partial<Record<ExecReport['reason'], string>> = {
  'policy-ask':
    'The policy asks for a person to confirm this action; this tool never launches it. Ask the operator to run it with `assent action confirm` or `assent action review` in their terminal.',
  'policy-deny': 'The policy denies this action (or the policy or request file is invalid); nothing was started.',
  'configuration-changed': 'The policy or request file changed after it was reviewed; nothing more runs on this connection. The operator must start a new review.',
  'configuration-unavailable': 'The policy or request file can no longer be read; nothing was started.',
  'confirmation-denied': 'The operator did not confirm this call in their terminal; nothing was started.',
  'confirmation-unavailable': 'No confirmation arrived from the operator\u2019s terminal in time; nothing was started.',
  'action-cancelled': 'The operator cancelled this call; it was not started or was stopped.',
};

/** The tool result: the report as JSON text, plus one line the agent can act on when it failed. */
export function reportToolResult(report: ExecReport): CallToolResult {
  const ok = exitCodeForReport(report) === 0;
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(report) }];
  const hint = REASON_HINTS[report.reason];
  if (!ok && hint !== undefined) content.push({ type: 'text', text: `${report.reason}: ${hint}` });
  return { content, isError: !ok };
}

/**
 * Builds the server with its single tool. Calls are run one after another:
 * two overlapping calls never start two children or two prompts at once.
 */
export function createExecuteSelectedServer(execute: ExecuteSelected, description: string): McpServer {
  const server = new McpServer({ name: 'assent-action', version: VERSION }, { capabilities: { tools: {} } });
  let queue: Promise<unknown> = Promise.resolve();
  server.registerTool(
    EXECUTE_SELECTED,
    {
      title: 'Execute the selected action',
      description,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (extra) => {
      const start = (): Promise<ExecReport> => execute(extra.signal);
      const run = queue.then(start, start);
      queue = run.catch(() => undefined);
      return reportToolResult(await run);
    },
  );
  return server;
}
