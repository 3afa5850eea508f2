// One upstream MCP server as the gateway sees it: a framed JSON-RPC link (own
// line framing for a stdio child, the SDK's Streamable HTTP client transport
// for a URL), its request-id space, the requests in flight on it, and what the
// gateway has learnt from its lists.
import { isPlainObject } from '../../core/base/plainObject.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AssentError } from '../../core/base/errors.js';
import { asMessageLink, type MessageLink } from './messageLink.js';
import { DeferredTransportLink } from './sdkUpstream.js';
import { StdioUpstreamLink, type SpawnChild } from './stdioUpstream.js';
import { GATEWAY_ID_PREFIX, isGatewayId, type RpcErrorBody, type RpcId, type WireMessage } from './wire.js';

/** How to reach one configured upstream (config.json `servers.<alias>`): a stdio command or a Streamable HTTP URL. */
export interface UpstreamSpec {
  alias: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  /** Extra HTTP headers for a `url` upstream (e.g. Authorization). */
  headers?: Record<string, string>;
}

/** Builds the link (or an SDK transport) for an upstream; injected so tests can link in-memory servers. */
export type UpstreamTransportFactory = (spec: UpstreamSpec) => Transport | MessageLink;

export interface UpstreamTransportFactoryOptions {
  platform?: NodeJS.Platform;
  spawn?: SpawnChild;
}

/**
 * The variables a stdio upstream inherits from the gateway, as the SDK's stdio
 * transport lets a child inherit them (its `DEFAULT_INHERITED_ENV_VARS`, after
 * sudo's list; a test keeps the two equal). Written here so a gateway with only
 * stdio upstreams never loads the SDK and its schemas at start.
 */
export const DEFAULT_INHERITED_VARIABLES: readonly string[] =
  process.platform === 'win32'
    ? ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PROCESSOR_ARCHITECTURE', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE', 'PROGRAMFILES']
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

/**
 * Variables a stdio upstream inherits besides that list (docs/mcp.md): the
 * proxy and CA settings, in both cases, so `npx -y` behind a TLS-inspecting
 * proxy works as it does in the agent's shell.
 */
export const INHERITED_NETWORK_VARIABLES: readonly string[] = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'].flatMap((name) => [
  name,
  name.toLowerCase(),
]);

/** What a stdio upstream's environment starts from: both lists' variables that are set, never a value that is a shell function (`() {…`). */
export function inheritedUpstreamEnvironment(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...DEFAULT_INHERITED_VARIABLES, ...INHERITED_NETWORK_VARIABLES]) {
    const value = source[name];
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  return env;
}

/**
 * The real links. A stdio child gets the SDK's small inherited-variable
 * allowlist and the proxy and CA variables, plus the spec's own env, never the gateway's whole environment,
 * so secrets in the agent's shell do not leak into every server. On Windows
 * the SDK's stdio transport stays, for its resolution of `.cmd` shims (`npx`).
 * The SDK's transports are loaded when their link starts, so only a gateway
 * that uses one pays for loading it.
 */
export function upstreamTransportFactory(options: UpstreamTransportFactoryOptions = {}): UpstreamTransportFactory {
  const platform = options.platform ?? process.platform;
  return (spec) => {
    if (spec.url !== undefined) {
      const url = new URL(spec.url);
      const headers = spec.headers;
      return new DeferredTransportLink(async () => {
        const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
        return new StreamableHTTPClientTransport(url, headers ? { requestInit: { headers } } : undefined);
      });
    }
    if (spec.command === undefined) {
      throw new AssentError(
        'config_invalid',
        `Server "${spec.alias}" has neither "command" nor "url"; set one of them in config.json servers.${spec.alias}.`,
        { details: { path: `servers.${spec.alias}` } },
      );
    }
    const env = { ...inheritedUpstreamEnvironment(), ...(spec.env ?? {}) };
    if (platform === 'win32') {
      const { command, args = [], cwd } = spec;
      return new DeferredTransportLink(async () => {
        const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
        return new StdioClientTransport({ command, args, env, ...(cwd === undefined ? {} : { cwd }), stderr: 'inherit' });
      });
    }
    return new StdioUpstreamLink({
      alias: spec.alias,
      command: spec.command,
      args: spec.args ?? [],
      env,
      ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
      ...(options.spawn === undefined ? {} : { spawn: options.spawn }),
    });
  };
}

export const createUpstreamTransport: UpstreamTransportFactory = upstreamTransportFactory();

/** What a response from this upstream should turn into. */
export type PendingUpstreamRequest =
  /** `onResponse` returns true when it changed the response, which then cannot be passed on as the original line. */
  | {
      kind: 'client';
      clientId: RpcId;
      method: string;
      onResponse: ((message: WireMessage) => boolean | void) | undefined;
      /**
       * When set, a plain result response under the client's id may skip the parse (SPEC §14):
       * it goes to the client as its line, and this hears whether it was an error and where its result is in the line.
       */
      onResult: ((ok: boolean, line: string, resultStart: number, resultEnd: number) => void) | undefined;
    }
  | { kind: 'internal'; method: string; resolve: (result: Record<string, unknown>) => void; reject: (error: AssentError) => void };

/** Tool facts learnt from the upstream's tools/list, used for policy (R-POL-3). */
export interface KnownTool {
  annotations?: Record<string, unknown>;
}

/** The list methods' result keys: what `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` return their items under. */
export type ListKey = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

export class UpstreamLink {
  alive = false;
  /** Why the link is down, phrased for the agent and the operator. */
  downReason: string | undefined;
  readonly pending = new Map<RpcId, PendingUpstreamRequest>();
  /** Tools by upstream name, as far as tools/list results have shown them. */
  readonly tools = new Map<string, KnownTool>();
  /** Whether `tools` holds a complete list (all pages, no list_changed since). */
  toolsComplete = false;
  /** The tools/list fetch in progress, shared by concurrent callers. */
  toolsLoading: Promise<void> | undefined;
  capabilities: Record<string, unknown> = {};
  readonly transport: MessageLink;
  private nextId = 1;

  constructor(
    readonly spec: UpstreamSpec,
    endpoint: Transport | MessageLink,
  ) {
    this.transport = asMessageLink(endpoint);
  }

  get alias(): string {
    return this.spec.alias;
  }

  /** How a client request that failed on this link is answered; set by the gateway. */
  failClient: (clientId: RpcId, error: RpcErrorBody) => void = () => undefined;

  /**
   * Sends a message; `line` is its original text when it is passed on
   * unchanged. A dead link or a transport that throws at once gives `false`;
   * a send that fails later (an HTTP POST refused, a closed pipe) goes to
   * `onLateFailure`, so no request waits for an answer that cannot come.
   */
  send(message: WireMessage, onLateFailure?: (error: unknown) => void, line?: string): boolean {
    if (!this.alive) return false;
    return this.transport.send(message, line, onLateFailure);
  }

  /**
   * Forwards a request. A client's request keeps the client's id, so the
   * answer can go back as the upstream wrote it; the gateway's own requests,
   * and a client id that would collide with one in flight here or with the
   * gateway's namespace, get a fresh id of the gateway's namespace.
   */
  forward(message: WireMessage, pending: PendingUpstreamRequest): RpcId | undefined {
    const wanted = pending.kind === 'client' ? pending.clientId : undefined;
    const id = wanted !== undefined && !isGatewayId(wanted) && !this.pending.has(wanted) ? wanted : `${GATEWAY_ID_PREFIX}${this.nextId++}`;
    this.pending.set(id, pending);
    const sent = this.send(message.id === id ? message : { ...message, id }, (error) => {
      const entry = this.pending.get(id);
      if (entry === undefined) return;
      this.pending.delete(id);
      const body = this.sendFailedBody(entry.method, error);
      if (entry.kind === 'internal') entry.reject(new AssentError('unavailable', body.message, { details: { server: this.alias }, cause: error }));
      else this.failClient(entry.clientId, body);
    });
    if (!sent) {
      this.pending.delete(id);
      return undefined;
    }
    return id;
  }

  /** The JSON-RPC error for a request the transport could not deliver. */
  sendFailedBody(method: string, error: unknown): RpcErrorBody {
    const why = error instanceof Error ? error.message : String(error);
    return {
      code: UPSTREAM_UNAVAILABLE_CODE,
      message:
        `Could not deliver ${method} to MCP server "${this.alias}" (${why}). ` +
        `Check that it is running and its command/url in config.json servers.${this.alias}.`,
      data: { type: 'unavailable', details: { server: this.alias, method } },
    };
  }

  /** A request the gateway itself makes (aggregation, annotation lookup). */
  /** Settles the gateway's own request (`request`) with the upstream's response: its result, or its error as `unavailable`. */
  answerInternal(pending: Extract<PendingUpstreamRequest, { kind: 'internal' }>, response: WireMessage): void {
    if (response.error) {
      pending.reject(
        new AssentError('unavailable', `MCP server "${this.alias}" answered ${pending.method} with an error: ${response.error.message}`, {
          details: { server: this.alias, code: response.error.code },
        }),
      );
    } else {
      pending.resolve(response.result ?? {});
    }
  }

  request(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const message: WireMessage = { jsonrpc: '2.0', id: 0, method, ...(params === undefined ? {} : { params }) };
      const id = this.forward(message, { kind: 'internal', method, resolve, reject });
      if (id === undefined) reject(this.unavailableError(method));
    });
  }

  /** Every page of one list method, as far as 1000 pages go (a cursor loop cannot hold the gateway for ever). */
  async requestAllPages(method: string, key: ListKey): Promise<unknown[]> {
    const items: unknown[] = [];
    let cursor: unknown;
    for (let page = 0; page < 1000; page++) {
      const result = await this.request(method, cursor === undefined ? undefined : { cursor });
      const list = result[key];
      if (Array.isArray(list)) items.push(...(list as unknown[]));
      cursor = result['nextCursor'];
      if (typeof cursor !== 'string') break;
    }
    return items;
  }

  /** Remembers one tool of a tools/list result, with the annotations policy reads (R-POL-3). */
  learnTool(tool: unknown): void {
    if (!isPlainObject(tool) || typeof tool['name'] !== 'string') return;
    const annotations = tool['annotations'];
    this.tools.set(tool['name'], isPlainObject(annotations) ? { annotations } : {});
  }

  /** Learns from one tools/list page the client asked for; the first page starts the list afresh. */
  learnToolsPage(cursor: unknown, result: Record<string, unknown> | undefined): void {
    const tools = result?.['tools'];
    if (!Array.isArray(tools)) return;
    if (cursor === undefined) {
      this.tools.clear();
      // Until the last page, the list is not complete: a tool on a later page is not unknown (hardening 19.5).
      this.toolsComplete = false;
    }
    for (const tool of tools) this.learnTool(tool);
    if (result?.['nextCursor'] === undefined) this.markToolsComplete();
  }

  /** Fetches the whole tool list (all pages); concurrent callers share one fetch. */
  loadTools(): Promise<void> {
    this.toolsLoading ??= this.requestAllPages('tools/list', 'tools')
      .then((tools) => {
        this.tools.clear();
        for (const tool of tools) this.learnTool(tool);
        this.markToolsComplete();
      })
      .finally(() => {
        this.toolsLoading = undefined;
      });
    return this.toolsLoading;
  }

  /** Called whenever `tools` becomes a complete list; set by the relay to tell the gate. */
  onToolsComplete: (link: UpstreamLink) => void = () => undefined;

  /** `tools` now holds the whole list (all pages, no list_changed since). */
  markToolsComplete(): void {
    this.toolsComplete = true;
    this.onToolsComplete(this);
  }

  /** Adopts what initialize answered: the capabilities routing relies on, and the protocol version for the transport. */
  adoptInitializeResult(result: Record<string, unknown> | undefined): void {
    if (!result) return;
    if (isPlainObject(result['capabilities'])) this.capabilities = result['capabilities'];
    const version = result['protocolVersion'];
    if (typeof version === 'string') this.transport.setProtocolVersion?.(version);
  }

  /** Marks the link down and fails everything in flight on it. */
  markDown(reason: string): void {
    this.alive = false;
    this.downReason ??= reason;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) {
      if (entry.kind === 'internal') entry.reject(this.unavailableError(entry.method));
      else this.failClient(entry.clientId, this.unavailableBody(entry.method));
    }
  }

  unavailableError(method: string): AssentError {
    const body = this.unavailableBody(method);
    return new AssentError('unavailable', body.message, { details: { server: this.alias, method } });
  }

  /** The JSON-RPC error an agent gets when this upstream cannot answer. */
  unavailableBody(method: string): RpcErrorBody {
    const why = this.downReason ?? 'is not connected';
    return {
      code: UPSTREAM_UNAVAILABLE_CODE,
      message:
        `MCP server "${this.alias}" ${why}, so ${method} cannot be answered. ` +
        `Check its command/url in config.json servers.${this.alias} and its stderr output, then restart the MCP client session.`,
      data: { type: 'unavailable', details: { server: this.alias, method } },
    };
  }
}

/** JSON-RPC server-error code the gateway uses for its own failures (R-D-3 style: data.type says which). */
export const UPSTREAM_UNAVAILABLE_CODE = -32000;
