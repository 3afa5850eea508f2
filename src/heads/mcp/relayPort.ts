// What the relay lends the parts it drives: the tools/call pipeline
// (callPipeline.ts) and the several-upstreams routing (routing.ts) receive the
// relay as these interfaces, and the pipeline receives the routing as one too,
// so neither imports the relay (or the routing) back. relay.ts implements them.
import type { Logger } from '../../service/logger.js';
import type { OperationToolHost } from './operationTools.js';
import type { UpstreamLink } from './upstream.js';
import type { RpcErrorBody, RpcId, WireMessage, WireRequest } from './wire.js';

/** Separator between alias and tool name when several upstreams share one tool namespace (R-MCP-2). */
export const TOOL_NAME_SEPARATOR = '__';

/** A client request the gateway has not answered yet. Every field is always present, so all of them share one object shape. */
export interface ClientInflight {
  method: string;
  /** Set while a tools/call waits at the gate; cancelling stops the wait and nothing goes upstream. */
  gate: { cancel(): void } | undefined;
  link: UpstreamLink | undefined;
  upstreamId: RpcId | undefined;
  /** Reports an allowed call's outcome (and its result, for the gate that records it) to the gate exactly once. */
  finish: ((ok: boolean, result?: Record<string, unknown>) => void) | undefined;
}

/** Called with a plain result response the relay passed on unparsed: the line, and where its `result` value lies in it. */
export type UnparsedResult = (ok: boolean, line: string, resultStart: number, resultEnd: number) => void;

/** What the routing of several upstreams needs from the relay. */
export interface RoutingRelay {
  readonly links: readonly UpstreamLink[];
  /** Several upstreams: tool names are prefixed and list methods aggregated (R-MCP-2). */
  readonly multi: boolean;
  readonly log: Logger;
  first(): UpstreamLink;
  /**
   * Relays a client request to one upstream; the response comes back under the client's id. `onResponse` returns
   * true when it changed the response; with `onResult`, a plain result response may instead pass unparsed.
   */
  forward(link: UpstreamLink, request: WireRequest, onResponse?: (response: WireMessage) => boolean | void, inflight?: ClientInflight, onResult?: UnparsedResult): void;
  reply(id: RpcId, result: Record<string, unknown>): void;
  fail(id: RpcId, error: RpcErrorBody): void;
  /** Adds the `assent__*` operation tools to the first page of tools/list (opt-in); true when it changed the result. */
  appendOperationTools(request: WireRequest, result: Record<string, unknown> | undefined): boolean;
}

/** What the tools/call pipeline needs from the relay. */
export interface CallRelay extends RoutingRelay {
  readonly sessionId: string;
  readonly operationTools: OperationToolHost | undefined;
  /** Client requests not answered yet, by the client's id. */
  readonly clientInflight: Map<RpcId, ClientInflight>;
  /** Who the client said it is in initialize; it travels with every gated call. */
  readonly caller: Record<string, unknown>;
  /** Whether the client declared the elicitation capability (R-MCP-6). */
  readonly clientCanElicit: boolean;
  /** True once the gateway began to close; nothing more is sent or relayed. */
  readonly isClosing: boolean;
  /** `line`, when given, is this very message as an upstream wrote it, passed on unchanged. */
  sendToClient(message: WireMessage, line?: string): void;
  /** Sends `elicitation/create` to the client; an abort cancels it there. */
  elicit(params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
}

/** What the tools/call pipeline needs from the routing. */
export interface ToolRouter {
  /** The upstream and its own tool name for a client-facing tool name; undefined when no upstream owns it. */
  resolveTool(name: string): { link: UpstreamLink; tool: string } | undefined;
  /** Remembers which upstream created a task named in a response. */
  learnTask(link: UpstreamLink, response: WireMessage): void;
}
