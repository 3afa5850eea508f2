// JSON-RPC 2.0 message shapes as the gateway relays them: loose on purpose, so
// fields the gateway does not know (future methods, _meta, extensions) pass
// through untouched instead of being validated or stripped a second time.

export type RpcId = string | number;

export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

/** Any JSON-RPC message; which fields are present tells its kind. */
export interface WireMessage {
  jsonrpc: '2.0';
  id?: RpcId;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: RpcErrorBody;
  [extra: string]: unknown;
}

export interface WireRequest extends WireMessage {
  id: RpcId;
  method: string;
}

export function isRequest(message: WireMessage): message is WireRequest {
  return typeof message.method === 'string' && message.id !== undefined;
}

export function isNotification(message: WireMessage): boolean {
  return typeof message.method === 'string' && message.id === undefined;
}

/** A JSON object (not null, not an array): the only shape params, results and most fields may take. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function resultMessage(id: RpcId, result: Record<string, unknown>): WireMessage {
  return { jsonrpc: '2.0', id, result };
}

export function errorMessage(id: RpcId, error: RpcErrorBody): WireMessage {
  return { jsonrpc: '2.0', id, error };
}

/**
 * A method name reduced to what a lenient server might still route on: NFKC
 * (fullwidth and compatibility letters become ASCII), case folded, and every
 * character that is not an ASCII letter or digit removed (whitespace, control
 * and invisible format characters, punctuation).
 */
export function foldMethodName(method: string): string {
  return method.normalize('NFKC').toUpperCase().toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Methods the gateway intercepts for safety; a different spelling of one is never relayed. */
export const GATED_METHODS = ['tools/call'] as const;

/**
 * The gated method `method` only looks unlike (e.g. `Tools/Call`, ` tools/call`,
 * `tools/call\u0000`, `tools.call`), or undefined. An exact match is not a
 * lookalike: it is gated as itself.
 */
export function gatedLookalikeOf(method: string): string | undefined {
  const folded = foldMethodName(method);
  return GATED_METHODS.find((gated) => method !== gated && folded === foldMethodName(gated));
}

/** Standard JSON-RPC codes the gateway answers with. */
export const RPC_INVALID_PARAMS = -32602;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INTERNAL_ERROR = -32603;
