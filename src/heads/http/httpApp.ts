// The HTTP head as a Hono app built by a factory (tested with app.request(),
// listened on elsewhere): security headers, the DNS-rebinding and same-origin
// guards, pairing, the generated `POST /api/v1/<operation>` API, the SSE event
// stream and the static approval page (R-WEB-1..5). It owns no policy: every
// API call is an Operation with `exposure.http === true`. The names it answers
// to beyond its bound address come from web.publicUrl and web.allowedHosts
// (R-REM-1, core/config/webOrigins.ts).
import { isPlainObject } from '../../core/base/plainObject.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { streamSSE } from 'hono/streaming';
import { AssentError, toAssentError } from '../../core/base/errors.js';
import { JsonText } from '../../core/base/jsonText.js';
import type { WebConfig } from '../../core/config/webConfig.js';
import { webAccess, type WebAccess } from '../../core/config/webOrigins.js';
import type { CallContext, Operation } from '../../operations/operation.js';
import { EVENT_KINDS, type BusEvent, type EventBus, type EventKind } from '../../service/eventBus.js';
import type { Logger } from '../../service/logger.js';
import { SESSION_COOKIE, type WebAuth } from '../../service/webAuth.js';
import { errorBody, httpStatusOf, loggablePath, MAX_BODY_BYTES, SECURITY_HEADERS } from './httpBasics.js';

export { CONTENT_SECURITY_POLICY, errorBody, loggablePath, MAX_BODY_BYTES, SECURITY_HEADERS } from './httpBasics.js';

export interface HttpAppOptions {
  /** The registry; read on every call. */
  operations(): readonly Operation[];
  auth: WebAuth;
  bus: EventBus;
  /** `host:port` the head listens on; accepted as Host header (DNS-rebinding guard) with the names of `web`. */
  listenAddress(): string;
  /** The names the page is also reached by (R-REM-1); read on every request, so a confirmed reload applies. */
  web?(): Pick<WebConfig, 'publicUrl' | 'allowedHosts'>;
  /** `https` when this head serves TLS itself (web.tls). */
  scheme?: 'http' | 'https';
  /** For a wildcard listen: this machine's addresses as `host:port`, accepted like the bound address. */
  ownAddresses?(): readonly string[];
  logger: Logger;
  /** Directory holding index.html, app.js and app.css. */
  webRoot: string;
  /** Same filtering as events.subscribe. */
  eventMatches(event: BusEvent, kinds: readonly string[] | undefined, selector: string | undefined): boolean;
  /**
   * `/metrics` (R-AUD-6): the OpenMetrics text, and whether it is served without a bearer token
   * (only when the head listens on loopback and no proxy fronts it, since a proxy's requests come from loopback too).
   */
  metrics?: { render(): Promise<string>; contentType: string; open(): boolean };
  /** Interval of SSE keep-alive comments. */
  keepAliveMs?: number;
  monotonic?: () => number;
  /** Told which connections carry a signed-in request or an event stream, so a flood of others cannot crowd them out (issue 19 item 7). */
  connections?: { authenticated(incoming: unknown): void; streaming(incoming: unknown): boolean };
}

/** The Node request behind a Hono context, when served by @hono/node-server. */
function incomingOf(c: Context): unknown {
  return (c.env as { incoming?: unknown } | undefined)?.incoming;
}

export interface HttpApp {
  app: Hono;
  /** Ends every open event stream so the server can close. */
  closeStreams(): void;
  openStreams(): number;
}

const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/approvalView.js': { file: 'approvalView.js', type: 'text/javascript; charset=utf-8' },
  // Installable on a phone (R-REM-5): the web app manifest and its icons.
  '/manifest.webmanifest': { file: 'manifest.webmanifest', type: 'application/manifest+json; charset=utf-8' },
  '/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
  '/icon-pending.svg': { file: 'icon-pending.svg', type: 'image/svg+xml' },
  '/icon-192.png': { file: 'icon-192.png', type: 'image/png' },
  '/icon-512.png': { file: 'icon-512.png', type: 'image/png' },
  '/apple-touch-icon.png': { file: 'apple-touch-icon.png', type: 'image/png' },
  '/passkeys.js': { file: 'passkeys.js', type: 'text/javascript; charset=utf-8' },
};

/** Fields of an event that only the 0600 socket carries (R-D-9); the page fetches them with approvals.list. */
const PRIVATE_EVENT_FIELDS = ['args', 'action'];

function publicEvent(event: BusEvent): BusEvent {
  const data: Record<string, unknown> = { ...event.data };
  for (const field of PRIVATE_EVENT_FIELDS) delete data[field];
  const approval = data['approval'];
  if (isPlainObject(approval)) {
    const copy = { ...approval };
    for (const field of PRIVATE_EVENT_FIELDS) delete copy[field];
    data['approval'] = copy;
  }
  return { ...event, data };
}

interface Caller {
  principal: string;
  kind: 'session' | 'token';
  /** `session:<device id>` or `token:<token id>`: what WebAuth names when that credential ends early. */
  key: string;
}

const NO_EXTRA_NAMES: Pick<WebConfig, 'publicUrl' | 'allowedHosts'> = Object.freeze({ allowedHosts: [] });

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Hono();
  const monotonic = options.monotonic ?? (() => performance.now());
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  /** Open event streams: how to end each, and whose credential it runs on. */
  const streams = new Map<() => void, string>();
  const staticCache = new Map<string, Uint8Array<ArrayBuffer>>();
  let cachedAccess: { listen: string; web: object; own: readonly string[]; access: WebAccess } | undefined;
  const access = (): WebAccess => {
    const listen = options.listenAddress();
    const web = options.web?.() ?? NO_EXTRA_NAMES;
    const own = options.ownAddresses?.() ?? [];
    if (cachedAccess?.listen !== listen || cachedAccess.web !== web || cachedAccess.own !== own) {
      cachedAccess = { listen, web, own, access: webAccess({ listenAddress: listen, scheme: options.scheme ?? 'http', web, ownAddresses: own }) };
    }
    return cachedAccess.access;
  };
  /** The page's URL as `assent web` prints it, for messages. */
  const pageUrl = (): string => access().pageUrl;
  // A revoked device or token loses its open event streams at once (R-REM-3), not at its next event.
  options.auth.onCredentialEnded((key) => {
    for (const [close, owner] of [...streams]) if (owner === key) close();
  });

  // Bytes, not text: the icons are PNG.
  const readStatic = (file: string): Uint8Array<ArrayBuffer> => {
    const cached = staticCache.get(file);
    if (cached !== undefined) return cached;
    const bytes = new Uint8Array(readFileSync(join(options.webRoot, file)));
    staticCache.set(file, bytes);
    return bytes;
  };

  const fail = (c: Context, error: AssentError): Response => {
    const retryAfterMs = error.details?.['retryAfterMs'];
    if (typeof retryAfterMs === 'number') c.header('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    return c.json(errorBody(error), httpStatusOf(error) as 400);
  };

  // Headers on every response, refusals included; access log without headers, cookies or query.
  app.use('*', async (c, next) => {
    const started = monotonic();
    await next();
    const caller = (c.get('callerKind' as never) as string | undefined) ?? 'none';
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
    options.logger.info('http request', {
      method: c.req.method,
      path: loggablePath(c.req.path),
      status: c.res.status,
      ms: Math.round((monotonic() - started) * 10) / 10,
      caller,
    });
  });

  // DNS-rebinding guard (R-WEB-1): a page on another name that resolves to us is refused.
  app.use('*', async (c, next) => {
    if (!access().hostAllowed(c.req.header('host'))) {
      return fail(
        c,
        new AssentError(
          'forbidden',
          `The Host header does not name this server; open the page at ${pageUrl()} exactly as \`assent web\` prints it (other names must be listed in web.allowedHosts).`,
        ),
      );
    }
    await next();
    return undefined;
  });

  // Credentials never travel in a URL (R-J-7): the API takes no query string, except the event filter.
  app.use('/api/*', async (c, next) => {
    const url = new URL(c.req.url);
    const allowed = c.req.method === 'GET' && c.req.path === '/api/v1/events' ? ['kinds', 'selector'] : [];
    for (const key of url.searchParams.keys()) {
      if (!allowed.includes(key)) {
        return fail(
          c,
          new AssentError('invalid_params', 'This API takes no query parameters: send parameters in the JSON body and credentials in the Authorization header or session cookie. Nothing was done.'),
        );
      }
    }
    const site = c.req.header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') {
      return fail(c, new AssentError('forbidden', `A ${site} request to the assent API is refused; use the page served at ${pageUrl()}.`));
    }
    const requestOrigin = c.req.header('origin');
    if (requestOrigin !== undefined && !access().originAllowed(requestOrigin)) {
      return fail(c, new AssentError('forbidden', `Requests from another origin are refused; use the page served at ${pageUrl()}.`));
    }
    await next();
    return undefined;
  });

  const authenticate = async (c: Context): Promise<Caller | undefined> => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      const record = match?.[1] === undefined ? undefined : await options.auth.authenticateToken(match[1]);
      return record === undefined ? undefined : { principal: `token:${record.name}`, kind: 'token', key: `token:${record.id}` };
    }
    const session = options.auth.sessionFor(getCookie(c, SESSION_COOKIE));
    if (session === undefined) return undefined;
    return { principal: `web:${session.label}`, kind: 'session', key: `session:${session.id}` };
  };

  const requireCaller = async (c: Context, mutation: boolean): Promise<Caller> => {
    const caller = await authenticate(c);
    if (caller === undefined) {
      throw new AssentError(
        'unauthorized',
        'Not signed in, or the session or token is unknown, expired or revoked. Pair the page with a code from `assent web`, or send a valid token as "Authorization: Bearer …" (see `assent token create`).',
      );
    }
    options.connections?.authenticated(incomingOf(c));
    // A browser always sends Origin on a POST; a cookie without one is not the page talking.
    if (mutation && caller.kind === 'session' && c.req.header('origin') === undefined) {
      throw new AssentError('forbidden', `A request carrying the session cookie must come from the page at ${pageUrl()} (Origin header missing).`);
    }
    c.set('callerKind' as never, caller.kind as never);
    return caller;
  };

  const readJsonBody = async (c: Context): Promise<Record<string, unknown>> => {
    const type = c.req.header('content-type') ?? '';
    if (!/^application\/json(\s*;|$)/i.test(type)) {
      throw new AssentError('invalid_params', 'Send the parameters as a JSON object with "Content-Type: application/json".');
    }
    const declared = Number(c.req.header('content-length') ?? '0');
    if (declared > MAX_BODY_BYTES) throw new AssentError('frame_too_large', `The body exceeds ${MAX_BODY_BYTES} bytes; send less.`);
    const text = await c.req.text();
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new AssentError('frame_too_large', `The body exceeds ${MAX_BODY_BYTES} bytes; send less.`);
    let body: unknown;
    try {
      body = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      throw new AssentError('parse_error', 'The body is not valid JSON; send a flat JSON object of the operation\'s parameters.');
    }
    if (!isPlainObject(body)) throw new AssentError('invalid_params', 'The body must be a JSON object of named parameters.');
    return body;
  };

  app.post('/api/v1/pair', async (c) => {
    if (c.req.header('origin') === undefined) {
      throw new AssentError('forbidden', `Pairing is done by the page at ${pageUrl()} (Origin header missing).`);
    }
    const body = await readJsonBody(c);
    const keys = Object.keys(body);
    const remember = body['remember'];
    if (
      keys.some((key) => key !== 'code' && key !== 'remember') ||
      typeof body['code'] !== 'string' ||
      body['code'].length > 64 ||
      (remember !== undefined && typeof remember !== 'boolean')
    ) {
      throw new AssentError('invalid_params', 'Send {"code": "<the 8-character pairing code>"} and, to stay signed in across restarts, "remember": true; nothing else.');
    }
    const { cookie, session } = options.auth.redeemPairingCode(body['code'], { remember: remember === true, userAgent: c.req.header('user-agent') });
    setCookie(c, SESSION_COOKIE, cookie, {
      httpOnly: true,
      secure: access().secureCookies,
      sameSite: 'Strict',
      path: '/',
      maxAge: Math.max(1, Math.floor((session.expiresAt - session.createdAt) / 1000)),
    });
    options.logger.info('web session paired', { session: session.label, remembered: session.remembered });
    c.set('callerKind' as never, 'session' as never);
    return c.json({ paired: true, expiresAt: session.expiresAt, device: session.id, remembered: session.remembered });
  });

  app.post('/api/v1/logout', (c) => {
    options.auth.endSession(getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: access().secureCookies });
    return c.json({ paired: false });
  });

  app.get('/api/v1/events', async (c) => {
    const caller = await requireCaller(c, false);
    const kindsText = c.req.query('kinds');
    const selector = c.req.query('selector');
    let kinds: EventKind[] | undefined;
    if (kindsText !== undefined) {
      const parts = kindsText.split(',').filter((part) => part !== '');
      const unknown = parts.filter((part) => !(EVENT_KINDS as readonly string[]).includes(part));
      if (unknown.length > 0) throw new AssentError('invalid_params', `Unknown event kinds: ${unknown.join(', ')}. Known: ${EVENT_KINDS.join(', ')}.`);
      kinds = parts as EventKind[];
    }
    if (selector !== undefined && selector.length > 400) throw new AssentError('invalid_params', 'The selector is longer than 400 characters.');
    if (options.connections !== undefined && !options.connections.streaming(incomingOf(c))) {
      throw new AssentError('unavailable', 'Too many event streams are open on this daemon; close another page or script that follows events, then retry.');
    }
    return streamSSE(c, async (stream) => {
      let chain: Promise<unknown> = stream.writeSSE({ event: 'ready', data: '{}' });
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => {
        finish = resolve;
      });
      // A stream lives on after the request that opened it: a revoked or expired token or
      // session must end it, not keep receiving events (checked before every write).
      const stillAllowed = async (): Promise<boolean> => {
        if ((await authenticate(c)) !== undefined) return true;
        finish();
        return false;
      };
      const unsubscribe = options.bus.subscribe((event) => {
        if (!options.eventMatches(event, kinds, selector)) return;
        const message = { event: event.kind, id: String(event.seq), data: JSON.stringify(publicEvent(event)) };
        chain = chain
          .then(async () => {
            if (await stillAllowed()) await stream.writeSSE(message);
          })
          .catch(() => finish());
      });
      const timer = setInterval(() => {
        chain = chain
          .then(async () => {
            if (await stillAllowed()) await stream.write(': keep-alive\n\n');
          })
          .catch(() => finish());
      }, keepAliveMs);
      const close = (): void => finish();
      streams.set(close, caller.key);
      stream.onAbort(close);
      await done;
      streams.delete(close);
      clearInterval(timer);
      unsubscribe();
      await chain.catch(() => undefined);
    });
  });

  app.post('/api/v1/:operation', async (c) => {
    const name = c.req.param('operation');
    const caller = await requireCaller(c, true);
    const operation = options.operations().find((candidate) => candidate.name === name);
    if (operation === undefined || operation.exposure.http !== true) {
      const shown = /^[a-z]+\.[a-zA-Z]+$/.test(name) ? JSON.stringify(name) : 'by that name';
      throw new AssentError('not_found', `The HTTP API has no operation ${shown}. The list is in \`assent operations --json\` (those with exposure.http true).`);
    }
    const body = await readJsonBody(c);
    if (Object.prototype.hasOwnProperty.call(body, 'channel')) {
      throw new AssentError('invalid_params', 'The "channel" parameter is set by the head (web) and cannot be sent over HTTP; remove it.');
    }
    const parsed = operation.params.safeParse(body);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 20).map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
      throw new AssentError('invalid_params', `Invalid parameters for ${name}: ${issues.join('; ')}. Nothing was done.`);
    }
    const context: CallContext = { principal: caller.principal, head: 'http', channel: 'web', signal: c.req.raw.signal };
    const result: unknown = await operation.handler(parsed.data, context);
    if (result instanceof JsonText) return c.body(result.text, 200, { 'Content-Type': 'application/json; charset=UTF-8' });
    return c.json(result ?? null);
  });

  app.all('/api/*', (c) => fail(c, new AssentError('not_found', 'Unknown API route. Operations are POST /api/v1/<operation name>; events are GET /api/v1/events.')));

  app.get('/metrics', async (c) => {
    const metrics = options.metrics;
    if (metrics === undefined) return fail(c, new AssentError('not_found', 'This daemon serves no metrics.'));
    if (!metrics.open()) {
      const authorization = c.req.header('authorization');
      const match = authorization === undefined ? null : /^Bearer\s+(\S+)$/i.exec(authorization);
      const record = match?.[1] === undefined ? undefined : await options.auth.authenticateToken(match[1]);
      if (record === undefined) {
        return fail(c, new AssentError('unauthorized', 'This head is reachable off this machine, so /metrics needs "Authorization: Bearer <token>" (create one with `assent token create --name metrics --out FILE`).'));
      }
      c.set('callerKind' as never, 'token' as never);
    }
    return c.body(await metrics.render(), 200, { 'Content-Type': metrics.contentType });
  });

  app.get('*', (c) => {
    const entry = STATIC_FILES[c.req.path];
    if (entry === undefined) return fail(c, new AssentError('not_found', `Nothing at ${loggablePath(c.req.path)}; the approval page is at ${pageUrl()}.`));
    return c.body(readStatic(entry.file), 200, { 'Content-Type': entry.type });
  });

  app.onError((error, c) => {
    const typed = toAssentError(error);
    if (!(error instanceof AssentError)) {
      options.logger.error('http handler failed', { path: loggablePath(c.req.path), error: typed.message });
      return fail(c, new AssentError('internal', 'The daemon failed while answering; details are in daemon.log.'));
    }
    return fail(c, typed);
  });

  return {
    app,
    closeStreams: () => {
      for (const close of [...streams.keys()]) close();
    },
    openStreams: () => streams.size,
  };
}
