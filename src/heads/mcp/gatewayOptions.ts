// The gateway's options and its handle, apart from gateway.ts so the relay that
// implements them (relay.ts) imports no module that imports it.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from '../../service/logger.js';
import type { CallGate } from './gate.js';
import type { MessageLink } from './messageLink.js';
import type { OperationToolHost } from './operationTools.js';
import type { UpstreamSpec, UpstreamTransportFactory } from './upstream.js';

/** Upper bound for the keep-alive period: clients treat a silent call as idle after longer (R-MCP-4). */
export const MAX_KEEP_ALIVE_MS = 15_000;

export interface GatewayOptions {
  /** Towards the MCP client: a line link over stdio in production, an SDK transport (in-memory) in tests. */
  clientTransport: Transport | MessageLink;
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
