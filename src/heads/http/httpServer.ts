// Listens with the HTTP app on `web.listen` (R-WEB-1), over TLS when `web.tls`
// gives it a certificate (R-REM-2); plain HTTP only on loopback. Kept apart from
// the app factory so tests drive the app without a port. Port 0 picks a free
// port; the address actually bound is what the Host guard and `assent web` use.
// Every request's body is admitted here, capped and timed, before the app runs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { isLoopbackHost, parseListen } from '../../core/config/webConfig.js';
import { AssentError } from '../../core/base/errors.js';
import type { Logger } from '../../service/logger.js';
import type { HttpApp } from './httpApp.js';
import { errorBody, loggablePath, MAX_BODY_BYTES, SECURITY_HEADERS } from './httpBasics.js';
import { ConnectionBudget, type ConnectionBudgetOptions, type ConnectionBudgetStatus } from './connectionBudget.js';
import { admitRequestBody } from './requestBody.js';

/** What serves one admitted request: the web framework's adapter over the app. */
type RequestListener = (request: IncomingMessage, response: ServerResponse) => unknown;

/** What the app tells the listener about a request's connection (issue 19 item 7). */
export interface ConnectionMarks {
  /** The request carried a valid session or token. `incoming` is the Node request the app got. */
  authenticated(incoming: unknown): void;
  /** The request became an authenticated event stream; false when the streams' budget is full. */
  streaming(incoming: unknown): boolean;
}

export interface HttpHeadOptions {
  /** Largest request body, declared or streamed; 1 MiB. */
  maxBodyBytes?: number;
  /** Time to receive a whole request, headers and body; 30 s. A body that trickles is cut with 408. */
  requestTimeoutMs?: number;
  /** Time to receive the headers; 10 s (at most the request timeout). */
  headersTimeoutMs?: number;
  /** Open connections served at once, event streams aside; bounds what held bodies can pin: 64. */
  maxConnections?: number;
  /** Connections one client address may hold, event streams aside: 16. */
  maxPerAddress?: number;
  /** Authenticated event streams, a budget of their own: 64. */
  maxStreams?: number;
  /** Receives the access line of answers the listener gives itself (413). */
  logger?: Logger;
  /** Serve https with this key and certificate (PEM); without it only a loopback address is served. */
  tls?: { cert: string; key: string };
}

/** 127.0.0.0/8, ::1 and localhost: the only addresses where plain HTTP stays on this machine. */
export function isLoopbackAddress(address: string): boolean {
  return isLoopbackHost(address.replace(/:\d+$/, ''));
}

/** `0.0.0.0` and `::`: listening on every address of this machine. */
export function isWildcardHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === '0.0.0.0' || bare === '::';
}

/** This machine's interface addresses (IPv4 first, non-internal first), without brackets or ports. */
export function machineAddresses(): string[] {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  const rank = (entry: { family: string; internal: boolean }): number => (entry.internal ? 2 : 0) + (entry.family === 'IPv4' ? 0 : 1);
  return all
    .filter((entry) => !(entry.family === 'IPv6' && entry.address.toLowerCase().startsWith('fe80:')))
    .sort((a, b) => rank(a) - rank(b))
    .map((entry) => entry.address);
}

/** How long a refused request's connection may drain before it is destroyed. */
const REFUSAL_LINGER_MS = 1000;

export interface HttpHead {
  /** `host:port` actually bound. */
  address: string;
  /** The page's URL: `https://` when serving TLS; for a wildcard listen, at this machine's first outward address. */
  url: string;
  scheme: 'http' | 'https';
  /** For a wildcard listen, every `host:port` of this machine the page answers to; otherwise empty. */
  ownAddresses: string[];
  /** Connections held now and dropped so far (issue 19 item 7). */
  connections(): ConnectionBudgetStatus;
  close(): Promise<void>;
}

/** How the bound address is spelled in URLs and compared with Host headers: IPv6 in brackets. */
function formatAddress(host: string, port: number): string {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/**
 * Binds the app. `build` runs at the first request, when the final address
 * (and, for a wildcard listen, this machine's addresses) is known, so the Host
 * guard never sees a placeholder port. Refuses, before binding, to serve plain
 * HTTP anywhere but loopback (R-REM-2).
 */
/**
 * Why the web page cannot listen on `listen` and what to do, once each, in one
 * sentence: the foreground daemon prints it after "the web page is not
 * served:", daemon status and daemon.log carry it, and so does a reload to a busy port.
 */
export function listenFailureMessage(listen: string, error: NodeJS.ErrnoException): string {
  const change = 'set web.listen in config.json to a free port (0 picks one) and confirm it with `assent config reload`';
  switch (error.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${listen} because another program uses that port (EADDRINUSE); stop that program and restart the daemon, or ${change}.`;
    case 'EACCES':
      return `cannot listen on ${listen} because this user may not open that port (EACCES); ${change.replace('a free port', 'a port above 1023')}.`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${listen} because no network interface of this machine has that address (EADDRNOTAVAIL); set web.listen in config.json to an address of this machine, such as 127.0.0.1, and confirm it with \`assent config reload\`.`;
    default:
      return `cannot listen on ${listen} (${error.code ?? error.message}); ${change}.`;
  }
}

export async function startHttpHead(
  listen: string,
  build: (address: () => string, ownAddresses: () => readonly string[], connections: ConnectionMarks) => HttpApp | Promise<HttpApp>,
  options: HttpHeadOptions = {},
): Promise<HttpHead> {
  const parsed = parseListen(listen);
  if (parsed === undefined) {
    throw new AssentError('config_invalid', `web.listen "${listen}" is not host:port; set it to e.g. "127.0.0.1:7788" in config.json`);
  }
  if (options.tls === undefined && !isLoopbackHost(parsed.host)) {
    throw new AssentError(
      'config_invalid',
      `web.listen "${listen}" is not a loopback address and no TLS is configured, so the page is not served there (plain HTTP would carry session cookies in clear); ` +
        'set web.tls to "self-signed" or {"cert", "key"} files in config.json, or listen on 127.0.0.1 behind a TLS reverse proxy (web.publicUrl); see docs/remote.md',
      { details: { listen, key: 'web.tls' } },
    );
  }
  const host = parsed.host.startsWith('[') ? parsed.host.slice(1, -1) : parsed.host;
  let address = formatAddress(host, parsed.port);
  let ownAddresses: string[] = [];
  const budgetOptions: ConnectionBudgetOptions = {};
  if (options.maxConnections !== undefined) budgetOptions.maxConnections = options.maxConnections;
  if (options.maxPerAddress !== undefined) budgetOptions.maxPerAddress = options.maxPerAddress;
  if (options.maxStreams !== undefined) budgetOptions.maxStreams = options.maxStreams;
  const budget = new ConnectionBudget(budgetOptions);
  const socketOf = (incoming: unknown): Socket | undefined => (incoming as IncomingMessage | undefined)?.socket ?? undefined;
  const marks: ConnectionMarks = {
    authenticated: (incoming) => {
      const socket = socketOf(incoming);
      if (socket !== undefined) budget.authenticated(socket);
    },
    streaming: (incoming) => {
      const socket = socketOf(incoming);
      return socket === undefined ? true : budget.streaming(socket);
    },
  };
  // The app and the web framework's adapter are built at the first request, not at bind time:
  // a daemon whose page nobody opens never loads them (SPEC §14 memory budget).
  let http: HttpApp | undefined;
  let listener: Promise<RequestListener> | undefined;
  const listenerOf = (): Promise<RequestListener> =>
    (listener ??= Promise.all([import('@hono/node-server'), Promise.resolve().then(() => build(() => address, () => ownAddresses, marks))]).then(([adapter, app]) => {
      http = app;
      return adapter.getRequestListener(app.app.fetch);
    }));
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const requestTimeout = options.requestTimeoutMs ?? 30_000;
  /** The app could not be built (a module failed to load): the request is answered 500, and the next one tries again. */
  const failUnbuilt = (response: ServerResponse, error: unknown): void => {
    listener = undefined;
    options.logger?.error('the web page could not be built', { error: error instanceof Error ? error.message : String(error) });
    const body = JSON.stringify(errorBody(new AssentError('internal', 'The daemon could not build its web page; details are in daemon.log.')));
    if (response.headersSent) {
      response.destroy();
      return;
    }
    response.writeHead(500, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(body) });
    response.end(body);
  };
  const refuseTooLarge = (request: IncomingMessage, response: ServerResponse, started: number): void => {
    const body = JSON.stringify(
      errorBody(
        new AssentError(
          'frame_too_large',
          `The request body is larger than ${maxBodyBytes} bytes, the limit of this API; nothing was done and the connection is closed. Send a smaller JSON body.`,
        ),
      ),
    );
    response.writeHead(413, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(body) });
    // Closed by a half-close, not at once: a client still sending would get a reset that can
    // swallow the 413 before it reads it. The rest of the body is discarded as it comes, for at
    // most a second; then the connection goes whatever the client does.
    response.end(body, () => {
      const socket = request.socket;
      socket.end();
      const linger = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
      linger.unref();
      socket.once('close', () => clearTimeout(linger));
    });
    options.logger?.info('http request', {
      method: request.method,
      path: loggablePath((request.url ?? '').split('?')[0] ?? ''),
      status: 413,
      ms: Math.round((performance.now() - started) * 10) / 10,
      caller: 'none',
    });
  };
  // The app sees a request only once its whole body is in, within the cap: no route,
  // guard or handler reads a body of its own. The adapter serves a Buffer `rawBody` on
  // the request instead of reading the (already consumed) stream; the under-cap tests
  // in httpServer.test.ts and httpLimits.test.ts fail if it ever stops doing so.
  const serverOptions = { requestTimeout, headersTimeout: Math.min(options.headersTimeoutMs ?? 10_000, requestTimeout), connectionsCheckingInterval: 1000 };
  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    const started = performance.now();
    admitRequestBody(request, maxBodyBytes, {
      admitted: (body) => {
        budget.handling(request.socket);
        response.once('finish', () => budget.answered(request.socket));
        (request as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
        listenerOf().then(
          (serve) => serve(request, response),
          (error: unknown) => failUnbuilt(response, error),
        );
      },
      refused: () => refuseTooLarge(request, response, started),
    });
  };
  const server: Server =
    options.tls === undefined ? createServer(serverOptions, onRequest) : createTlsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, onRequest);
  // Every connection passes the budget: per address, over all, streams apart (issue 19 item 7).
  server.on('connection', (socket: Socket) => budget.admit(socket));
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(
        new AssentError('unavailable', listenFailureMessage(listen, error), { cause: error, details: { listen, code: error.code } }),
      );
    };
    server.once('error', onError);
    server.listen(parsed.port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  address = formatAddress(host, bound.port);
  const scheme = options.tls === undefined ? 'http' : 'https';
  let shown = address;
  if (isWildcardHost(host)) {
    const machine = machineAddresses().filter((candidate) => host === '::' || !candidate.includes(':'));
    ownAddresses = machine.map((candidate) => formatAddress(candidate, bound.port));
    shown = ownAddresses[0] ?? address;
  }
  return {
    address,
    url: `${scheme}://${shown}/`,
    scheme,
    ownAddresses,
    connections: () => budget.status(),
    close: () =>
      new Promise<void>((resolve) => {
        http?.closeStreams();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
