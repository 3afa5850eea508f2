// One declaration per operation (R-OPS-1): name, schemas, class and exposure per
// head. The daemon's RPC dispatch, the CLI, HTTP and MCP heads are generated
// from these declarations, so the heads cannot drift apart.
import type { z } from 'zod';
import type { DecisionPeer, DeferredReply, RequestEndListener } from '../service/approvalService.js';

export type OperationClass = 'read' | 'write' | 'human-decision';
export type HeadName = 'cli' | 'rpc' | 'http' | 'mcp';

/** Either the head exposes the operation, or a written rationale says why not. */
export type Exposure = true | { rationale: string };

/** Where a request came from; set once per call by the head (principal is never taken from params). */
export interface CallContext {
  principal: string;
  head: HeadName;
  /**
   * The channel this head stamps on a decision: `cli` for any daemon socket client,
   * `web` for the HTTP head. Set by the head, never from params (a client's own
   * claim is kept apart, as `claimedChannel`).
   */
  channel?: string;
  /** The process behind this call's connection, looked up by the head when a decision needs it (daemon socket only). */
  peer?: () => Promise<DecisionPeer>;
  /** Present for daemon RPC calls: lets long-lived operations push notifications and learn of disconnects. */
  connection?: ConnectionHandle;
  /** Aborted when the caller cancels this call or its connection closes (on the daemon socket, created on first read). */
  signal?: AbortSignal;
  /**
   * Tells `listener` at most once if this request ends before its result is sent:
   * `cancelled` when the caller cancelled it, `disconnected` when its connection
   * closed. The cheap form of `signal` for calls that wait for a person, of which
   * thousands may be open at once (SPEC §14); daemon socket only.
   */
  onEnd?(listener: RequestEndListener): void;
  /**
   * Takes this request's result later, outside the handler's promise (daemon
   * socket only): an operation whose call may wait for a person hands it on,
   * and its promise resolves to REPLY_DEFERRED (SPEC §14).
   */
  reply?: DeferredReply;
}

export interface ConnectionHandle {
  readonly id: string;
  notify(method: string, params: unknown): void;
  /** Runs `listener` when the connection closes; returns a function that removes it again. */
  onClose(listener: () => void): () => void;
  readonly closed: boolean;
}

export interface Operation<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  name: string;
  summary: string;
  params: P;
  result: R;
  class: OperationClass;
  exposure: Record<HeadName, Exposure>;
  /**
   * Optional hand-written check for an operation on a hot path: true only for
   * params that `params` accepts and would return unchanged, so they are used
   * as they arrived without the schema's per-field work. False is no verdict:
   * `params` then decides, with its messages.
   */
  accepts?(params: Record<string, unknown>): boolean;
  handler(params: z.infer<P>, context: CallContext): Promise<z.infer<R>>;
}

/** Keeps the generic types of one declaration while storing it in a plain list. */
export function defineOperation<P extends z.ZodType, R extends z.ZodType>(operation: Operation<P, R>): Operation {
  return operation as unknown as Operation;
}
