// JSON-RPC 2.0 message shapes as the gateway relays them: loose on purpose, so
// fields the gateway does not know (future methods, _meta, extensions) pass
// through untouched instead of being validated or stripped a second time.
import { isPlainObject } from '../../core/base/plainObject.js';

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

/**
 * The gateway's own request ids (its tools/list and aggregation requests to an
 * upstream, its elicitation requests to the client, and any id it had to
 * remap) are strings with this prefix. Every other id passes through as the
 * peer chose it; a peer id that happens to carry the prefix is remapped.
 */
export const GATEWAY_ID_PREFIX = 'assent-gw:';

export function isGatewayId(id: RpcId): boolean {
  return typeof id === 'string' && id.startsWith(GATEWAY_ID_PREFIX);
}

const MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

function isId(value: unknown): value is RpcId {
  return typeof value === 'string' || Number.isInteger(value);
}

/**
 * What is wrong with a parsed line as a JSON-RPC 2.0 message, or undefined.
 * The structural rules the SDK's message schema enforced, without validating
 * any method's params (the receiving peer does that, once): `jsonrpc: "2.0"`,
 * no other top-level keys than a message has, an integer or string id, a
 * request or notification never also a response, and a response carrying
 * exactly one of `result` (an object) or `error` (`{code, message}`).
 */
export function wireShapeProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'it is not a JSON object';
  if (value['jsonrpc'] !== '2.0') return 'its "jsonrpc" is not "2.0"';
  for (const key in value) if (!MESSAGE_KEYS.has(key)) return `it has the unknown member ${JSON.stringify(key.slice(0, 40))}`;
  const id = value['id'];
  if (id !== undefined && !isId(id)) return 'its "id" is neither a string nor an integer';
  if (value['method'] !== undefined) {
    if (typeof value['method'] !== 'string') return 'its "method" is not a string';
    if (value['params'] !== undefined && !isPlainObject(value['params'])) return 'its "params" is not an object';
    if (value['result'] !== undefined || value['error'] !== undefined) return 'it has a "method" and also a "result" or "error"';
    return undefined;
  }
  if (value['params'] !== undefined) return 'it has "params" but no "method"';
  const error = value['error'];
  if (value['result'] !== undefined) {
    if (!isPlainObject(value['result'])) return 'its "result" is not an object';
    if (error !== undefined) return 'it has both "result" and "error"';
    if (id === undefined) return 'it is a result without an "id"';
    return undefined;
  }
  if (!isPlainObject(error)) return 'it has neither "method", "result" nor an "error" object';
  if (!Number.isInteger(error['code']) || typeof error['message'] !== 'string') return 'its "error" lacks an integer "code" or a string "message"';
  return undefined;
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
  // The exact names are the common case on the hot path: no folding for them.
  if ((GATED_METHODS as readonly string[]).includes(method)) return undefined;
  const folded = foldMethodName(method);
  return GATED_METHODS.find((gated) => folded === FOLDED_GATED.get(gated));
}

const FOLDED_GATED = new Map<string, string>(GATED_METHODS.map((gated) => [gated, foldMethodName(gated)]));

/** Standard JSON-RPC codes the gateway answers with. */
export const RPC_INVALID_PARAMS = -32602;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INTERNAL_ERROR = -32603;
