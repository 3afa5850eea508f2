// Issue 19 item 7: who keeps a connection when a cap is reached. Per address
// and over all; idle unauthenticated connections go first, then idle signed-in
// ones; a request being handled and an event stream never go; streams have a
// budget of their own.
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionBudget } from '../../../../src/heads/http/connectionBudget.js';

let port = 40_000;
function fakeSocket(address: string): Socket & { destroyed: boolean } {
  const socket = new EventEmitter() as unknown as Socket & { destroyed: boolean };
  Object.assign(socket, { remoteAddress: address, remotePort: (port += 1), destroyed: false });
  (socket as unknown as { destroy: () => void }).destroy = () => {
    socket.destroyed = true;
    socket.emit('close');
  };
  return socket;
}

describe('ConnectionBudget (issue 19 item 7)', () => {
  it('caps one address: a new connection from it drops that address\'s oldest idle unauthenticated one; other addresses are untouched', () => {
    let now = 0;
    const budget = new ConnectionBudget({ maxConnections: 10, maxPerAddress: 3 }, () => (now += 1));
    const other = fakeSocket('10.0.0.9');
    budget.admit(other);
    const flood = [1, 2, 3].map(() => fakeSocket('10.0.0.1'));
    for (const socket of flood) budget.admit(socket);
    budget.admit(fakeSocket('10.0.0.1'));
    expect(flood.map((s) => s.destroyed)).toEqual([true, false, false]);
    expect(other.destroyed).toBe(false);
    expect(budget.status()).toEqual({ connections: 4, streams: 0, dropped: 1 });
  });

  it('when full, unauthenticated idle connections go before signed-in idle ones; a request being handled never goes; with nothing evictable the newcomer is dropped', () => {
    let now = 0;
    const budget = new ConnectionBudget({ maxConnections: 3, maxPerAddress: 3 }, () => (now += 1));
    const [signedIn, anonymous, busy] = [fakeSocket('10.0.0.1'), fakeSocket('10.0.0.2'), fakeSocket('10.0.0.3')] as const;
    for (const socket of [signedIn, anonymous, busy]) budget.admit(socket);
    budget.authenticated(signedIn);
    budget.handling(signedIn);
    budget.answered(signedIn);
    budget.handling(busy);
    const fourth = fakeSocket('10.0.0.4');
    budget.admit(fourth);
    expect([signedIn.destroyed, anonymous.destroyed, busy.destroyed]).toEqual([false, true, false]);
    // With no unauthenticated idle one left, the signed-in idle one goes.
    budget.handling(fourth);
    const fifth = fakeSocket('10.0.0.5');
    budget.admit(fifth);
    expect(signedIn.destroyed).toBe(true);
    // All three being handled: nothing may go, the newcomer is dropped.
    budget.handling(fifth);
    const refused = fakeSocket('10.0.0.6');
    budget.admit(refused);
    expect(refused.destroyed).toBe(true);
    expect([busy.destroyed, fourth.destroyed, fifth.destroyed]).toEqual([false, false, false]);
  });

  it('authenticated event streams leave the general budget and have their own; a full stream budget refuses, a stream is never evicted', () => {
    const budget = new ConnectionBudget({ maxConnections: 2, maxPerAddress: 2, maxStreams: 1 });
    const stream = fakeSocket('10.0.0.1');
    budget.admit(stream);
    budget.handling(stream);
    expect(budget.streaming(stream)).toBe(true);
    const second = fakeSocket('10.0.0.1');
    budget.admit(second);
    budget.handling(second);
    expect(budget.streaming(second)).toBe(false);
    for (let i = 0; i < 5; i += 1) budget.admit(fakeSocket('10.0.0.1'));
    expect(stream.destroyed).toBe(false);
    expect(budget.status().streams).toBe(1);
  });
});
