// The `tools/call` pipeline (R-MCP-3): checks the call is one the approver, the
// digest and the upstream all read alike, asks the CallGate with the tool's
// annotations, keeps the client from timing out while a human decides
// (R-MCP-4), offers the elicitation channel (R-MCP-6), and only then forwards
// the call; its outcome goes back to the gate for audit.
import { AssentError, toAssentError } from '../../core/errors.js';
import { findJsonProblem, hasLoneSurrogate, jsonPointerOf, MAX_JSON_DEPTH } from '../../core/jsonLimits.js';
import { describeDenial, type CallGate, type GateDecision, type ToolAnnotationHints } from './gate.js';
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
    else void this.callTool(request);
  }

  /** An `assent__*` tool: answered from the daemon for this session, never forwarded upstream and never gated (it only exposes non-decision operations). */
  private async callOperationTool(request: WireRequest, host: OperationToolHost): Promise<void> {
    const params = request.params ?? {};
    const args = isRecord(params['arguments']) ? params['arguments'] : {};
    this.relay.reply(request.id, await host.call(String(params['name']), args, { sessionId: this.relay.sessionId }));
  }

  private async callTool(request: WireRequest): Promise<void> {
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
    const controller = new AbortController();
    const inflight: ClientInflight = { method: request.method, gate: controller };
    relay.clientInflight.set(request.id, inflight);

    const annotations = await this.annotationsFor(link, tool);
    const meta = params['_meta'];
    const progressToken = isRecord(meta) ? meta['progressToken'] : undefined;
    const keepAlive = progressToken === undefined || controller.signal.aborted ? undefined : this.startKeepAlive(progressToken, link.alias, tool);

    const gate = this.options.gate;
    let decision: GateDecision | typeof ABORTED;
    try {
      decision = controller.signal.aborted
        ? ABORTED
        : await raceAbort(
            gate.authorize({
              sessionId: relay.sessionId,
              server: link.alias,
              tool,
              args,
              ...(annotations === undefined ? {} : { annotations }),
              caller: relay.caller,
              signal: controller.signal,
              ...(relay.clientCanElicit ? { elicit: (elicitParams, signal) => relay.elicit(elicitParams, signal) } : {}),
            }),
            controller.signal,
          );
    } catch (error) {
      // A gate that fails cannot have allowed anything: fail closed (R-MCP-5).
      relay.log.error('gate failed; refusing the call', { server: link.alias, tool, error });
      decision = {
        allowed: false,
        reason: 'no_consent_channel',
        message: describeDenial('no_consent_channel', {
          server: link.alias,
          tool,
          hint: `the approval service failed: ${toAssentError(error).type}`,
        }),
      };
    } finally {
      if (keepAlive !== undefined) this.options.clearInterval(keepAlive);
    }
    delete inflight.gate;

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
    const forwarded = relay.multi ? { ...request, params: { ...params, name: tool } } : request;
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

/** Settles with the promise, or with ABORTED as soon as the signal aborts (a gate that ignores its signal cannot hold a cancelled call). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new AssentError('internal', String(error)));
      },
    );
  });
}

/** The tool result of a refused call: a text naming the reason and what to do, `isError: true` (R-MCP-3), nothing else (R-MCP-9). */
export function deniedResult(decision: Extract<GateDecision, { allowed: false }>): Record<string, unknown> {
  const text = decision.message.includes(decision.reason) ? decision.message : `${decision.reason}: ${decision.message}`;
  return { content: [{ type: 'text', text }], isError: true };
}
