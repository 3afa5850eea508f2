// The `tools/call` pipeline (R-MCP-3): checks the call is one the approver, the
// digest and the upstream all read alike, asks the CallGate with the tool's
// annotations, keeps the client from timing out while a human decides
// (R-MCP-4), offers the elicitation channel (R-MCP-6), and only then forwards
// the call; its outcome goes back to the gate for audit.
import { toAssentError } from '../../core/errors.js';
import { findJsonProblem, hasLoneSurrogate, jsonPointerOf, MAX_JSON_DEPTH } from '../../core/jsonLimits.js';
import { describeDenial, type CallGate, type GateCall, type GateDecision, type ToolAnnotationHints } from './gate.js';
import type { OperationToolHost } from './operationTools.js';
import type { ClientInflight, GatewayRelay } from './relay.js';
import { TOOL_NAME_SEPARATOR, type MultiUpstreamRouter } from './routing.js';
import type { UpstreamLink } from './upstream.js';
import { isRecord, RPC_INVALID_PARAMS, type WireRequest } from './wire.js';

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
    private readonly relay: GatewayRelay,
    private readonly routing: MultiUpstreamRouter,
    private readonly options: ToolCallPipelineOptions,
  ) {}

  /** Every `tools/call` request from the client. */
  onToolCall(request: WireRequest): void {
    const host = this.relay.operationTools;
    if (host?.handles(String(request.params?.['name']))) void this.callOperationTool(request, host);
    else this.callTool(request);
  }

  /** An `assent__*` tool: answered from the daemon for this session, never forwarded upstream and never gated (it only exposes non-decision operations). */
  private async callOperationTool(request: WireRequest, host: OperationToolHost): Promise<void> {
    const params = request.params ?? {};
    const args = isRecord(params['arguments']) ? params['arguments'] : {};
    this.relay.reply(request.id, await host.call(String(params['name']), args, { sessionId: this.relay.sessionId }));
  }

  private callTool(request: WireRequest): void {
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
    if (rawArgs !== undefined && !isRecord(rawArgs)) {
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
    const wait = new GateWait();
    const inflight: ClientInflight = { method: request.method, gate: wait, link: undefined, upstreamId: undefined, finish: undefined };
    relay.clientInflight.set(request.id, inflight);
    const call: PendingCall = { request, inflight, wait, link, tool, args };
    // Known annotations (the usual case once tools/list was seen) decide in this very turn.
    if (link.tools.has(tool) || link.toolsComplete || !link.alive) this.decide(call, link.tools.get(tool)?.annotations as ToolAnnotationHints | undefined);
    else void this.annotationsFor(link, tool).then((annotations) => this.decide(call, annotations));
  }

  private decide(call: PendingCall, annotations: ToolAnnotationHints | undefined): void {
    const { request, inflight, wait, link, tool, args } = call;
    const relay = this.relay;
    if (wait.cancelled) {
      relay.clientInflight.delete(request.id);
      return;
    }
    const meta = request.params?.['_meta'];
    const progressToken = isRecord(meta) ? meta['progressToken'] : undefined;
    const keepAlive = progressToken === undefined ? undefined : this.startKeepAlive(progressToken, link.alias, tool);
    let done = false;
    const conclude = (decision: GateDecision | typeof ABORTED): void => {
      if (done) return;
      done = true;
      if (keepAlive !== undefined) this.options.clearInterval(keepAlive);
      inflight.gate = undefined;
      this.afterDecision(call, decision);
    };
    const failClosed = (error: unknown): void => {
      // A gate that fails cannot have allowed anything: fail closed (R-MCP-5).
      relay.log.error('gate failed; refusing the call', { server: link.alias, tool, error });
      conclude({
        allowed: false,
        reason: 'no_consent_channel',
        message: describeDenial('no_consent_channel', { server: link.alias, tool, hint: `the approval service failed: ${toAssentError(error).type}` }),
      });
    };
    // A gate that ignores its signal still cannot hold a cancelled call.
    wait.onCancel = () => conclude(ABORTED);
    const gateCall: GateCall = {
      sessionId: relay.sessionId,
      server: link.alias,
      tool,
      args,
      caller: relay.caller,
      get signal(): AbortSignal {
        return wait.signal;
      },
    };
    if (annotations !== undefined) gateCall.annotations = annotations;
    if (relay.clientCanElicit) gateCall.elicit = (elicitParams, signal) => relay.elicit(elicitParams, signal);
    try {
      this.options.gate.authorize(gateCall).then(conclude, failClosed);
    } catch (error) {
      failClosed(error);
    }
  }

  private afterDecision(call: PendingCall, decision: GateDecision | typeof ABORTED): void {
    const { request, inflight, link, tool } = call;
    const relay = this.relay;
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

    const gate = this.options.gate;
    const callId = decision.callId;
    const now = this.options.now;
    const startedAt = now();
    let finished = false;
    inflight.finish = (ok, result) => {
      if (finished || callId === undefined || gate.finish === undefined) return;
      finished = true;
      try {
        gate.finish(callId, result === undefined ? { ok, durationMs: now() - startedAt } : { ok, durationMs: now() - startedAt, result });
      } catch (error) {
        relay.log.warn('gate.finish threw', { error });
      }
    };
    // Written from the parsed request, whose arguments are exactly what was checked and decided:
    // never the client's original bytes, which another JSON reader might read differently (hardening 1).
    const forwarded = relay.multi ? { ...request, params: { ...request.params, name: tool } } : request;
    relay.forward(
      link,
      forwarded,
      (response) => {
        inflight.finish?.(response.error === undefined && response.result?.['isError'] !== true, response.result);
        if (relay.multi) this.routing.learnTask(link, response);
      },
      inflight,
    );
    if (!relay.clientInflight.has(request.id)) inflight.finish(false);
  }

  /** The upstream's annotations for a tool; fetches tools/list first when the tool has not been seen. */
  private async annotationsFor(link: UpstreamLink, tool: string): Promise<ToolAnnotationHints | undefined> {
    let known = link.tools.get(tool);
    if (known === undefined && !link.toolsComplete && link.alive) {
      try {
        await link.loadTools();
      } catch (error) {
        this.relay.log.warn('could not list tools for annotations; treating the tool as destructive', { server: link.alias, error });
      }
      known = link.tools.get(tool);
    }
    return known?.annotations as ToolAnnotationHints | undefined;
  }

  /** Progress notifications while a call waits for a human, so the client does not abort it as idle (R-MCP-4). */
  private startKeepAlive(progressToken: unknown, server: string, tool: string): unknown {
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

/** One tools/call from the moment it reaches the gate. */
interface PendingCall {
  request: WireRequest;
  inflight: ClientInflight;
  wait: GateWait;
  link: UpstreamLink;
  tool: string;
  args: Record<string, unknown>;
}

/**
 * A call's wait at the gate, cancellable by the client or by close. Its
 * AbortSignal is made only when the gate reads it: an allow or deny settled
 * from the policy snapshot never does, so the allow path allocates none.
 */
class GateWait {
  onCancel: (() => void) | undefined;
  private controller: AbortController | undefined;
  private isCancelled = false;

  get cancelled(): boolean {
    return this.isCancelled;
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.isCancelled) this.controller.abort();
    return this.controller.signal;
  }

  cancel(): void {
    if (this.isCancelled) return;
    this.isCancelled = true;
    this.controller?.abort();
    this.onCancel?.();
  }
}

/** The tool result of a refused call: a text naming the reason and what to do, `isError: true` (R-MCP-3), nothing else (R-MCP-9). */
export function deniedResult(decision: Extract<GateDecision, { allowed: false }>): Record<string, unknown> {
  const text = decision.message.includes(decision.reason) ? decision.message : `${decision.reason}: ${decision.message}`;
  return { content: [{ type: 'text', text }], isError: true };
}
