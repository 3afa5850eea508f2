// `assent action connect ENDPOINT_FILE`: the stdio relay an MCP client spawns.
// It sends the broker's token as the first line, then copies bytes both ways;
// it never parses or changes the JSON-RPC lines it carries.
import { connect } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { AssentError } from '../../core/base/errors.js';
import type { Endpoint } from './endpointFile.js';

export interface RelayStreams {
  input: Readable;
  output: Writable;
}

/** Connects and relays until either side closes; rejects when the broker cannot be reached. */
export function relayToBroker(endpoint: Endpoint, streams: RelayStreams): Promise<'closed'> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: endpoint.port, noDelay: true });
    let connected = false;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      streams.input.unpipe(socket);
      streams.input.pause();
      socket.destroy();
      resolve('closed');
    };
    socket.once('connect', () => {
      connected = true;
      socket.write(`${endpoint.token}\n`);
      streams.input.pipe(socket);
      socket.pipe(streams.output, { end: false });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (connected) return finish();
      done = true;
      reject(
        new AssentError('unavailable', `No review broker answers on 127.0.0.1:${endpoint.port} (${error.code ?? 'error'}). Start \`assent action review\` in the operator's terminal and use the endpoint file it writes.`, {
          details: { port: endpoint.port, reason: error.code ?? 'connect-failed' },
        }),
      );
    });
    socket.on('close', finish);
    streams.input.on('end', () => socket.end());
    streams.input.on('close', () => socket.end());
  });
}
