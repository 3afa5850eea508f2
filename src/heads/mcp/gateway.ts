// The stdio MCP gateway (SPEC §10): relays JSON-RPC messages between one MCP
// client and the configured upstream servers, mapping request ids per
// direction, and stops every `tools/call` at the gate before an upstream sees it.
//
// What is intercepted, and why:
//   initialize         several upstreams: fanned out, capabilities merged.
//   tools/list         annotations learnt for policy; several upstreams: names become `<alias>__<tool>`.
//   tools/call         decided by the CallGate first (R-MCP-3), keep-alive progress while it waits (R-MCP-4).
//   resources/prompts/completion/logging/tasks (several upstreams only): routed to the owning upstream.
//   a method that only looks unlike tools/call (`Tools/Call`, ` tools/call`…): refused, never relayed.
// Everything else, including unknown and future methods, is relayed as it is.
import { randomUUID } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { AssentError, toAssentError } from '../../core/errors.js';
import { findJsonProblem, hasLoneSurrogate, jsonPointerOf, MAX_JSON_DEPTH, toWellFormed } from '../../core/jsonLimits.js';
import type { Logger } from '../../service/logger.js';
import { VERSION } from '../../version.js';
import { describeDenial, type CallGate, type GateDecision, type ToolAnnotationHints } from './gate.js';
import type { OperationToolHost } from './operationTools.js';
import {
  createUpstreamTransport,
  UpstreamLink,
  UPSTREAM_UNAVAILABLE_CODE,
  type UpstreamSpec,
  type UpstreamTransportFactory,
} from './upstream.js';
import {
  errorMessage,
  gatedLookalikeOf,
  isRequest,
  resultMessage,
  RPC_INVALID_PARAMS,
  RPC_METHOD_NOT_FOUND,
  type RpcErrorBody,
  type RpcId,
  type WireMessage,
  type WireRequest,
} from './wire.js';

/** Separator between alias and tool name when several upstreams share one tool namespace (R-MCP-2). */
export const TOOL_NAME_SEPARATOR = '__';

/** Upper bound for the keep-alive period: clients treat a silent call as idle after longer (R-MCP-4). */
export const MAX_KEEP_ALIVE_MS = 15_000;

export interface GatewayOptions {
  /** Towards the MCP client (stdio in production, in-memory in tests). */
  clientTransport: Transport;
  upstreams: UpstreamSpec[];
  gate: CallGate;
  logger: Logger;
  /** Period of progress keep-alives while a call waits at the gate; default 10 s, at most 15 s. */
  keepAliveMs?: number;
  /** Builds each upstream's transport; the real SDK transports by default. */
  createUpstreamTransport?: UpstreamTransportFactory;
  /** Identifies this client connection to the gate; random by default. */
  sessionId?: string;
  /** Monotonic milliseconds, for call durations. */
  now?: () => number;
  setInterval?: (fn: () => void, ms: number) => unknown;
  clearInterval?: (handle: unknown) => void;
  /** assent's own operations as `assent__*` tools (opt-in: `assent mcp --assent-tools`); absent keeps tools/list exactly the upstream's. */
  operationTools?: OperationToolHost;
}

export interface Gateway {
  readonly sessionId: string;
  /** Closes the client side and every upstream (stdio children are stopped). Idempotent. */
  close(): Promise<void>;
  /** Settles once the gateway has closed, whoever closed it. */
  readonly closed: Promise<void>;
}

/**
 * Starts every upstream, then listens to the client. Rejects (and stops what
 * it started) when an upstream cannot be started, naming it, because a
 * gateway silently missing a server is harder to diagnose than one that
 * refuses to start.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const keepAliveMs = options.keepAliveMs ?? 10_000;
  if (!(keepAliveMs > 0 && keepAliveMs <= MAX_KEEP_ALIVE_MS)) {
    throw new AssentError(
      'invalid_params',
      `keepAliveMs must be between 1 and ${MAX_KEEP_ALIVE_MS} (got ${String(keepAliveMs)}); clients abort calls that stay silent longer.`,
    );
  }
  if (options.upstreams.length === 0) {
    throw new AssentError(
      'config_invalid',
      'No MCP servers to front: config.json "servers" is empty or --server named none. Add a server under "servers" in config.json.',
    );
  }
  const seen = new Set<string>();
  for (const spec of options.upstreams) {
    if (seen.has(spec.alias)) {
      throw new AssentError('config_invalid', `Server alias "${spec.alias}" is listed twice; each alias must be unique.`);
    }
    seen.add(spec.alias);
  }
  const core = new GatewayCore(options, keepAliveMs);
  await core.start();
  return core;
}

/** A client request the gateway has not answered yet. */
interface ClientInflight {
  method: string;
  /** Set while a tools/call waits at the gate. */
  gate?: AbortController;
  link?: UpstreamLink;
  upstreamId?: RpcId;
  /** Reports an allowed call's outcome (and its result, for the gate that records it) to the gate exactly once. */
  finish?: (ok: boolean, result?: Record<string, unknown>) => void;
}

/** A server-to-client request relayed under a gateway-chosen id. */
interface ServerRequestRoute {
  link: UpstreamLink;
  upstreamId: RpcId;
  key: string;
  progressToken?: unknown;
}

type ListKey = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

class GatewayCore implements Gateway {
  readonly sessionId: string;
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private closing = false;
  private readonly links: UpstreamLink[];
  private readonly multi: boolean;
  private readonly client: Transport;
  private readonly gate: CallGate;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;
  private readonly clientInflight = new Map<RpcId, ClientInflight>();
  private readonly serverRequests = new Map<RpcId, ServerRequestRoute>();
  private readonly serverRequestIds = new Map<string, RpcId>();
  private nextClientFacingId = 1;
  /** Requests the gateway itself made of the client (elicitation channel), by client-facing id. */
  private readonly ownClientRequests = new Map<RpcId, { resolve: (result: Record<string, unknown>) => void; reject: (error: AssentError) => void }>();
  private caller: Record<string, unknown> = {};
  private clientCanElicit = false;
  // Ownership learnt from list results, for routing with several upstreams.
  private readonly resourceOwner = new Map<string, UpstreamLink>();
  private templateOwners: Array<{ template: UriTemplate; link: UpstreamLink }> = [];
  private readonly promptOwner = new Map<string, UpstreamLink>();
  private readonly taskOwner = new Map<string, UpstreamLink>();
  private readonly aliasesLongestFirst: UpstreamLink[];

  constructor(
    private readonly options: GatewayOptions,
    private readonly keepAliveMs: number,
  ) {
    this.sessionId = options.sessionId ?? randomUUID();
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.client = options.clientTransport;
    this.gate = options.gate;
    this.log = options.logger.child({ head: 'mcp', sessionId: this.sessionId });
    this.now = options.now ?? (() => performance.now());
    this.setTimer = options.setInterval ?? ((fn, ms) => setInterval(fn, ms));
    this.clearTimer = options.clearInterval ?? ((handle) => clearInterval(handle as ReturnType<typeof setInterval>));
    const factory = options.createUpstreamTransport ?? createUpstreamTransport;
    this.links = options.upstreams.map((spec) => new UpstreamLink(spec, factory(spec)));
    for (const link of this.links) link.failClient = (clientId, error) => this.failForwarded(clientId, error);
    this.multi = this.links.length > 1;
    this.aliasesLongestFirst = [...this.links].sort((a, b) => b.alias.length - a.alias.length);
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
    this.client.onmessage = (message) => this.onClientMessage(message as unknown as WireMessage);
    this.client.onerror = (error) => this.log.warn('client transport error', { error });
    this.client.onclose = () => {
      void this.close();
    };
    await this.client.start();
    this.log.debug('gateway started', { upstreams: this.links.map((l) => l.alias) });
  }

  private async startLink(link: UpstreamLink): Promise<void> {
    const transport = link.transport;
    transport.onmessage = (message) => this.onUpstreamMessage(link, message as unknown as WireMessage);
    transport.onerror = (error) => this.log.warn('upstream transport error', { server: link.alias, error });
    transport.onclose = () => this.onUpstreamClosed(link);
    await transport.start();
    link.alive = true;
  }

  // ---------------------------------------------------------------- client → gateway

  private onClientMessage(message: WireMessage): void {
    if (this.closing) return;
    if (typeof message.method === 'string' && this.refusedLookalike(message)) return;
    if (isRequest(message)) this.onClientRequest(message);
    else if (typeof message.method === 'string') this.onClientNotification(message);
    else this.onClientResponse(message);
  }

  /**
   * A method that folds to a gated one but is not it exactly would pass the
   * switch below ungated, and a lenient upstream might still run it as a tool
   * call: a request is refused (method not found), a notification dropped.
   */
  private refusedLookalike(message: WireMessage): boolean {
    const method = message.method as string;
    const gated = gatedLookalikeOf(method);
    if (gated === undefined) return false;
    const shown = JSON.stringify(method.slice(0, 80));
    if (isRequest(message)) {
      this.fail(message.id, {
        code: RPC_METHOD_NOT_FOUND,
        message:
          `assent refused the method ${shown}: it is not exactly "${gated}" but reads as it once case, spaces and punctuation are ignored, ` +
          `so a server might run it without the gate. It was not forwarded; send exactly "${gated}".`,
        data: { type: 'method_not_found', details: { method: method.slice(0, 80), lookalikeOf: gated } },
      });
    } else {
      this.log.warn(`dropped a notification whose method only looks unlike ${gated}; it never reaches an upstream`, { method: method.slice(0, 80) });
    }
    return true;
  }

  private onClientRequest(request: WireRequest): void {
    switch (request.method) {
      case 'initialize':
        this.rememberCaller(request);
        if (this.multi) void this.initializeAll(request);
        else this.forward(this.first(), request, (response) => this.learnInitialize(this.first(), response));
        return;
      case 'tools/call':
        if (this.options.operationTools?.handles(String(request.params?.['name']))) void this.callOperationTool(request, this.options.operationTools);
        else void this.callTool(request);
        return;
      case 'tools/list':
        if (this.multi) void this.aggregateList(request, 'tools/list', 'tools');
        else
          this.forward(this.first(), request, (response) => {
            this.learnToolsPage(this.first(), request, response);
            this.appendOperationTools(request, response.result);
          });
        return;
      default:
        if (this.multi) this.routeMulti(request);
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
        inflight.gate.abort();
        return;
      }
      if (inflight.link && inflight.upstreamId !== undefined) {
        inflight.finish?.(false);
        inflight.link.send({ ...notification, params: { ...params, requestId: inflight.upstreamId } });
      }
      return;
    }
    if (notification.method === 'notifications/progress') {
      // Progress from the client belongs to a server-to-client request; its token was chosen by that upstream.
      for (const route of this.serverRequests.values()) {
        if (route.progressToken !== undefined && route.progressToken === params['progressToken']) {
          route.link.send(notification);
          return;
        }
      }
    }
    for (const link of this.links) link.send(notification);
    if (notification.method === 'notifications/initialized') this.preloadTools();
  }

  private onClientResponse(response: WireMessage): void {
    if (response.id === undefined) return;
    const own = this.ownClientRequests.get(response.id);
    if (own !== undefined) {
      this.ownClientRequests.delete(response.id);
      if (response.error) own.reject(new AssentError('unavailable', `The MCP client refused the request: ${response.error.message}`));
      else own.resolve(response.result ?? {});
      return;
    }
    const route = this.serverRequests.get(response.id);
    if (route === undefined) {
      this.log.debug('response from client for an unknown request', { id: response.id });
      return;
    }
    this.serverRequests.delete(response.id);
    this.serverRequestIds.delete(route.key);
    route.link.send({ ...response, id: route.upstreamId });
  }

  // ---------------------------------------------------------------- upstream → gateway

  private onUpstreamMessage(link: UpstreamLink, message: WireMessage): void {
    if (this.closing) return;
    if (isRequest(message)) {
      this.relayServerRequest(link, message);
    } else if (typeof message.method === 'string') {
      this.relayServerNotification(link, message);
    } else {
      this.onUpstreamResponse(link, message);
    }
  }

  private onUpstreamResponse(link: UpstreamLink, response: WireMessage): void {
    if (response.id === undefined) return;
    const pending = link.pending.get(response.id);
    if (pending === undefined) {
      this.log.debug('response from upstream for an unknown request', { server: link.alias, id: response.id });
      return;
    }
    link.pending.delete(response.id);
    if (pending.kind === 'internal') {
      if (response.error) {
        pending.reject(
          new AssentError('unavailable', `MCP server "${link.alias}" answered ${pending.method} with an error: ${response.error.message}`, {
            details: { server: link.alias, code: response.error.code },
          }),
        );
      } else {
        pending.resolve(response.result ?? {});
      }
      return;
    }
    pending.onResponse?.(response);
    this.clientInflight.delete(pending.clientId);
    this.sendToClient({ ...response, id: pending.clientId });
  }

  private relayServerRequest(link: UpstreamLink, request: WireRequest): void {
    const id = this.nextClientFacingId++;
    const key = routeKey(link, request.id);
    const meta = request.params?.['_meta'];
    const progressToken = isRecord(meta) ? meta['progressToken'] : undefined;
    this.serverRequests.set(id, { link, upstreamId: request.id, key, ...(progressToken === undefined ? {} : { progressToken }) });
    this.serverRequestIds.set(key, id);
    this.sendToClient({ ...request, id });
  }

  private relayServerNotification(link: UpstreamLink, notification: WireMessage): void {
    const params = notification.params ?? {};
    if (notification.method === 'notifications/cancelled') {
      const key = routeKey(link, params['requestId'] as RpcId);
      const id = this.serverRequestIds.get(key);
      if (id === undefined) return;
      this.serverRequestIds.delete(key);
      this.serverRequests.delete(id);
      this.sendToClient({ ...notification, params: { ...params, requestId: id } });
      return;
    }
    if (notification.method === 'notifications/tools/list_changed') {
      link.tools.clear();
      link.toolsComplete = false;
    }
    this.sendToClient(notification);
  }

  private onUpstreamClosed(link: UpstreamLink): void {
    if (this.closing) {
      link.alive = false;
      return;
    }
    this.log.warn('upstream closed', { server: link.alias });
    link.markDown('stopped (its process exited or its connection closed)');
    // Requests the dead upstream made of the client can never be answered: tell the client to drop them.
    for (const [id, route] of this.serverRequests) {
      if (route.link !== link) continue;
      this.serverRequests.delete(id);
      this.serverRequestIds.delete(route.key);
      this.sendToClient({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: `MCP server "${link.alias}" stopped` },
      });
    }
  }

  /** Answers a forwarded client request whose upstream cannot answer it. */
  private failForwarded(clientId: RpcId, error: RpcErrorBody): void {
    const inflight = this.clientInflight.get(clientId);
    this.clientInflight.delete(clientId);
    inflight?.finish?.(false);
    this.sendToClient(errorMessage(clientId, error));
  }

  // ---------------------------------------------------------------- forwarding

  private first(): UpstreamLink {
    return this.links[0] as UpstreamLink;
  }

  /** Relays a client request to one upstream under a fresh id; the response comes back under the client's id. */
  private forward(
    link: UpstreamLink,
    request: WireRequest,
    onResponse?: (response: WireMessage) => void,
    inflight: ClientInflight = { method: request.method },
  ): void {
    inflight.link = link;
    this.clientInflight.set(request.id, inflight);
    const upstreamId = link.forward(request, {
      kind: 'client',
      clientId: request.id,
      method: request.method,
      ...(onResponse === undefined ? {} : { onResponse }),
    });
    if (upstreamId === undefined) {
      this.clientInflight.delete(request.id);
      this.sendToClient(errorMessage(request.id, link.unavailableBody(request.method)));
      return;
    }
    inflight.upstreamId = upstreamId;
  }

  private sendToClient(message: WireMessage): void {
    if (this.closing) return;
    this.client.send(message as unknown as JSONRPCMessage).catch((error: unknown) => {
      this.log.warn('could not write to the client', { error });
    });
  }

  private reply(id: RpcId, result: Record<string, unknown>): void {
    this.sendToClient(resultMessage(id, result));
  }

  private fail(id: RpcId, error: RpcErrorBody): void {
    this.sendToClient(errorMessage(id, error));
  }

  // ---------------------------------------------------------------- tools/call and the gate

  private async callTool(request: WireRequest): Promise<void> {
    const params = request.params ?? {};
    const name = params['name'];
    if (typeof name !== 'string') {
      this.fail(request.id, { code: RPC_INVALID_PARAMS, message: 'tools/call needs params.name, the tool name as a string.' });
      return;
    }
    if (hasLoneSurrogate(name)) {
      this.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message: 'tools/call params.name: the tool name has a lone UTF-16 surrogate, which no server can be named by; the call was not forwarded. Use a name from tools/list.',
        data: { type: 'invalid_params', details: { path: '/name', problem: 'lone_surrogate' } },
      });
      return;
    }
    const target = this.resolveTool(name);
    if (target === undefined) {
      this.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message:
          `Unknown tool "${name}": through assent tool names are <alias>${TOOL_NAME_SEPARATOR}<tool> with alias one of ` +
          `${this.links.map((l) => l.alias).join(', ')}. Call tools/list for the exact names.`,
      });
      return;
    }
    const { link, tool } = target;
    const rawArgs = params['arguments'];
    if (rawArgs !== undefined && !isRecord(rawArgs)) {
      // What the gate decides must be exactly what the upstream receives.
      this.fail(request.id, { code: RPC_INVALID_PARAMS, message: 'tools/call params.arguments must be an object when present; the call was not forwarded.' });
      return;
    }
    const args = rawArgs ?? {};
    // The approver's preview, the digest, the policy and the upstream must all read the same value (hardening 1, 2).
    const problem = findJsonProblem(args);
    if (problem !== undefined) {
      const pointer = jsonPointerOf(problem.path);
      this.log.info('refused a tools/call whose arguments are not portable JSON', { server: link.alias, tool, problem: problem.kind });
      this.fail(request.id, {
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
    this.clientInflight.set(request.id, inflight);

    const annotations = await this.annotationsFor(link, tool);
    const meta = params['_meta'];
    const progressToken = isRecord(meta) ? meta['progressToken'] : undefined;
    const keepAlive = progressToken === undefined || controller.signal.aborted ? undefined : this.startKeepAlive(progressToken, link.alias, tool);

    let decision: GateDecision | typeof ABORTED;
    try {
      decision = controller.signal.aborted
        ? ABORTED
        : await raceAbort(
            this.gate.authorize({
              sessionId: this.sessionId,
              server: link.alias,
              tool,
              args,
              ...(annotations === undefined ? {} : { annotations }),
              caller: this.caller,
              signal: controller.signal,
              ...(this.clientCanElicit ? { elicit: (elicitParams, signal) => this.elicit(elicitParams, signal) } : {}),
            }),
            controller.signal,
          );
    } catch (error) {
      // A gate that fails cannot have allowed anything: fail closed (R-MCP-5).
      this.log.error('gate failed; refusing the call', { server: link.alias, tool, error });
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
      if (keepAlive !== undefined) this.clearTimer(keepAlive);
    }
    delete inflight.gate;

    if (decision === ABORTED || this.closing) {
      this.clientInflight.delete(request.id);
      return;
    }
    if (!decision.allowed) {
      this.clientInflight.delete(request.id);
      this.reply(request.id, deniedResult(decision));
      return;
    }
    if (decision.replay !== undefined) {
      // R-MCP-8 / R-J-4: the identical call already ran under its approval; the upstream never sees it again.
      this.clientInflight.delete(request.id);
      this.reply(request.id, decision.replay);
      return;
    }

    const callId = decision.callId;
    const startedAt = this.now();
    let finished = false;
    inflight.finish = (ok, result) => {
      if (finished || callId === undefined || this.gate.finish === undefined) return;
      finished = true;
      try {
        this.gate.finish(callId, result === undefined ? { ok, durationMs: this.now() - startedAt } : { ok, durationMs: this.now() - startedAt, result });
      } catch (error) {
        this.log.warn('gate.finish threw', { error });
      }
    };
    const forwarded = this.multi ? { ...request, params: { ...params, name: tool } } : request;
    this.forward(
      link,
      forwarded,
      (response) => {
        inflight.finish?.(response.error === undefined && response.result?.['isError'] !== true, response.result);
        if (this.multi) this.learnTask(link, response);
      },
      inflight,
    );
    if (!this.clientInflight.has(request.id)) inflight.finish(false);
  }

  private resolveTool(name: string): { link: UpstreamLink; tool: string } | undefined {
    if (!this.multi) return { link: this.first(), tool: name };
    for (const link of this.aliasesLongestFirst) {
      const prefix = link.alias + TOOL_NAME_SEPARATOR;
      if (name.startsWith(prefix) && name.length > prefix.length) return { link, tool: name.slice(prefix.length) };
    }
    return undefined;
  }

  /** The upstream's annotations for a tool; fetches tools/list first when the tool has not been seen. */
  private async annotationsFor(link: UpstreamLink, tool: string): Promise<ToolAnnotationHints | undefined> {
    let known = link.tools.get(tool);
    if (known === undefined && !link.toolsComplete && link.alive) {
      try {
        await this.loadTools(link);
      } catch (error) {
        this.log.warn('could not list tools for annotations; treating the tool as destructive', { server: link.alias, error });
      }
      known = link.tools.get(tool);
    }
    return known?.annotations as ToolAnnotationHints | undefined;
  }

  private loadTools(link: UpstreamLink): Promise<void> {
    link.toolsLoading ??= this.fetchAll(link, 'tools/list', 'tools')
      .then((tools) => {
        link.tools.clear();
        for (const tool of tools) learnTool(link, tool);
        link.toolsComplete = true;
        this.toolsKnown(link);
      })
      .finally(() => {
        link.toolsLoading = undefined;
      });
    return link.toolsLoading;
  }

  private learnToolsPage(link: UpstreamLink, request: WireRequest, response: WireMessage): void {
    const tools = response.result?.['tools'];
    if (!Array.isArray(tools)) return;
    if (request.params?.['cursor'] === undefined) link.tools.clear();
    for (const tool of tools) learnTool(link, tool);
    if (response.result?.['nextCursor'] === undefined) {
      link.toolsComplete = true;
      this.toolsKnown(link);
    }
  }

  /**
   * Once the client is initialized, each upstream's tools are listed once: the
   * gate then knows their names (a `policy.tools` key naming none of them is
   * pointed out at start) and the first call needs no list for its annotations.
   */
  private preloadTools(): void {
    for (const link of this.links) {
      if (!link.alive || link.toolsComplete || link.capabilities['tools'] === undefined) continue;
      this.loadTools(link).catch((error: unknown) => this.log.debug('could not list tools at start', { server: link.alias, error }));
    }
  }

  /** Tells the gate an upstream's complete tool list. */
  private toolsKnown(link: UpstreamLink): void {
    try {
      this.gate.toolsListed?.(link.alias, [...link.tools.keys()]);
    } catch (error) {
      this.log.warn('gate.toolsListed threw', { error });
    }
  }

  /** Progress notifications while a call waits for a human, so the client does not abort it as idle (R-MCP-4). */
  private startKeepAlive(progressToken: unknown, server: string, tool: string): unknown {
    let beats = 0;
    return this.setTimer(() => {
      beats += 1;
      this.sendToClient({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: {
          progressToken,
          // Strictly increasing and below 1, so an upstream that later reports progress from 1 on stays monotonic.
          progress: beats / (beats + 1),
          message: `Waiting for the operator to decide on ${server}/${tool} (see \`assent pending\`).`,
        },
      });
    }, this.keepAliveMs);
  }

  // ---------------------------------------------------------------- initialize

  /** Sends `elicitation/create` to the client under a gateway-owned id; an abort cancels it on the client. */
  private elicit(params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      if (signal.aborted || this.closing) {
        reject(new AssentError('timeout', 'The elicitation was cancelled before it was sent.'));
        return;
      }
      const id = this.nextClientFacingId++;
      const onAbort = (): void => {
        if (!this.ownClientRequests.delete(id)) return;
        this.sendToClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'decided on another channel' } });
        reject(new AssentError('timeout', 'The elicitation was cancelled: the call was decided or abandoned elsewhere.'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.ownClientRequests.set(id, {
        resolve: (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      this.sendToClient({ jsonrpc: '2.0', id, method: 'elicitation/create', params });
    });
  }

  private rememberCaller(request: WireRequest): void {
    const capabilities = request.params?.['capabilities'];
    this.clientCanElicit = isRecord(capabilities) && capabilities['elicitation'] !== undefined;
    const info = request.params?.['clientInfo'];
    if (isRecord(info)) {
      // Informative only, but it travels with every audited call: kept short and encodable.
      const field = (value: unknown): string | undefined => (typeof value === 'string' ? toWellFormed(value.slice(0, 200)) : undefined);
      this.caller = { head: 'mcp', clientName: field(info['name']), clientVersion: field(info['version']) };
    }
  }

  private learnInitialize(link: UpstreamLink, response: WireMessage): void {
    const result = response.result;
    if (!result) return;
    if (isRecord(result['capabilities'])) link.capabilities = result['capabilities'];
    const version = result['protocolVersion'];
    if (typeof version === 'string') link.transport.setProtocolVersion?.(version);
  }

  private async initializeAll(request: WireRequest): Promise<void> {
    const outcomes = await Promise.allSettled(this.links.map((link) => link.request('initialize', request.params)));
    const results: Array<{ link: UpstreamLink; result: Record<string, unknown> }> = [];
    outcomes.forEach((outcome, index) => {
      const link = this.links[index] as UpstreamLink;
      if (outcome.status === 'fulfilled') {
        this.learnInitialize(link, { jsonrpc: '2.0', result: outcome.value });
        results.push({ link, result: outcome.value });
      } else {
        this.log.error('upstream failed to initialize; its features are unavailable', { server: link.alias, error: outcome.reason });
        link.markDown(`failed to initialize (${toAssentError(outcome.reason).message})`);
      }
    });
    const firstResult = results[0];
    if (firstResult === undefined) {
      this.fail(request.id, {
        code: UPSTREAM_UNAVAILABLE_CODE,
        message: 'No configured MCP server completed initialize; see the gateway stderr for each server\'s error and check config.json "servers".',
        data: { type: 'unavailable' },
      });
      return;
    }
    const protocolVersion = firstResult.result['protocolVersion'];
    const capabilities: Record<string, unknown> = {};
    const instructions: string[] = [];
    for (const { link, result } of results) {
      if (result['protocolVersion'] !== protocolVersion) {
        this.log.warn('upstreams negotiated different protocol versions', {
          server: link.alias,
          version: result['protocolVersion'],
          using: protocolVersion,
        });
      }
      mergeCapabilities(capabilities, link.capabilities);
      if (typeof result['instructions'] === 'string') instructions.push(`## ${link.alias}\n${result['instructions']}`);
    }
    this.reply(request.id, {
      protocolVersion,
      capabilities,
      serverInfo: { name: 'assent', version: VERSION, title: `assent (${results.map((r) => r.link.alias).join(', ')})` },
      ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
    });
  }

  // ---------------------------------------------------------------- several upstreams: routing

  private routeMulti(request: WireRequest): void {
    const params = request.params ?? {};
    switch (request.method) {
      case 'ping':
        this.reply(request.id, {});
        return;
      case 'resources/list':
        void this.aggregateList(request, request.method, 'resources');
        return;
      case 'resources/templates/list':
        void this.aggregateList(request, request.method, 'resourceTemplates');
        return;
      case 'prompts/list':
        void this.aggregateList(request, request.method, 'prompts');
        return;
      case 'logging/setLevel':
        void this.broadcastRequest(request, 'logging');
        return;
      case 'resources/read':
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        void this.routeTo(request, () => this.ownerOfUri(String(params['uri'])), `resource "${String(params['uri'])}"`);
        return;
      case 'prompts/get':
        void this.routeTo(request, () => this.ownerOfPrompt(String(params['name'])), `prompt "${String(params['name'])}"`);
        return;
      case 'completion/complete': {
        const ref = isRecord(params['ref']) ? params['ref'] : {};
        if (ref['type'] === 'ref/prompt') {
          void this.routeTo(request, () => this.ownerOfPrompt(String(ref['name'])), `prompt "${String(ref['name'])}"`);
        } else {
          void this.routeTo(request, () => this.ownerOfUri(String(ref['uri'])), `resource template "${String(ref['uri'])}"`);
        }
        return;
      }
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/cancel': {
        const owner = this.taskOwner.get(String(params['taskId']));
        if (owner) this.forward(owner, request, (response) => this.learnTask(owner, response));
        else this.fail(request.id, { code: RPC_INVALID_PARAMS, message: `Unknown task "${String(params['taskId'])}": no configured server created it through this session.` });
        return;
      }
      default: {
        // Not routable by content (e.g. tasks/list, future methods): the first live upstream answers.
        const link = this.links.find((l) => l.alive) ?? this.first();
        this.forward(link, request, (response) => this.learnTask(link, response));
      }
    }
  }

  private async routeTo(request: WireRequest, findOwner: () => Promise<UpstreamLink | undefined>, what: string): Promise<void> {
    const owner = await findOwner();
    if (owner === undefined) {
      this.fail(request.id, {
        code: RPC_INVALID_PARAMS,
        message: `No configured MCP server offers ${what}; list it first (resources/list, resources/templates/list, prompts/list) and use a name from the result.`,
      });
      return;
    }
    this.forward(owner, request);
  }

  private async ownerOfUri(uri: string): Promise<UpstreamLink | undefined> {
    const find = (): UpstreamLink | undefined =>
      this.resourceOwner.get(uri) ??
      this.templateOwners.find(({ template }) => template.toString() === uri || template.match(uri) !== null)?.link;
    let owner = find();
    if (owner === undefined) {
      await Promise.allSettled([this.collect('resources/list', 'resources'), this.collect('resources/templates/list', 'resourceTemplates')]);
      owner = find();
    }
    if (owner === undefined) {
      const candidates = this.links.filter((l) => l.alive && l.capabilities['resources'] !== undefined);
      if (candidates.length === 1) owner = candidates[0];
    }
    return owner;
  }

  private async ownerOfPrompt(name: string): Promise<UpstreamLink | undefined> {
    if (!this.promptOwner.has(name)) await this.collect('prompts/list', 'prompts').catch(() => undefined);
    return this.promptOwner.get(name);
  }

  private learnTask(link: UpstreamLink, response: WireMessage): void {
    const task = response.result?.['task'];
    if (isRecord(task) && typeof task['taskId'] === 'string') this.taskOwner.set(task['taskId'], link);
  }

  /** Answers a list request with every upstream's items (all pages; no cursor is returned). */
  private async aggregateList(request: WireRequest, method: string, key: ListKey): Promise<void> {
    const items = await this.collect(method, key);
    const result: Record<string, unknown> = { [key]: items };
    if (key === 'tools') this.appendOperationTools(request, result);
    this.reply(request.id, result);
  }

  /** Adds the `assent__*` operation tools to the first page of tools/list (opt-in). */
  private appendOperationTools(request: WireRequest, result: Record<string, unknown> | undefined): void {
    const host = this.options.operationTools;
    if (host === undefined || result === undefined || request.params?.['cursor'] !== undefined || !Array.isArray(result['tools'])) return;
    result['tools'] = [...(result['tools'] as unknown[]), ...host.tools()];
  }

  /** An `assent__*` tool: answered from the daemon for this session, never forwarded upstream and never gated (it only exposes non-decision operations). */
  private async callOperationTool(request: WireRequest, host: OperationToolHost): Promise<void> {
    const params = request.params ?? {};
    const args = isRecord(params['arguments']) ? params['arguments'] : {};
    this.reply(request.id, await host.call(String(params['name']), args, { sessionId: this.sessionId }));
  }

  /** Every page of one list method from each upstream that has the capability, recording who owns what. */
  private async collect(method: string, key: ListKey): Promise<unknown[]> {
    const capability = key === 'resourceTemplates' ? 'resources' : key;
    const links = this.links.filter((l) => l.alive && l.capabilities[capability] !== undefined);
    const pages = await Promise.allSettled(links.map((link) => this.fetchAll(link, method, key)));
    const items: unknown[] = [];
    if (key === 'resourceTemplates') this.templateOwners = [];
    pages.forEach((outcome, index) => {
      const link = links[index] as UpstreamLink;
      if (outcome.status === 'rejected') {
        this.log.warn('upstream list failed; its items are left out', { server: link.alias, method, error: outcome.reason });
        return;
      }
      for (const item of outcome.value) {
        if (!isRecord(item)) continue;
        if (key === 'tools') {
          learnTool(link, item);
          items.push({ ...item, name: `${link.alias}${TOOL_NAME_SEPARATOR}${String(item['name'])}` });
          continue;
        }
        if (key === 'resources' && typeof item['uri'] === 'string') this.resourceOwner.set(item['uri'], link);
        if (key === 'resourceTemplates' && typeof item['uriTemplate'] === 'string') {
          try {
            this.templateOwners.push({ template: new UriTemplate(item['uriTemplate']), link });
          } catch {
            this.log.warn('unparsable resource template', { server: link.alias, uriTemplate: item['uriTemplate'] });
          }
        }
        if (key === 'prompts' && typeof item['name'] === 'string') {
          if (this.promptOwner.has(item['name']) && this.promptOwner.get(item['name']) !== link) {
            this.log.warn('prompt name offered by several servers; the first one answers', { prompt: item['name'], server: link.alias });
            continue;
          }
          this.promptOwner.set(item['name'], link);
        }
        items.push(item);
      }
      if (key === 'tools') {
        link.toolsComplete = true;
        this.toolsKnown(link);
      }
    });
    return items;
  }

  private async fetchAll(link: UpstreamLink, method: string, key: ListKey): Promise<unknown[]> {
    const items: unknown[] = [];
    let cursor: unknown;
    for (let page = 0; page < 1000; page++) {
      const result = await link.request(method, cursor === undefined ? undefined : { cursor });
      const list = result[key];
      if (Array.isArray(list)) items.push(...(list as unknown[]));
      cursor = result['nextCursor'];
      if (typeof cursor !== 'string') break;
    }
    return items;
  }

  /** Sends a request to every upstream with the capability and answers `{}` once all did. */
  private async broadcastRequest(request: WireRequest, capability: string): Promise<void> {
    const links = this.links.filter((l) => l.alive && l.capabilities[capability] !== undefined);
    const outcomes = await Promise.allSettled(links.map((l) => l.request(request.method, request.params)));
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure !== undefined && outcomes.every((o) => o.status === 'rejected')) {
      this.fail(request.id, { code: UPSTREAM_UNAVAILABLE_CODE, message: toAssentError(failure.reason).message, data: { type: 'unavailable' } });
      return;
    }
    this.reply(request.id, {});
  }

  // ---------------------------------------------------------------- lifecycle

  async close(): Promise<void> {
    if (this.closing) return this.closed;
    this.closing = true;
    for (const inflight of this.clientInflight.values()) {
      inflight.gate?.abort();
      inflight.finish?.(false);
    }
    this.clientInflight.clear();
    for (const own of this.ownClientRequests.values()) own.reject(new AssentError('unavailable', 'The gateway closed before the client answered.'));
    this.ownClientRequests.clear();
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

function learnTool(link: UpstreamLink, tool: unknown): void {
  if (!isRecord(tool) || typeof tool['name'] !== 'string') return;
  const annotations = tool['annotations'];
  link.tools.set(tool['name'], isRecord(annotations) ? { annotations } : {});
}

/** Union of capability objects; a feature offered by any upstream is offered by the gateway. */
function mergeCapabilities(into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(from)) {
    const existing = into[key];
    if (isRecord(existing) && isRecord(value)) mergeCapabilities(existing, value);
    else if (typeof existing === 'boolean' && typeof value === 'boolean') into[key] = existing || value;
    else if (existing === undefined) into[key] = isRecord(value) ? structuredClone(value) : value;
  }
}

function routeKey(link: UpstreamLink, id: RpcId): string {
  return `${link.alias}\u0000${typeof id}\u0000${String(id)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
