// The review broker's loopback listener (SPEC §6): one authenticated MCP
// client connection on 127.0.0.1, token first, line-delimited JSON-RPC after
// it. A wrong or late token closes that socket and the broker keeps waiting;
// once a client is in, every other connection is closed at once.
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SignalSource } from '../../channels/ttyChallenge.js';
import type { RandomBytes } from '../../core/base/ids.js';
import { newEndpointToken, removeEndpointIfUnchanged, tokenMatches, writeEndpointFile } from './endpointFile.js';
import type { WrittenEndpoint } from './endpointFile.js';

/** The client must send its token line within this time (SPEC §6). */
export const HANDSHAKE_MS = 3_000;
/** The broker never lives longer than this (SPEC §6). */
export const BROKER_LIFETIME_MS = 15 * 60_000;
/** Test override of the lifetime; it can only shorten it. */
export const LIFETIME_ENV = 'ASSENT_TEST_REVIEW_LIFETIME_MS';
/** Largest JSON-RPC line accepted from the client. */
export const MAX_LINE_BYTES = 1024 * 1024;
const MAX_TOKEN_LINE_BYTES = 66;

export type BrokerEnd = 'client-closed' | 'lifetime' | 'signal' | 'terminal-closed';

export function lifetimeFromEnv(env: Record<string, string | undefined>): number {
  const raw = env[LIFETIME_ENV];
  if (raw === undefined || !/^[0-9]{1,7}$/.test(raw)) return BROKER_LIFETIME_MS;
  const ms = Number(raw);
  return ms >= 1 && ms <= BROKER_LIFETIME_MS ? ms : BROKER_LIFETIME_MS;
}

/** Forwards process signals to the open confirmation and lets the broker cancel it on shutdown. */
export class BrokerSignals extends EventEmitter implements SignalSource {
  override on(signal: NodeJS.Signals, listener: () => void): this {
    return super.on(signal, listener);
  }
  override off(signal: NodeJS.Signals, listener: () => void): this {
    return super.off(signal, listener);
  }
}

export interface ReviewBrokerOptions {
  endpointPath: string;
  /** Builds the MCP server for the one authenticated connection. */
  createServer: () => McpServer;
  /** Human text for the operator's terminal. */
  say: (text: string) => void;
  /** Process signals (SIGINT/SIGTERM/SIGHUP) end the broker. */
  processSignals: SignalSource;
  /** The open confirmation listens here; the broker emits SIGTERM on it when it ends. */
  confirmationSignals: BrokerSignals;
  lifetimeMs?: number;
  handshakeMs?: number;
  random?: RandomBytes;
}

export interface RunningBroker {
  port: number;
  endpoint: WrittenEndpoint;
  /** Settles when the broker has ended and cleaned up. */
  ended: Promise<BrokerEnd>;
  /** Ends the broker from outside (the operator's terminal went away). */
  stop(why: BrokerEnd): void;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Starts listening and writes the endpoint file; the broker runs until `ended` settles. */
export async function startReviewBroker(options: ReviewBrokerOptions): Promise<RunningBroker> {
  const server = createServer({ noDelay: true });
  const port = await listen(server);
  const token = newEndpointToken(options.random);
  let endpoint: WrittenEndpoint;
  try {
    endpoint = writeEndpointFile(options.endpointPath, { schemaVersion: 1, port, token });
  } catch (error) {
    server.close();
    throw error;
  }

  const sockets = new Set<Socket>();
  let client: Socket | undefined;
  let mcp: McpServer | undefined;
  let finished = false;
  let resolveEnded: (end: BrokerEnd) => void = () => undefined;
  const ended = new Promise<BrokerEnd>((resolve) => {
    resolveEnded = resolve;
  });

  const end = (why: BrokerEnd): void => {
    if (finished) return;
    finished = true;
    clearTimeout(lifetime);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) options.processSignals.off(signal, onSignal);
    // Cancels an open confirmation (before launch it refuses; after launch it stops the child).
    options.confirmationSignals.emit('SIGTERM');
    const removed = removeEndpointIfUnchanged(endpoint);
    if (!removed) options.say(`assent: the endpoint file ${options.endpointPath} changed or vanished, so it was left as it is.\n`);
    void (async () => {
      try {
        await mcp?.close();
      } catch {
        // The connection is already gone.
      }
      for (const socket of sockets) socket.destroy();
      server.close();
      resolveEnded(why);
    })();
  };
  const onSignal = (): void => {
    options.say('\nassent: review broker stopping (signal).\n');
    end('signal');
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) options.processSignals.on(signal, onSignal);
  const lifetimeMs = options.lifetimeMs ?? BROKER_LIFETIME_MS;
  const lifetime = setTimeout(() => {
    options.say(`\nassent: review broker reached its ${Math.round(lifetimeMs / 1000)} s lifetime and stops; start a new review to continue.\n`);
    end('lifetime');
  }, lifetimeMs);

  const accept = async (socket: Socket, rest: Buffer): Promise<void> => {
    client = socket;
    options.say('assent: an MCP client connected; further connections are refused. Each execute_selected call asks for confirmation here.\n');
    let lineBytes = 0;
    // Bounds every line before the SDK buffers it (it would otherwise grow without limit).
    socket.on('data', (chunk: Buffer) => {
      const newline = chunk.lastIndexOf(0x0a);
      lineBytes = newline === -1 ? lineBytes + chunk.byteLength : chunk.byteLength - newline - 1;
      if (lineBytes > MAX_LINE_BYTES) {
        options.say('assent: the client sent a line over 1 MiB; the connection was closed.\n');
        socket.destroy();
      }
    });
    socket.on('close', () => {
      options.say('assent: the MCP client disconnected; the review broker ends.\n');
      end('client-closed');
    });
    if (rest.byteLength > 0) socket.unshift(rest);
    const transport = new StdioServerTransport(socket, socket);
    mcp = options.createServer();
    await mcp.connect(transport);
    socket.resume();
  };

  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (finished || client !== undefined) {
      options.say('assent: refused another connection; this broker serves one client only.\n');
      socket.destroy();
      return;
    }
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => {
      options.say('assent: a connection sent no token within 3 s and was closed; still waiting for the client.\n');
      socket.destroy();
    }, options.handshakeMs ?? HANDSHAKE_MS);
    const onHandshake = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const newline = received.indexOf(0x0a);
      if (newline === -1) {
        if (received.byteLength > MAX_TOKEN_LINE_BYTES) {
          clearTimeout(timer);
          options.say('assent: a connection sent a wrong token and was closed; still waiting for the client.\n');
          socket.destroy();
        }
        return;
      }
      clearTimeout(timer);
      socket.off('data', onHandshake);
      socket.pause();
      let line = received.subarray(0, newline);
      if (line.at(-1) === 0x0d) line = line.subarray(0, -1);
      if (!tokenMatches(line, token) || finished || client !== undefined) {
        options.say(
          client === undefined
            ? 'assent: a connection sent a wrong token and was closed; still waiting for the client.\n'
            : 'assent: refused another connection; this broker serves one client only.\n',
        );
        socket.destroy();
        return;
      }
      void accept(socket, received.subarray(newline + 1)).catch(() => socket.destroy());
    };
    socket.on('data', onHandshake);
    socket.on('close', () => clearTimeout(timer));
  });

  return { port, endpoint, ended, stop: end };
}
