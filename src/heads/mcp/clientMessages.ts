// What the relay reads from the client's own messages before routing them
// (relay.ts): a method that only looks like a gated one, who the client says it
// is in `initialize`, the tools listed once it is initialized, and the tool
// names it is offered, with the `assent__*` operation tools added to its first
// page of `tools/list`. The relay sends and logs what these return.
import { isPlainObject } from '../../core/base/plainObject.js';
import { toWellFormed } from '../../core/base/jsonLimits.js';
import type { Logger } from '../../service/logger.js';
import type { OperationToolHost } from './operationTools.js';
import { TOOL_NAME_SEPARATOR } from './relayPort.js';
import type { UpstreamLink } from './upstream.js';
import { gatedLookalikeOf, isRequest, RPC_METHOD_NOT_FOUND, type RpcErrorBody, type WireMessage, type WireRequest } from './wire.js';

/** How the relay turns away a message whose method folds to a gated one without being it: an error for a request, a warning for a notification. */
export type LookalikeRefusal = { kind: 'request'; error: RpcErrorBody } | { kind: 'notification'; warning: string; method: string };

/**
 * A method that folds to a gated one but is not it exactly would pass the
 * relay's switch ungated, and a lenient upstream might still run it as a tool
 * call: a request is refused (method not found), a notification dropped.
 * Undefined when the method is no such lookalike.
 */
export function lookalikeRefusal(message: WireMessage & { method: string }): LookalikeRefusal | undefined {
  const method = message.method;
  const gated = gatedLookalikeOf(method);
  if (gated === undefined) return undefined;
  const shown = JSON.stringify(method.slice(0, 80));
  if (!isRequest(message)) {
    return { kind: 'notification', warning: `dropped a notification whose method only looks unlike ${gated}; it never reaches an upstream`, method: method.slice(0, 80) };
  }
  return {
    kind: 'request',
    error: {
      code: RPC_METHOD_NOT_FOUND,
      message:
        `assent refused the method ${shown}: it is not exactly "${gated}" but reads as it once case, spaces and punctuation are ignored, ` +
        `so a server might run it without the gate. It was not forwarded; send exactly "${gated}".`,
      data: { type: 'method_not_found', details: { method: method.slice(0, 80), lookalikeOf: gated } },
    },
  };
}

/** What `initialize` says of the client: whether it can elicit (R-MCP-6), and who it is (informative only, it travels with every gated call). */
export function callerOf(request: WireRequest): { canElicit: boolean; caller: Record<string, unknown> | undefined } {
  const capabilities = request.params?.['capabilities'];
  const canElicit = isPlainObject(capabilities) && capabilities['elicitation'] !== undefined;
  const info = request.params?.['clientInfo'];
  if (!isPlainObject(info)) return { canElicit, caller: undefined };
  // Kept short and encodable: it is audited with every call.
  const field = (value: unknown): string | undefined => (typeof value === 'string' ? toWellFormed(value.slice(0, 200)) : undefined);
  return { canElicit, caller: { head: 'mcp', clientName: field(info['name']), clientVersion: field(info['version']) } };
}

/** Adds the `assent__*` operation tools to the first page of tools/list (opt-in); true when it changed the result. */
export function appendOperationTools(host: OperationToolHost | undefined, request: WireRequest, result: Record<string, unknown> | undefined): boolean {
  if (host === undefined || result === undefined || request.params?.['cursor'] !== undefined || !Array.isArray(result['tools'])) return false;
  result['tools'] = [...(result['tools'] as unknown[]), ...host.tools()];
  return true;
}

/**
 * Once the client is initialized, each upstream's tools are listed once: the
 * gate then knows their names (a `policy.tools` key naming none of them is
 * pointed out at start) and the first call needs no list for its annotations.
 */
export function preloadTools(links: readonly UpstreamLink[], log: Logger): void {
  for (const link of links) {
    if (!link.alive || link.toolsComplete || link.capabilities['tools'] === undefined) continue;
    link.loadTools().catch((error: unknown) => log.debug('could not list tools at start', { server: link.alias, error }));
  }
}

/** The tool names the client is offered, from every upstream whose list is complete (prefixed with several upstreams), and the operation tools. */
export function offeredToolNames(links: readonly UpstreamLink[], multi: boolean, host: OperationToolHost | undefined): string[] {
  const names: string[] = [];
  for (const link of links) {
    if (!link.toolsComplete) continue;
    for (const tool of link.tools.keys()) names.push(multi ? `${link.alias}${TOOL_NAME_SEPARATOR}${tool}` : tool);
  }
  for (const tool of host?.tools() ?? []) if (typeof tool['name'] === 'string') names.push(tool['name']);
  return names;
}
