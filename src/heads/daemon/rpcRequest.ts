// One running request on a daemon socket connection, which is also its call
// context: what its reply, a cancel or a disconnect needs, and nothing else.
import { AssentError } from '../../core/base/errors.js';
import type { CallContext, ConnectionHandle } from '../../operations/operation.js';
import type { DecisionPeer, DeferredReply, RequestEnd, RequestEndListener } from '../../service/approvalService.js';

export type RequestId = string | number;

/** What a request needs of the connection it came on. */
export interface RequestConnection extends ConnectionHandle {
  /** The process at the other end, looked up once per connection on first need. */
  peer(): Promise<DecisionPeer>;
  logError(message: string, error: unknown): void;
  /** Sends a request's result, or its error, and forgets the request. */
  answer(request: InFlightRequest, result: unknown): void;
  answerError(request: InFlightRequest, error: unknown): void;
}

/**
 * One running request and its call context. It holds only what its reply, a
 * cancel or a disconnect needs: thousands may wait for a person at once (SPEC
 * §14), so there is no AbortController unless an operation reads `signal`.
 */
export class InFlightRequest implements CallContext, DeferredReply {
  private controller: AbortController | undefined;
  /** Set once its result or error was handed to the connection: a request is answered once. */
  private answered = false;
  private endListener: RequestEndListener | RequestEndListener[] | undefined;
  private endedAs: { how: RequestEnd; reason: AssentError } | undefined;

  constructor(
    /** Its place in the connection's in-flight map: the request id, or a symbol for a notification. */
    readonly key: RequestId | symbol,
    readonly method: string,
    readonly connection: RequestConnection,
    /** Principal, head and channel: the same object for every request of the connection. */
    private readonly base: Omit<CallContext, 'connection'>,
  ) {}

  get id(): RequestId | undefined {
    return typeof this.key === 'symbol' ? undefined : this.key;
  }

  get principal(): string {
    return this.base.principal;
  }

  get head(): CallContext['head'] {
    return this.base.head;
  }

  get channel(): string | undefined {
    return this.base.channel;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.endedAs !== undefined) this.controller.abort(this.endedAs.reason);
    }
    return this.controller.signal;
  }

  peer(): Promise<DecisionPeer> {
    return this.connection.peer();
  }

  /** The request itself takes its result, whenever it comes (CallContext.reply). */
  get reply(): DeferredReply {
    return this;
  }

  resolve(result: unknown): void {
    if (this.answered) return;
    this.answered = true;
    this.connection.answer(this, result);
  }

  reject(error: unknown): void {
    if (this.answered) return;
    this.answered = true;
    this.connection.answerError(this, error);
  }

  onEnd(listener: RequestEndListener): void {
    if (this.endedAs !== undefined) {
      listener.requestEnded(this.endedAs.how);
      return;
    }
    if (this.endListener === undefined) this.endListener = listener;
    else if (Array.isArray(this.endListener)) this.endListener.push(listener);
    else this.endListener = [this.endListener, listener];
  }

  /** The request ended before its reply: tells whoever listens, once. */
  end(how: RequestEnd, reason: AssentError): void {
    if (this.endedAs !== undefined) return;
    this.endedAs = { how, reason };
    this.controller?.abort(reason);
    const listeners = this.endListener;
    this.endListener = undefined;
    for (const listener of Array.isArray(listeners) ? listeners : listeners === undefined ? [] : [listeners]) {
      try {
        listener.requestEnded(how);
      } catch (error) {
        this.connection.logError('request end listener failed', error);
      }
    }
  }
}
