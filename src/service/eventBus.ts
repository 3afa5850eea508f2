// One event bus for the daemon (R-D-9). Every event is appended to the journal
// (without raw arguments) so `events.since` can replay it, then pushed to live
// subscribers, who may receive raw args because they sit behind the 0600 socket.

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
  appendEvent(event: { kind: string; ts: number; sessionId?: string; data: Record<string, unknown> }): number;
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

  constructor(
    private readonly store: EventStore,
    private readonly now: () => number,
  ) {}

  publish(kind: EventKind, data: Record<string, unknown>, sessionId?: string): BusEvent {
    const ts = this.now();
    const persisted = withoutPrivateFields(data);
    const seq = this.store.appendEvent(sessionId === undefined ? { kind, ts, data: persisted } : { kind, ts, sessionId, data: persisted });
    const event: BusEvent = sessionId === undefined ? { kind, seq, ts, data } : { kind, seq, ts, sessionId, data };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // One subscriber's failure never reaches the publisher or other subscribers.
      }
    }
    return event;
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }
}
