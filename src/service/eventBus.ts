// One event bus for the daemon (R-D-9). Every event is appended to the store
// (without raw arguments) so `events.since` can replay it, then pushed to live
// subscribers, who may receive raw args because they sit behind the 0600 socket.
// Appends and deliveries keep the order of publishing. In team mode the other
// hosts' events are delivered here too, without being stored again.

export const EVENT_KINDS = [
  'approval_requested',
  'approval_resolved',
  'call_started',
  'call_finished',
  'proof_issued',
  'proof_consumed',
  'proof_revoked',
  'effect_uncertain',
  'config_changed',
  'daemon_started',
  // R-TEAM-3: a principal's approval was recorded and the approval still needs more (quorum).
  'approval_voted',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

export interface BusEvent {
  kind: EventKind;
  seq: number;
  ts: number;
  sessionId?: string;
  data: Record<string, unknown>;
}

export interface EventStore {
  appendEvent(event: { kind: string; ts: number; sessionId?: string; data: Record<string, unknown> }): number | Promise<number>;
}

export type EventListener = (event: BusEvent) => void;

/** A copy of event data without raw arguments, at the top level and inside an embedded approval. */
export function withoutPrivateFields(data: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if ((PRIVATE_FIELDS as readonly string[]).includes(key)) continue;
    copy[key] = key === 'approval' && typeof value === 'object' && value !== null && !Array.isArray(value) ? withoutPrivateFields(value as Record<string, unknown>) : value;
  }
  return copy;
}

/** Fields that only live subscribers may see; never persisted. */
const PRIVATE_FIELDS = ['args', 'action'] as const;

export class EventBus {
  private readonly listeners = new Set<EventListener>();
  /** The last publish still being appended: the next one waits for it, so seq order is publish order. */
  private tail: Promise<unknown> | undefined;
  private failureCount = 0;

  constructor(
    private readonly store: EventStore,
    private readonly now: () => number,
    private readonly onFailure: (error: unknown) => void = () => undefined,
  ) {}

  /** Events that could not be stored (delivered live all the same), for daemon.status. */
  get failures(): number {
    return this.failureCount;
  }

  /**
   * Stores the event without raw arguments, then pushes it to live subscribers.
   * Never rejects: an event the store refused (the team database is away) is
   * still delivered live, with seq 0, and counted.
   */
  publish(kind: EventKind, data: Record<string, unknown>, sessionId?: string): Promise<BusEvent> {
    const ts = this.now();
    const persisted = withoutPrivateFields(data);
    const stored = sessionId === undefined ? { kind, ts, data: persisted } : { kind, ts, sessionId, data: persisted };
    const append = (): BusEvent | Promise<BusEvent> => {
      const settle = (seq: number): BusEvent => {
        const event: BusEvent = sessionId === undefined ? { kind, seq, ts, data } : { kind, seq, ts, sessionId, data };
        this.deliver(event);
        return event;
      };
      const fail = (error: unknown): BusEvent => {
        this.failureCount += 1;
        try {
          this.onFailure(error);
        } catch {
          // A failing failure handler must not reach the publisher.
        }
        return settle(0);
      };
      try {
        const seq = this.store.appendEvent(stored);
        return typeof seq === 'number' ? settle(seq) : seq.then(settle, fail);
      } catch (error) {
        return fail(error);
      }
    };
    const previous = this.tail;
    const next = previous === undefined ? append() : previous.then(append);
    if (!(next instanceof Promise)) return Promise.resolve(next);
    this.tail = next;
    void next.then(() => {
      if (this.tail === next) this.tail = undefined;
    });
    return next;
  }

  /** Pushes an event to live subscribers without storing it: another host's, already in the shared store. */
  deliver(event: BusEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // One subscriber's failure never reaches the publisher or other subscribers.
      }
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }
}
