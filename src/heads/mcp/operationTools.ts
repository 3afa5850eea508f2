// assent's own operations as MCP tools (R-OPS-1, R-OPS-3): every operation the
// manifest exposes on MCP becomes a tool `assent__<name with . as _>` that calls
// the daemon over its socket. Human decisions are never listed, whatever an
// exposure says, so a model cannot approve its own calls through this door, and
// approvals are shown only for the calling session (another session's
// arguments are not this agent's to read).
import { isPlainObject } from '../../core/base/plainObject.js';
import { AssentError, toAssentError } from '../../core/base/errors.js';
import type { ManifestEntry } from '../../operations/index.js';
import { declaredManifest } from '../../operations/manifest.js';
import { matchesSelector } from '../../service/approvalService.js';
import { DaemonClient } from '../daemon/rpcClient.js';

export const OPERATION_TOOL_PREFIX = 'assent__';

/** `approvals.list` → `assent__approvals_list`. */
export function operationToolName(operation: string): string {
  return `${OPERATION_TOOL_PREFIX}${operation.replace(/\./g, '_')}`;
}

/** Who is calling an operation tool: the gateway's session, whose approvals are the only ones it sees. */
export interface OperationToolScope {
  sessionId: string;
}

/** What the gateway needs: the tools to append to tools/list and a way to answer a call to one. */
export interface OperationToolHost {
  tools(): Record<string, unknown>[];
  handles(toolName: string): boolean;
  call(toolName: string, args: Record<string, unknown>, scope: OperationToolScope): Promise<Record<string, unknown>>;
}

export interface OperationToolOptions {
  manifest: readonly ManifestEntry[];
  /** One daemon RPC call (principal: the installation owner, like every socket call). */
  callDaemon(method: string, params: Record<string, unknown>): Promise<unknown>;
}

function inputSchemaOf(entry: ManifestEntry): Record<string, unknown> {
  const schema = { ...(entry.params as Record<string, unknown>) };
  delete schema['$schema'];
  return schema;
}

/**
 * `approvals.list` and `approvals.get` for one session (hardening 4): the
 * daemon is asked for that session's approvals only, and whatever comes back
 * is filtered again, so no selector or id names into another session. Every
 * other operation is passed through as it is.
 */
async function callInSession(
  callDaemon: OperationToolOptions['callDaemon'],
  operation: string,
  args: Record<string, unknown>,
  sessionId: string,
): Promise<unknown> {
  if (operation === 'approvals.list') {
    const { selector, limit, ...rest } = args;
    if (selector !== undefined && (typeof selector !== 'string' || selector.length > 400)) {
      throw new AssentError('invalid_params', 'selector must be a string of at most 400 characters (an approval id, server/tool or server/).');
    }
    if (limit !== undefined && !(typeof limit === 'number' && Number.isInteger(limit) && limit > 0 && limit <= 100_000)) {
      throw new AssentError('invalid_params', 'limit must be a whole number from 1 to 100000.');
    }
    const listed = await callDaemon(operation, { ...rest, selector: sessionId });
    const own = (Array.isArray(listed) ? listed : []).filter(
      (view): view is Record<string, unknown> =>
        isPlainObject(view) &&
        view['sessionId'] === sessionId &&
        matchesSelector(view as Parameters<typeof matchesSelector>[0], selector),
    );
    return limit === undefined ? own : own.slice(0, limit);
  }
  if (operation === 'approvals.get') {
    const view = await callDaemon(operation, args);
    if (!isPlainObject(view) || view['sessionId'] !== sessionId) {
      throw new AssentError('not_found', `no approval ${JSON.stringify(String(args['id']).slice(0, 64))} in this MCP session; assent__approvals_list shows the approvals this session filed.`);
    }
    return view;
  }
  return callDaemon(operation, args);
}

/** Tools for the operations exposed on MCP; a call's result is the operation's JSON result as text. */
export function createOperationTools(options: OperationToolOptions): OperationToolHost {
  const exposed = options.manifest.filter((entry) => entry.exposure.mcp === true && entry.class !== 'human-decision');
  const byTool = new Map(exposed.map((entry) => [operationToolName(entry.name), entry]));
  const tools = exposed.map((entry) => ({
    name: operationToolName(entry.name),
    title: `assent ${entry.name}`,
    description: `${entry.summary} (assent operation ${entry.name}; the same result as \`assent\` --json and POST /api/v1/${entry.name}).`,
    inputSchema: inputSchemaOf(entry),
    annotations: { readOnlyHint: entry.class === 'read', destructiveHint: false, openWorldHint: false },
  }));
  return {
    tools: () => tools.map((tool) => ({ ...tool })),
    handles: (toolName) => toolName.startsWith(OPERATION_TOOL_PREFIX),
    call: async (toolName, args, scope) => {
      const entry = byTool.get(toolName);
      try {
        if (entry === undefined) {
          throw new AssentError('not_found', `assent has no MCP tool ${JSON.stringify(toolName.slice(0, 80))}; call tools/list for the assent__ tools this gateway offers.`);
        }
        const result = await callInSession(options.callDaemon, entry.name, args, scope.sessionId);
        return { content: [{ type: 'text', text: JSON.stringify(result ?? null) }] };
      } catch (error) {
        const typed = toAssentError(error);
        return { isError: true, content: [{ type: 'text', text: `${typed.type}: ${typed.message}` }] };
      }
    },
  };
}

/**
 * The operation tools of `assent mcp --assent-tools`: the static manifest, and
 * a daemon connection made on first use (never auto-spawned: a gateway fails
 * closed rather than start a daemon behind the operator's back).
 */
export function connectOperationTools(socketPath: string): { host: OperationToolHost; close(): void } {
  let client: Promise<DaemonClient> | undefined;
  const host = createOperationTools({
    manifest: declaredManifest(),
    callDaemon: async (method, params) => {
      client ??= DaemonClient.connect({ socketPath, autoSpawn: false });
      try {
        return await (await client).call(method, params);
      } catch (error) {
        if (error instanceof AssentError && error.type === 'unavailable') client = undefined;
        throw error;
      }
    },
  });
  return {
    host,
    close: () => {
      void client?.then((connected) => connected.close(), () => undefined);
    },
  };
}
