// Who may hold a connection to the HTTP head (issue 19 item 7): a cap per
// client address, a cap over all, and a budget of their own for authenticated
// event streams. When a cap is reached, a connection that is idle and
// unauthenticated (still sending its request, or between requests, and never
// signed in) goes first, then an idle signed-in one; a request being handled
// and a live event stream are never dropped to make room.
import type { Socket } from 'node:net';

export interface ConnectionBudgetOptions {
  /** Connections served at once, event streams aside: 64. */
  maxConnections?: number;
  /** Connections one client address may hold at once, event streams aside: 16. */
  maxPerAddress?: number;
  /** Authenticated event streams open at once, their own budget: 64. */
  maxStreams?: number;
}

type ConnectionState = 'waiting' | 'handling' | 'idle';

interface Tracked {
  socket: Socket;
  address: string;
  /** `waiting`: no request admitted yet (headers or body still arriving); `handling`: the app is answering; `idle`: between requests. */
  state: ConnectionState;
  authenticated: boolean;
  stream: boolean;
  /** When it last became waiting or idle (ms): the oldest goes first. */
  since: number;
}

/** What the counts are now, for daemon.status and tests. */
export interface ConnectionBudgetStatus {
  connections: number;
  streams: number;
  dropped: number;
}

/** An address as one client: IPv4-mapped IPv6 spelled as IPv4. */
function clientAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

const keyOf = (socket: Pick<Socket, 'remoteAddress' | 'remotePort'>): string => `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;

export class ConnectionBudget {
  private readonly maxConnections: number;
  private readonly maxPerAddress: number;
  private readonly maxStreams: number;
  /** By remote address and port: the TCP socket at `connection` and a TLS socket wrapping it share these. */
  private readonly tracked = new Map<string, Tracked>();
  private dropped = 0;

  constructor(options: ConnectionBudgetOptions = {}, private readonly now: () => number = () => performance.now()) {
    this.maxConnections = options.maxConnections ?? 64;
    this.maxPerAddress = options.maxPerAddress ?? 16;
    this.maxStreams = options.maxStreams ?? 64;
  }

  /** A new connection (the server's `connection` event): kept, after making room if a cap is reached, or dropped. */
  admit(socket: Socket): void {
    const entry: Tracked = { socket, address: clientAddress(socket), state: 'waiting', authenticated: false, stream: false, since: this.now() };
    const general = [...this.tracked.values()].filter((t) => !t.stream);
    const sameAddress = general.filter((t) => t.address === entry.address);
    if (sameAddress.length >= this.maxPerAddress && !this.evictOne(sameAddress)) return this.drop(socket);
    if (general.length >= this.maxConnections && !this.evictOne(this.busiestFirst(general))) return this.drop(socket);
    const key = keyOf(socket);
    this.tracked.set(key, entry);
    socket.once('close', () => {
      if (this.tracked.get(key) === entry) this.tracked.delete(key);
    });
  }

  /** The app got a whole request on this connection. */
  handling(socket: Socket): void {
    const entry = this.tracked.get(keyOf(socket));
    if (entry !== undefined) entry.state = 'handling';
  }

  /** The answer is out: the connection waits for its next request. */
  answered(socket: Socket): void {
    const entry = this.tracked.get(keyOf(socket));
    if (entry === undefined || entry.stream) return;
    entry.state = 'idle';
    entry.since = this.now();
  }

  /** A request on this connection carried a valid session or token. */
  authenticated(socket: Socket): void {
    const entry = this.tracked.get(keyOf(socket));
    if (entry !== undefined) entry.authenticated = true;
  }

  /**
   * An authenticated request became an event stream: the connection moves to
   * the streams' own budget. False when that budget is full (the stream is refused).
   */
  streaming(socket: Socket): boolean {
    const entry = this.tracked.get(keyOf(socket));
    if (entry === undefined) return true;
    if (entry.stream) return true;
    if ([...this.tracked.values()].filter((t) => t.stream).length >= this.maxStreams) return false;
    entry.stream = true;
    entry.authenticated = true;
    return true;
  }

  status(): ConnectionBudgetStatus {
    const all = [...this.tracked.values()];
    return { connections: all.filter((t) => !t.stream).length, streams: all.filter((t) => t.stream).length, dropped: this.dropped };
  }

  /** Connections of the address holding the most first, so one client's flood pays for the room. */
  private busiestFirst(general: Tracked[]): Tracked[] {
    const counts = new Map<string, number>();
    for (const t of general) counts.set(t.address, (counts.get(t.address) ?? 0) + 1);
    return [...general].sort((a, b) => (counts.get(b.address) ?? 0) - (counts.get(a.address) ?? 0));
  }

  /** Drops one evictable connection of `candidates`: idle unauthenticated (oldest first), else idle signed-in; false when none may go. */
  private evictOne(candidates: Tracked[]): boolean {
    const evictable = candidates.filter((t) => t.state !== 'handling' && !t.stream);
    const order = (list: Tracked[]): Tracked[] => [...list].sort((a, b) => a.since - b.since);
    const busiest = candidates[0]?.address;
    const pick =
      order(evictable.filter((t) => !t.authenticated && t.address === busiest))[0] ??
      order(evictable.filter((t) => !t.authenticated))[0] ??
      order(evictable.filter((t) => t.authenticated))[0];
    if (pick === undefined) return false;
    this.tracked.delete(keyOf(pick.socket));
    this.drop(pick.socket);
    return true;
  }

  private drop(socket: Socket): void {
    this.dropped += 1;
    socket.destroy();
  }
}
