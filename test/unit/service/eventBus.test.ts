// R-D-9: events reach live subscribers with the arguments an approver must see,
// and are persisted without them (also not inside an embedded approval view).
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../../src/service/eventBus.js';

describe('EventBus', () => {
  it('R-D-9 persists events without raw args or action, at the top level and inside the approval, but delivers them live', () => {
    const stored: { kind: string; data: Record<string, unknown> }[] = [];
    const bus = new EventBus({ appendEvent: (event) => stored.push(event) }, () => 1);
    const live: unknown[] = [];
    bus.subscribe((event) => live.push(event.data));
    const approval = { id: 'abcde', server: 'fs', tool: 'write', args: { content: 'SECRET' }, action: { env: { TOKEN: 'SECRET' } } };
    bus.publish('approval_requested', { approval, args: approval.args, action: approval.action }, 's1');
    expect(JSON.stringify(stored)).not.toContain('SECRET');
    expect(stored[0]?.data).toEqual({ approval: { id: 'abcde', server: 'fs', tool: 'write' } });
    expect(JSON.stringify(live)).toContain('SECRET');
  });

  it('a failing subscriber never reaches the publisher or the other subscribers', () => {
    const bus = new EventBus({ appendEvent: () => 1 }, () => 1);
    const seen: string[] = [];
    bus.subscribe(() => {
      throw new TypeError('boom');
    });
    bus.subscribe((event) => seen.push(event.kind));
    expect(() => bus.publish('daemon_started', {})).not.toThrow();
    expect(seen).toEqual(['daemon_started']);
  });
});
