// The `tools/call` pipeline (R-MCP-3): checks the call is one the approver, the
// digest and the upstream all read alike, asks the CallGate with the tool's
// annotations, keeps the client from timing out while a human decides
// (R-MCP-4), offers the elicitation channel (R-MCP-6), and only then forwards
// the call; its outcome goes back to the gate for audit.
import { isPlainObject } from '../../core/base/plainObject.js';
import { toAssentError } from '../../core/base/errors.js';
import { findJsonProblem, hasLoneSurrogate, jsonPointerOf, MAX_JSON_DEPTH } from '../../core/base/jsonLimits.js';
import { describeDenial, type CallGate, type GateCall, type GateDecision, type ToolAnnotationHints } from './gate.js';
import type { OperationToolHost } from './operationTools.js';
import { TOOL_NAME_SEPARATOR, type CallRelay, type ClientInflight, type ToolRouter } from './relayPort.js';
import { UPSTREAM_UNAVAILABLE_CODE, type KnownTool, type UpstreamLink } from './upstream.js';
import { RPC_INVALID_PARAMS, type RpcErrorBody, type WireMessage, type WireRequest } from './wire.js';

export interface ToolCallPipelineOptions {
  gate: CallGate;
  keepAliveMs: number;
  /** Monotonic milliseconds, for call durations. */
  now: () => number;
  setInterval: (fn: () => void, ms: number) => unknown;
  clearInterval: (handle: unknown) => void;
}

export class ToolCallPipeline {
  constructor(
    readonly relay: CallRelay,
    readonly routing: ToolRouter,
    readonly options: ToolCallPipelineOptions,
  ) {}

  /** Every `tools/call` request from the client; `size` is the length of its line, when known. */
  onToolCall(request: WireRequest, size?: number): void {
    const host = this.relay.operationTools;
    if (host?.handles(String(request.params?.['name']))) void this.callOperationTool(request, host);
    else this.callTool(request, size);
  }

  /** An `assent__*` tool: answered from the daemon for this session, never forwarded upstream and never gated (it only exposes non-decision operations). */
  private async callOperationTool(request: WireRequest, host: OperationToolHost): Promise<void> {
    const params = request.params ?? {};
    const args = isPlainObject(params['arguments']) ? params['arguments'] : {};
    this.relay.reply(request.id, await host.call(String(params['name']), args, { sessionId: this.relay.sessionId }));
  }

  private callTool(request: WireRequest, size: number | undefined): void {
    const relay = this.relay;
    const params = request.params ?? {};
    const name = params['name'];
    if (typeof name !== 'string') {
      relay.fail(request.id, { code: RPC_INVALID_PARAMS, message: 'tools/call needs params.name, the tool name as a string.' });
      return;
    }
    if (hasLoneSurrogate(name)) {
      relay.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message: 'tools/call params.name: the tool name has a lone UTF-16 surrogate, which no server can be named by; the call was not forwarded. Use a name from tools/list.',
        data: { type: 'invalid_params', details: { path: '/name', problem: 'lone_surrogate' } },
      });
      return;
    }
    const target = this.routing.resolveTool(name);
    if (target === undefined) {
      relay.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message:
          `Unknown tool "${name}": through assent tool names are <alias>${TOOL_NAME_SEPARATOR}<tool> with alias one of ` +
          `${relay.links.map((l) => l.alias).join(', ')}. Call tools/list for the exact names.`,
      });
      return;
    }
    const { link, tool } = target;
    const rawArgs = params['arguments'];
    if (rawArgs !== undefined && !isPlainObject(rawArgs)) {
      // What the gate decides must be exactly what the upstream receives.
      relay.fail(request.id, { code: RPC_INVALID_PARAMS, message: 'tools/call params.arguments must be an object when present; the call was not forwarded.' });
      return;
    }
    const args = rawArgs ?? {};
    // The approver's preview, the digest, the policy and the upstream must all read the same value (hardening 1, 2).
    const problem = findJsonProblem(args);
    if (problem !== undefined) {
      const pointer = jsonPointerOf(problem.path);
      relay.log.info('refused a tools/call whose arguments are not portable JSON', { server: link.alias, tool, problem: problem.kind });
      relay.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message:
          `tools/call arguments at ${pointer}: ${problem.message}; the call was not forwarded. ` +
          `Send plain JSON arguments (well-formed strings, no "__proto__" key, at most ${MAX_JSON_DEPTH} levels of nesting).`,
        data: { type: 'invalid_params', details: { path: pointer, problem: problem.kind } },
      });
      return;
    }
    // A call nothing could run never reaches policy or a person (hardening 19.5): an upstream that is down,
    // or a tool its complete list does not name.
    if (!link.alive) {
      relay.fail(request.id, link.unavailableBody('tools/call'));
      return;
    }
    const known = link.tools.get(tool);
    if (known === undefined && link.toolsComplete) {
      relay.fail(request.id, unknownToolBody(name, link, relay.multi));
      return;
    }
    const run = new ToolCallRun(this, request, link, tool, args, size);
    relay.clientInflight.set(request.id, run.inflight);
    // Known annotations (the usual case once tools/list was seen) decide in this very turn.
    if (known !== undefined) run.decide(known.annotations as ToolAnnotationHints | undefined);
    else void this.listedTool(link, tool, name).then((listed) => (listed.ok ? run.decide(listed.tool.annotations as ToolAnnotationHints | undefined) : run.refuse(listed.error)));
  }

  /** The upstream's entry for a tool not seen yet: fetches its whole tools/list first. */
  private async listedTool(link: UpstreamLink, tool: string, name: string): Promise<{ ok: true; tool: KnownTool } | { ok: false; error: RpcErrorBody }> {
    try {
      await link.loadTools();
    } catch (error) {
      this.relay.log.warn('could not list tools to check a tools/call; refusing it', { server: link.alias, error });
      if (!link.alive) return { ok: false, error: link.unavailableBody('tools/call') };
      return {
        ok: false,
        error: {
          code: UPSTREAM_UNAVAILABLE_CODE,
          message:
            `MCP server "${link.alias}" did not answer tools/list (${toAssentError(error).message}), so assent cannot tell whether "${name}" is one of its tools; ` +
            `the call was not forwarded and nobody was asked. Check the server's stderr output, then retry.`,
          data: { type: 'unavailable', details: { server: link.alias, method: 'tools/list' } },
        },
      };
    }
    const known = link.tools.get(tool);
    return known === undefined ? { ok: false, error: unknownToolBody(name, link, this.relay.multi) } : { ok: true, tool: known };
  }

  /** Progress notifications while a call waits for a human, so the client does not abort it as idle (R-MCP-4). */
  startKeepAlive(progressToken: unknown, server: string, tool: string): unknown {
    let beats = 0;
    return this.options.setInterval(() => {
      beats += 1;
      this.relay.sendToClient({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: {
          progressToken,
          // Strictly increasing and below 1, so an upstream that later reports progress from 1 on stays monotonic.
          progress: beats / (beats + 1),
          message: `Waiting for the operator to decide on ${server}/${tool} (see \`assent pending\`).`,
        },
      });
    }, this.options.keepAliveMs);
  }
}

const ABORTED = Symbol('aborted');

/**
 * One tools/call from the moment its input was checked: its wait at the gate
 * (cancellable by the client or by close), the decision, the forwarding and
 * the outcome report. One object with its callbacks as fields, so the allow
 * path allocates little; its AbortSignal is made only when the gate reads it,
 * which an allow or deny settled from the policy snapshot never does.
 */
class ToolCallRun {
  readonly inflight: ClientInflight;
  private controller: AbortController | undefined;
  private cancelled = false;
  private decided = false;
  private keepAlive: unknown;
  private callId: string | undefined;
  private startedAt = 0;
  private finished = false;

  constructor(
    private readonly pipeline: ToolCallPipeline,
    private readonly request: WireRequest,
    private readonly link: UpstreamLink,
    private readonly tool: string,
    readonly args: Record<string, unknown>,
    readonly size: number | undefined,
  ) {
    this.inflight = { method: request.method, gate: this, link: undefined, upstreamId: undefined, finish: undefined };
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.cancelled) this.controller.abort();
    return this.controller.signal;
  }

  /** The client cancelled or the gateway closes: stop waiting; a gate that ignores its signal still cannot hold the call. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.controller?.abort();
    this.conclude(ABORTED);
  }

  /** Answers the call with an error before any decision (its tool could not be found); nothing was asked or forwarded. */
  refuse(error: RpcErrorBody): void {
    const relay = this.pipeline.relay;
    relay.clientInflight.delete(this.request.id);
    this.decided = true;
    if (!this.cancelled) relay.fail(this.request.id, error);
  }

  decide(annotations: ToolAnnotationHints | undefined): void {
    const relay = this.pipeline.relay;
    if (this.cancelled) {
      relay.clientInflight.delete(this.request.id);
      return;
    }
    const meta = this.request.params?.['_meta'];
    const progressToken = isPlainObject(meta) ? meta['progressToken'] : undefined;
    if (progressToken !== undefined) this.keepAlive = this.pipeline.startKeepAlive(progressToken, this.link.alias, this.tool);
    const call = new GateCallView(this, relay.sessionId, this.link.alias, this.tool, relay.caller);
    if (annotations !== undefined) call.annotations = annotations;
    if (this.size !== undefined) call.argsSize = this.size;
    if (relay.clientCanElicit) call.elicit = (elicitParams, signal) => relay.elicit(elicitParams, signal);
    try {
      this.pipeline.options.gate.authorize(call).then(this.onDecision, this.onGateFailure);
    } catch (error) {
      this.onGateFailure(error);
    }
  }

  private readonly onDecision = (decision: GateDecision): void => {
    // Allowed after the client cancelled (or the gateway began to close): it never runs, and the gate must not keep it open.
    if ((this.decided || this.pipeline.relay.isClosing) && decision.allowed && decision.callId !== undefined) this.withdrawAllowed(decision.callId);
    this.conclude(decision);
  };

  private withdrawAllowed(callId: string): void {
    try {
      this.pipeline.options.gate.withdraw?.(callId);
    } catch (error) {
      this.pipeline.relay.log.warn('gate.withdraw threw', { error });
    }
  }

  private readonly onGateFailure = (error: unknown): void => {
    // A gate that fails cannot have allowed anything: fail closed (R-MCP-5).
    const { link, tool } = this;
    this.pipeline.relay.log.error('gate failed; refusing the call', { server: link.alias, tool, error });
    this.conclude({
      allowed: false,
      reason: 'no_consent_channel',
      message: describeDenial('no_consent_channel', { server: link.alias, tool, hint: `the approval service failed: ${toAssentError(error).type}` }),
    });
  };

  private conclude(decision: GateDecision | typeof ABORTED): void {
    if (this.decided) return;
    this.decided = true;
    if (this.keepAlive !== undefined) this.pipeline.options.clearInterval(this.keepAlive);
    this.keepAlive = undefined;
    this.inflight.gate = undefined;
    const { relay, options } = this.pipeline;
    const request = this.request;
    if (decision === ABORTED || relay.isClosing) {
      relay.clientInflight.delete(request.id);
      return;
    }
    if (!decision.allowed) {
      relay.clientInflight.delete(request.id);
      relay.reply(request.id, deniedResult(decision));
      return;
    }
    if (decision.replay !== undefined) {
      // R-MCP-8 / R-J-4: the identical call already ran under its approval; the upstream never sees it again.
      relay.clientInflight.delete(request.id);
      relay.reply(request.id, decision.replay);
      return;
    }
    this.callId = decision.callId;
    this.startedAt = options.now();
    this.inflight.finish = this.finish;
    // Written from the parsed request, whose arguments are exactly what was checked and decided:
    // never the client's original bytes, which another JSON reader might read differently (hardening 1).
    const forwarded = relay.multi ? { ...request, params: { ...request.params, name: this.tool } } : request;
    relay.forward(this.link, forwarded, relay.multi ? this.onMultiResponse : this.onResponse, this.inflight, relay.multi ? undefined : this.onResult);
    if (!relay.clientInflight.has(request.id)) this.finish(false);
  }

  private readonly onResponse = (response: WireMessage): void => {
    this.finish(response.error === undefined && response.result?.['isError'] !== true, response.result);
  };

  /** A result the relay passed on unparsed (`line` from `start` to `end`): parsed only for a gate that records results. */
  private readonly onResult = (ok: boolean, line: string, start: number, end: number): void => {
    const records = this.callId !== undefined && this.pipeline.options.gate.recordsResult?.(this.callId) === true;
    this.finish(ok, records ? (JSON.parse(line.slice(start, end)) as Record<string, unknown>) : undefined);
  };

  private readonly onMultiResponse = (response: WireMessage): void => {
    this.onResponse(response);
    this.pipeline.routing.learnTask(this.link, response);
  };

  /** Reports the allowed call's outcome (and its result, for the gate that records it) to the gate exactly once. */
  private readonly finish = (ok: boolean, result?: Record<string, unknown>): void => {
    const gate = this.pipeline.options.gate;
    if (this.finished || this.callId === undefined || gate.finish === undefined) return;
    this.finished = true;
    const durationMs = this.pipeline.options.now() - this.startedAt;
    try {
      gate.finish(this.callId, result === undefined ? { ok, durationMs } : { ok, durationMs, result });
    } catch (error) {
      this.pipeline.relay.log.warn('gate.finish threw', { error });
    }
  };
}

/** The call as the gate sees it; `signal` is read through to the run, which makes it only on demand. */
class GateCallView implements GateCall {
  declare annotations?: ToolAnnotationHints;
  declare elicit?: GateCall['elicit'];
  declare argsSize?: number;
  readonly args: Record<string, unknown>;
  readonly #run: ToolCallRun;

  constructor(
    run: ToolCallRun,
    readonly sessionId: string,
    readonly server: string,
    readonly tool: string,
    readonly caller: Record<string, unknown>,
  ) {
    this.#run = run;
    this.args = run.args;
  }

  get signal(): AbortSignal {
    return this.#run.signal;
  }
}

/** How many of an upstream's tool names an unknown-tool error lists. */
const LISTED_IN_ERROR = 20;

/** The -32602 answer to a tools/call whose tool the upstream does not list (hardening 19.5). */
export function unknownToolBody(name: string, link: UpstreamLink, prefixed: boolean): RpcErrorBody {
  const names = [...link.tools.keys()].map((tool) => (prefixed ? `${link.alias}${TOOL_NAME_SEPARATOR}${tool}` : tool)).sort();
  const shown = names.length === 0 ? '(none)' : `${names.slice(0, LISTED_IN_ERROR).join(', ')}${names.length > LISTED_IN_ERROR ? `, … (${names.length} in all)` : ''}`;
  return {
    code: RPC_INVALID_PARAMS,
    message:
      `Unknown tool ${JSON.stringify(name.slice(0, 200))}: MCP server "${link.alias}" does not list it, so the call was not forwarded and nobody was asked. ` +
      `It lists: ${shown}. Call tools/list for the exact names.`,
    data: { type: 'invalid_params', details: { server: link.alias, tool: name.slice(0, 200), problem: 'unknown_tool' } },
  };
}

/** The tool result of a refused call: a text naming the reason and what to do, `isError: true` (R-MCP-3), nothing else (R-MCP-9). */
export function deniedResult(decision: Extract<GateDecision, { allowed: false }>): Record<string, unknown> {
  const text = decision.message.includes(decision.reason) ? decision.message : `${decision.reason}: ${decision.message}`;
  return { content: [{ type: 'text', text }], isError: true };
}
