// The JSON-RPC relay at the centre of the gateway (SPEC §10): one MCP client on
// one side, the upstream links on the other. Each client request goes to whoever
// owns its method (routing with several upstreams, the tools/call pipeline);
// everything else is relayed as it is. Ids pass through unless they would
// collide (then only that one is mapped). Towards the client, a message the
// gateway does not change goes on as the upstream's own line; towards an
// upstream, every message with a method is written from what the gateway read,
// so an upstream never reads a method or params the gateway did not see.
import { randomUUID } from 'node:crypto';
import { AssentError, toAssentError } from '../../core/base/errors.js';
import type { Logger } from '../../service/logger.js';
import { ToolCallPipeline } from './callPipeline.js';
import { appendOperationTools, callerOf, lookalikeRefusal, offeredToolNames, preloadTools } from './clientMessages.js';
import type { CallGate } from './gate.js';
import type { Gateway, GatewayOptions } from './gatewayOptions.js';
import { asMessageLink, type MessageLink } from './messageLink.js';
import type { OperationToolHost } from './operationTools.js';
import { type CallRelay, type ClientInflight, type UnparsedResult } from './relayPort.js';
import { MultiUpstreamRouter, watchSlowInitialize } from './routing.js';
import { scanResultResponse } from './responseScan.js';
import { ServerRequestRelay } from './serverRequests.js';
import { createUpstreamTransport, UpstreamLink } from './upstream.js';
import {
  errorMessage,
  isRequest,
  resultMessage,
  type RpcErrorBody,
  type RpcId,
  type WireMessage,
  type WireRequest,
} from './wire.js';

function newInflight(method: string, gate?: { cancel(): void }): ClientInflight {
  return { method, gate, link: undefined, upstreamId: undefined, finish: undefined };
}

export class GatewayRelay implements Gateway, CallRelay {
  readonly sessionId: string;
  readonly closed: Promise<void>;
  readonly links: UpstreamLink[];
  /** Several upstreams: tool names are prefixed and list methods aggregated (R-MCP-2). */
  readonly multi: boolean;
  readonly log: Logger;
  readonly operationTools: OperationToolHost | undefined;
  /** Client requests not answered yet, by the client's id. */
  readonly clientInflight = new Map<RpcId, ClientInflight>();
  /** Who the client said it is in initialize; informative only, it travels with every gated call. */
  caller: Record<string, unknown> = {};
  /** Whether the client declared the elicitation capability (R-MCP-6). */
  clientCanElicit = false;
  private resolveClosed!: () => void;
  private closing = false;
  private readonly client: MessageLink;
  private readonly towardsClient = new ServerRequestRelay((message, line) => this.sendToClient(message, line));
  private readonly routing: MultiUpstreamRouter;
  private readonly calls: ToolCallPipeline;

  constructor(options: GatewayOptions, keepAliveMs: number) {
    this.sessionId = options.sessionId ?? randomUUID();
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.client = asMessageLink(options.clientTransport);
    this.log = options.logger.child({ head: 'mcp', sessionId: this.sessionId });
    this.operationTools = options.operationTools;
    const factory = options.createUpstreamTransport ?? createUpstreamTransport;
    this.links = options.upstreams.map((spec) => new UpstreamLink(spec, factory(spec)));
    for (const link of this.links) {
      link.failClient = (clientId, error) => this.failForwarded(clientId, error);
      link.onToolsComplete = (complete) => this.toolsKnown(options.gate, complete);
    }
    this.multi = this.links.length > 1;
    this.routing = new MultiUpstreamRouter(this);
    this.calls = new ToolCallPipeline(this, this.routing, {
      gate: options.gate,
      keepAliveMs,
      now: options.now ?? (() => performance.now()),
      setInterval: options.setInterval ?? ((fn, ms) => setInterval(fn, ms)),
      clearInterval: options.clearInterval ?? ((handle) => clearInterval(handle as ReturnType<typeof setInterval>)),
    });
  }

  /** True once close() began; nothing more is sent or relayed. */
  get isClosing(): boolean {
    return this.closing;
  }

  async start(): Promise<void> {
    const started = await Promise.allSettled(this.links.map((link) => this.startLink(link)));
    const failed = started.findIndex((outcome) => outcome.status === 'rejected');
    if (failed !== -1) {
      const link = this.links[failed] as UpstreamLink;
      const reason = (started[failed] as PromiseRejectedResult).reason;
      await this.closeUpstreams();
      const what = link.spec.url ?? [link.spec.command, ...(link.spec.args ?? [])].join(' ');
      throw new AssentError(
        'unavailable',
        `Could not start MCP server "${link.alias}" (${what}): ${toAssentError(reason).message}. ` +
          `Check servers.${link.alias} in config.json (command on PATH, url reachable).`,
        { details: { server: link.alias }, cause: reason },
      );
    }
    this.client.onmessage = (message, line) => this.onClientMessage(message, line);
    this.client.onerror = (error) => this.log.warn('client transport error', { error });
    this.client.onclose = () => {
      void this.close();
    };
    await this.client.start();
    this.log.debug('gateway started', { upstreams: this.links.map((l) => l.alias) });
  }

  private async startLink(link: UpstreamLink): Promise<void> {
    const transport = link.transport;
    transport.onmessage = (message, line) => this.onUpstreamMessage(link, message, line);
    if (this.client.sendLine !== undefined) transport.online = (line) => this.onUpstreamLine(link, line);
    transport.onerror = (error) => this.log.warn('upstream transport error', { server: link.alias, error });
    transport.onclose = () => this.onUpstreamClosed(link);
    await transport.start();
    link.alive = true;
  }

  // ---------------------------------------------------------------- client → gateway

  /** `line` is the message's original text, passed on only for answers (which carry no method); of a request only its length is used. */
  private onClientMessage(message: WireMessage, line: string | undefined): void {
    if (this.closing) return;
    if (typeof message.method === 'string' && this.refusedLookalike(message as WireMessage & { method: string })) return;
    if (isRequest(message)) this.onClientRequest(message, line?.length);
    else if (typeof message.method === 'string') this.onClientNotification(message);
    else this.onClientResponse(message, line);
  }

  /** Turns away a method that only looks like a gated one (clientMessages.ts); true when it did. */
  private refusedLookalike(message: WireMessage & { method: string }): boolean {
    const refusal = lookalikeRefusal(message);
    if (refusal === undefined) return false;
    if (refusal.kind === 'request' && isRequest(message)) this.fail(message.id, refusal.error);
    else if (refusal.kind === 'notification') this.log.warn(refusal.warning, { method: refusal.method });
    return true;
  }

  /** `size` is the length of the request's line, when the link read one. */
  private onClientRequest(request: WireRequest, size: number | undefined): void {
    switch (request.method) {
      case 'initialize':
        this.rememberCaller(request);
        if (this.multi) void this.routing.initializeAll(request);
        else {
          const answered = watchSlowInitialize(this.first(), this.log);
          this.forward(this.first(), request, (response) => {
            answered();
            this.first().adoptInitializeResult(response.result);
          });
        }
        return;
      case 'tools/call':
        this.calls.onToolCall(request, size);
        return;
      case 'tools/list':
        if (this.multi) void this.routing.aggregateList(request, 'tools/list', 'tools');
        else
          this.forward(this.first(), request, (response) => {
            this.first().learnToolsPage(request.params?.['cursor'], response.result);
            return this.appendOperationTools(request, response.result);
          });
        return;
      default:
        if (this.multi) this.routing.route(request);
        else this.forward(this.first(), request);
    }
  }

  private onClientNotification(notification: WireMessage): void {
    const params = notification.params ?? {};
    if (notification.method === 'tools/call') {
      // A call sent as a notification would skip the gate; it never reaches an upstream.
      this.log.warn('dropped a tools/call sent as a notification (no id); calls must be requests');
      return;
    }
    if (notification.method === 'notifications/cancelled') {
      const inflight = this.clientInflight.get(params['requestId'] as RpcId);
      if (inflight === undefined) return;
      if (inflight.gate) {
        // Cancelled while waiting at the gate: stop waiting, send nothing upstream.
        inflight.gate.cancel();
        return;
      }
      if (inflight.link && inflight.upstreamId !== undefined) {
        inflight.finish?.(false);
        inflight.link.send({ ...notification, params: { ...params, requestId: inflight.upstreamId } });
      }
      return;
    }
    // Progress from the client belongs to a server-to-client request; its token was chosen by that upstream.
    if (notification.method === 'notifications/progress' && this.towardsClient.relayClientProgress(notification)) return;
    for (const link of this.links) link.send(notification);
    if (notification.method === 'notifications/initialized') preloadTools(this.links, this.log);
  }

  /** Tells the gate an upstream's complete tool list, and every name the client now sees. */
  private toolsKnown(gate: CallGate, link: UpstreamLink): void {
    try {
      gate.toolsListed?.(link.alias, [...link.tools.keys()]);
      gate.toolsOffered?.(this.offeredToolNames());
    } catch (error) {
      this.log.warn('gate.toolsListed threw', { error });
    }
  }

  /** The tool names the client is offered, from every upstream whose list is complete: what `tools/list` through the gateway shows. */
  offeredToolNames(): string[] {
    return offeredToolNames(this.links, this.multi, this.operationTools);
  }

  private onClientResponse(response: WireMessage, line: string | undefined): void {
    if (response.id === undefined) return;
    if (!this.towardsClient.onClientResponse(response.id, response, line)) this.log.debug('response from client for an unknown request', { id: response.id });
  }

  private rememberCaller(request: WireRequest): void {
    const { canElicit, caller } = callerOf(request);
    this.clientCanElicit = canElicit;
    if (caller !== undefined) this.caller = caller;
  }

  /** Adds the `assent__*` operation tools to the first page of tools/list (opt-in); true when it changed the result. */
  appendOperationTools(request: WireRequest, result: Record<string, unknown> | undefined): boolean {
    return appendOperationTools(this.operationTools, request, result);
  }

  // ---------------------------------------------------------------- upstream → gateway

  /** `line` is the message's original text (line-framed links only), written on when nothing in it changes. */
  private onUpstreamMessage(link: UpstreamLink, message: WireMessage, line: string | undefined): void {
    if (this.closing) return;
    if (isRequest(message)) {
      this.towardsClient.relayRequest(link, message, line);
    } else if (typeof message.method === 'string') {
      this.relayServerNotification(link, message, line);
    } else {
      this.onUpstreamResponse(link, message, line);
    }
  }

  /**
   * The fast path of a tools/call answer (SPEC §14): a plain result response to a
   * call that waits under the client's own id goes to the client as the
   * upstream's line, never parsed; the call's pipeline hears from the scan
   * whether it was an error. Any other line returns false and is parsed.
   */
  private onUpstreamLine(link: UpstreamLink, line: string): boolean {
    if (this.closing) return false;
    const scanned = scanResultResponse(line);
    if (scanned === undefined) return false;
    const pending = link.pending.get(scanned.id);
    if (pending === undefined || pending.kind !== 'client' || pending.onResult === undefined || pending.clientId !== scanned.id) return false;
    link.pending.delete(scanned.id);
    this.clientInflight.delete(pending.clientId);
    pending.onResult(!scanned.isError, line, scanned.resultStart, scanned.resultEnd);
    if (this.client.sendLine?.(line, this.onClientWriteFailed) !== true) this.log.warn('could not write to the client: its connection is closed');
    return true;
  }

  private onUpstreamResponse(link: UpstreamLink, response: WireMessage, line: string | undefined): void {
    if (response.id === undefined) return;
    const pending = link.pending.get(response.id);
    if (pending === undefined) {
      this.log.debug('response from upstream for an unknown request', { server: link.alias, id: response.id });
      return;
    }
    link.pending.delete(response.id);
    if (pending.kind === 'internal') {
      link.answerInternal(pending, response);
      return;
    }
    const changed = pending.onResponse?.(response) === true;
    this.clientInflight.delete(pending.clientId);
    if (response.id === pending.clientId && !changed) this.sendToClient(response, line);
    else this.sendToClient({ ...response, id: pending.clientId });
  }

  private relayServerNotification(link: UpstreamLink, notification: WireMessage, line: string | undefined): void {
    if (notification.method === 'notifications/cancelled') {
      this.towardsClient.onUpstreamCancelled(link, notification, line);
      return;
    }
    if (notification.method === 'notifications/tools/list_changed') {
      link.tools.clear();
      link.toolsComplete = false;
    }
    this.sendToClient(notification, line);
  }

  private onUpstreamClosed(link: UpstreamLink): void {
    if (this.closing) {
      link.alive = false;
      return;
    }
    this.log.warn('upstream closed', { server: link.alias });
    link.markDown('stopped (its process exited or its connection closed)');
    this.towardsClient.dropRequestsOf(link);
  }

  /** Answers a forwarded client request whose upstream cannot answer it. */
  private failForwarded(clientId: RpcId, error: RpcErrorBody): void {
    const inflight = this.clientInflight.get(clientId);
    this.clientInflight.delete(clientId);
    inflight?.finish?.(false);
    this.sendToClient(errorMessage(clientId, error));
  }

  // ---------------------------------------------------------------- forwarding

  first(): UpstreamLink {
    return this.links[0] as UpstreamLink;
  }

  /**
   * Relays a client request to one upstream (under the client's id unless it collides there); the response comes
   * back under the client's id. `onResponse` returns true when it changed the response; with `onResult`, a plain
   * result response may instead pass unparsed (see `onUpstreamLine`).
   */
  forward(
    link: UpstreamLink,
    request: WireRequest,
    onResponse?: (response: WireMessage) => boolean | void,
    inflight: ClientInflight = newInflight(request.method),
    onResult?: UnparsedResult,
  ): void {
    inflight.link = link;
    this.clientInflight.set(request.id, inflight);
    const upstreamId = link.forward(request, { kind: 'client', clientId: request.id, method: request.method, onResponse, onResult });
    if (upstreamId === undefined) {
      this.clientInflight.delete(request.id);
      this.sendToClient(errorMessage(request.id, link.unavailableBody(request.method)));
      return;
    }
    inflight.upstreamId = upstreamId;
  }

  /** `line`, when given, is this very message as an upstream wrote it, passed on unchanged. */
  sendToClient(message: WireMessage, line?: string): void {
    if (this.closing) return;
    if (!this.client.send(message, line, this.onClientWriteFailed)) this.log.warn('could not write to the client: its connection is closed');
  }

  private readonly onClientWriteFailed = (error: unknown): void => {
    this.log.warn('could not write to the client', { error });
  };

  reply(id: RpcId, result: Record<string, unknown>): void {
    this.sendToClient(resultMessage(id, result));
  }

  fail(id: RpcId, error: RpcErrorBody): void {
    this.sendToClient(errorMessage(id, error));
  }

  /** Sends `elicitation/create` to the client under a gateway-owned id; an abort cancels it on the client. */
  elicit(params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    return this.towardsClient.elicit(params, signal, this.closing);
  }

  // ---------------------------------------------------------------- lifecycle

  async close(): Promise<void> {
    if (this.closing) return this.closed;
    this.closing = true;
    for (const inflight of this.clientInflight.values()) {
      inflight.gate?.cancel();
      inflight.finish?.(false);
    }
    this.clientInflight.clear();
    this.towardsClient.close();
    await this.closeUpstreams();
    try {
      await this.client.close();
    } catch (error) {
      this.log.debug('client transport close failed', { error });
    }
    this.log.debug('gateway closed');
    this.resolveClosed();
    return this.closed;
  }

  private async closeUpstreams(): Promise<void> {
    await Promise.allSettled(
      this.links.map(async (link) => {
        link.alive = false;
        await link.transport.close();
      }),
    );
  }
}
