// Requests that travel towards the MCP client, in one client-facing id space:
// an upstream's own requests (sampling, elicitation, roots; R-MCP-2), relayed
// under the upstream's id (a gateway-chosen one only when that id is taken) and
// answered back under the upstream's, and the gateway's own
// `elicitation/create` for the elicitation channel (R-MCP-6).
import { isPlainObject } from '../../core/base/plainObject.js';
import { AssentError } from '../../core/base/errors.js';
import type { UpstreamLink } from './upstream.js';
import { GATEWAY_ID_PREFIX, isGatewayId, type RpcId, type WireMessage, type WireRequest } from './wire.js';

/** A server-to-client request relayed to the client, under its upstream's id or a gateway-chosen one. */
interface ServerRequestRoute {
  link: UpstreamLink;
  upstreamId: RpcId;
  key: string;
  progressToken?: unknown;
}

interface OwnRequest {
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: AssentError) => void;
}

export class ServerRequestRelay {
  private readonly routes = new Map<RpcId, ServerRequestRoute>();
  private readonly idsByRoute = new Map<string, RpcId>();
  private nextClientFacingId = 1;
  /** Requests the gateway itself made of the client (elicitation channel), by client-facing id. */
  private readonly own = new Map<RpcId, OwnRequest>();

  /** @param sendToClient writes one message to the client (nothing once the gateway closes); `line` is its original text when unchanged. */
  constructor(private readonly sendToClient: (message: WireMessage, line?: string) => void) {}

  /**
   * Relays an upstream's request to the client under the upstream's own id, so
   * it goes on as the upstream's line; a fresh client-facing id only when that
   * id is already in use here (another upstream's request) or is in the gateway's namespace.
   */
  relayRequest(link: UpstreamLink, request: WireRequest, line: string | undefined): void {
    const keep = !isGatewayId(request.id) && !this.routes.has(request.id);
    const id = keep ? request.id : this.freshId();
    const key = routeKey(link, request.id);
    const meta = request.params?.['_meta'];
    const progressToken = isPlainObject(meta) ? meta['progressToken'] : undefined;
    this.routes.set(id, { link, upstreamId: request.id, key, ...(progressToken === undefined ? {} : { progressToken }) });
    this.idsByRoute.set(key, id);
    if (keep) this.sendToClient(request, line);
    else this.sendToClient({ ...request, id });
  }

  /**
   * The client's answer to one of these requests; false when it answers nothing this side asked (the caller logs it).
   * An answer carries no method, so its original `line` may go upstream as it is when the id needs no mapping.
   */
  onClientResponse(id: RpcId, response: WireMessage, line: string | undefined): boolean {
    const own = this.own.get(id);
    if (own !== undefined) {
      this.own.delete(id);
      if (response.error) own.reject(new AssentError('unavailable', `The MCP client refused the request: ${response.error.message}`));
      else own.resolve(response.result ?? {});
      return true;
    }
    const route = this.routes.get(id);
    if (route === undefined) return false;
    this.routes.delete(id);
    this.idsByRoute.delete(route.key);
    if (route.upstreamId === id) route.link.send(response, undefined, line);
    else route.link.send({ ...response, id: route.upstreamId });
    return true;
  }

  /** Progress from the client for a request an upstream made (its token was chosen by that upstream); false when none matches. */
  relayClientProgress(notification: WireMessage): boolean {
    const token = notification.params?.['progressToken'];
    for (const route of this.routes.values()) {
      if (route.progressToken !== undefined && route.progressToken === token) {
        route.link.send(notification);
        return true;
      }
    }
    return false;
  }

  /** An upstream withdrew one of its requests: the client hears it under the client-facing id. */
  onUpstreamCancelled(link: UpstreamLink, notification: WireMessage, line: string | undefined): void {
    const params = notification.params ?? {};
    const key = routeKey(link, params['requestId'] as RpcId);
    const id = this.idsByRoute.get(key);
    if (id === undefined) return;
    this.idsByRoute.delete(key);
    this.routes.delete(id);
    if (id === params['requestId']) this.sendToClient(notification, line);
    else this.sendToClient({ ...notification, params: { ...params, requestId: id } });
  }

  /** Requests a stopped upstream made of the client can never be answered: the client is told to drop them. */
  dropRequestsOf(link: UpstreamLink): void {
    for (const [id, route] of this.routes) {
      if (route.link !== link) continue;
      this.routes.delete(id);
      this.idsByRoute.delete(route.key);
      this.sendToClient({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: `MCP server "${link.alias}" stopped` },
      });
    }
  }

  /** Sends `elicitation/create` to the client under a gateway-owned id; an abort cancels it on the client. */
  elicit(params: Record<string, unknown>, signal: AbortSignal, closing: boolean): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      if (signal.aborted || closing) {
        reject(new AssentError('timeout', 'The elicitation was cancelled before it was sent.'));
        return;
      }
      const id = this.freshId();
      const onAbort = (): void => {
        if (!this.own.delete(id)) return;
        this.sendToClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'decided on another channel' } });
        reject(new AssentError('timeout', 'The elicitation was cancelled: the call was decided or abandoned elsewhere.'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.own.set(id, {
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

  private freshId(): string {
    return `${GATEWAY_ID_PREFIX}${this.nextClientFacingId++}`;
  }

  /** The gateway closes: its own requests fail; relayed ones die with their upstreams. */
  close(): void {
    for (const own of this.own.values()) own.reject(new AssentError('unavailable', 'The gateway closed before the client answered.'));
    this.own.clear();
  }
}

function routeKey(link: UpstreamLink, id: RpcId): string {
  return `${link.alias}\u0000${typeof id}\u0000${String(id)}`;
}
