// Listens with the HTTP app on `web.listen` (R-WEB-1). Kept apart from the app
// factory so tests drive the app without a port. Port 0 picks a free port; the
// address actually bound is what the Host guard and `assent web` use.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { parseListen } from '../../core/config.js';
import { AssentError } from '../../core/errors.js';
import type { HttpApp } from './httpApp.js';

export interface HttpHead {
  /** `host:port` actually bound. */
  address: string;
  url: string;
  close(): Promise<void>;
}

/** How the bound address is spelled in URLs and compared with Host headers: IPv6 in brackets. */
function formatAddress(host: string, port: number): string {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/**
 * Binds the app. `bind` receives the final address before the first request
 * is served, so the Host guard never sees a placeholder port.
 */
export async function startHttpHead(listen: string, build: (address: () => string) => HttpApp): Promise<HttpHead> {
  const parsed = parseListen(listen);
  if (parsed === undefined) {
    throw new AssentError('config_invalid', `web.listen "${listen}" is not host:port; set it to e.g. "127.0.0.1:7788" in config.json`);
  }
  const host = parsed.host.startsWith('[') ? parsed.host.slice(1, -1) : parsed.host;
  let address = formatAddress(host, parsed.port);
  const http = build(() => address);
  const server: Server = createServer(getRequestListener(http.app.fetch));
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(
        new AssentError(
          'unavailable',
          `The web page cannot listen on ${listen} (${error.code ?? error.message}); change web.listen in config.json (port 0 picks a free port) or stop what uses it.`,
          { cause: error, details: { listen } },
        ),
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
  return {
    address,
    url: `http://${address}/`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeStreams();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
