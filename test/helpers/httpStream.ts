// Raw HTTP/1.1 over a TCP socket, for tests that need what a well-behaved client
// never sends: chunked bodies that do not stop, bodies that trickle, a declared
// Content-Length with no body behind it. Loopback only; every send is bounded.
import { connect, type Socket } from 'node:net';

export interface RawRequest {
  host: string;
  port: number;
  method: string;
  path: string;
  /** Sent as given (Host included); Transfer-Encoding: chunked is added when `chunked` is set. */
  headers: Record<string, string>;
  /** Stream a chunked body. */
  chunked?: { chunkBytes: number; maxBytes: number; paceMs?: number; end?: boolean };
  /** A fixed body sent after the headers (with its own Content-Length header, if the test wants one). */
  body?: string;
  /** Gives up (destroys the socket) after this long; the result says so. */
  timeoutMs: number;
  /** Called after every chunk written; returning false abandons the request (the socket is destroyed). */
  onChunk?: (sentBytes: number) => boolean;
}

export interface RawResult {
  /** Status of the first response line, or undefined when none arrived. */
  status: number | undefined;
  /** Everything received, headers and body. */
  text: string;
  /** Body bytes written before the server's answer or the close. */
  sentBytes: number;
  /** The server closed the connection (FIN or reset) before the timeout. */
  closedByServer: boolean;
  /** Milliseconds from connect to close. */
  elapsedMs: number;
  error?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function writeOrWait(socket: Socket, data: string | Buffer): Promise<void> {
  if (socket.write(data)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/** Sends one request and collects what comes back until the server closes or the timeout ends it. */
export function sendRaw(request: RawRequest): Promise<RawResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: request.host, port: request.port });
    let text = '';
    let sentBytes = 0;
    let closedByServer = false;
    let timedOut = false;
    let error: string | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', (cause: NodeJS.ErrnoException) => (error = cause.code ?? cause.message));
    socket.on('end', () => (closedByServer = true));
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, request.timeoutMs);
    socket.on('close', () => {
      clearTimeout(timer);
      if (!timedOut && error !== undefined) closedByServer = true;
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const result: RawResult = {
        status: match?.[1] === undefined ? undefined : Number(match[1]),
        text,
        sentBytes,
        closedByServer: closedByServer && !timedOut,
        elapsedMs: performance.now() - started,
      };
      if (error !== undefined) result.error = error;
      resolve(result);
    });
    socket.on('connect', () => {
      void (async () => {
        const headers = { ...request.headers, ...(request.chunked === undefined ? {} : { 'Transfer-Encoding': 'chunked' }) };
        const head = `${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers)
          .map(([key, value]) => `${key}: ${value}\r\n`)
          .join('')}\r\n`;
        await writeOrWait(socket, head);
        if (request.body !== undefined) await writeOrWait(socket, request.body);
        const plan = request.chunked;
        if (plan === undefined) return;
        const filler = Buffer.alloc(plan.chunkBytes, 0x61);
        while (sentBytes < plan.maxBytes && !socket.destroyed && text === '') {
          const size = Math.min(plan.chunkBytes, plan.maxBytes - sentBytes);
          await writeOrWait(socket, Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), filler.subarray(0, size), Buffer.from('\r\n')]));
          sentBytes += size;
          if (request.onChunk !== undefined && !request.onChunk(sentBytes)) {
            socket.destroy();
            return;
          }
          if (plan.paceMs !== undefined) await sleep(plan.paceMs);
        }
        if (plan.end === true && !socket.destroyed && text === '') socket.write('0\r\n\r\n');
      })().catch(() => undefined);
    });
  });
}
