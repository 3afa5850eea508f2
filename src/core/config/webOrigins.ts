// Which Host headers and Origins the HTTP head answers (R-WEB-1, R-REM-1,
// R-REM-7): the address it is bound to, the host of `web.publicUrl`, and the
// `web.allowedHosts` names — exactly those, never anything resolved or guessed.
// Pure: the head hands in its bound address and scheme.
import { parseHostEntry, parsePublicUrl, isLoopbackHost, type HostEntry, type WebConfig } from './webConfig.js';

export interface WebAccessOptions {
  /** `host:port` the head is bound to (IPv6 in brackets). */
  listenAddress: string;
  /** `https` when the daemon serves TLS itself (web.tls), else `http`. */
  scheme: 'http' | 'https';
  web: Pick<WebConfig, 'publicUrl' | 'allowedHosts'>;
  /**
   * More `host:port` spellings of the bound address, for a wildcard listen
   * (`0.0.0.0`, `[::]`): this machine's own interface addresses with the bound port.
   */
  ownAddresses?: readonly string[];
}

export interface WebAccess {
  /** The URL `assent web` prints and messages point to: `web.publicUrl`, else the bound address. */
  pageUrl: string;
  /** Whether a request with this Host header may be served at all (DNS-rebinding guard). */
  hostAllowed(host: string | undefined): boolean;
  /** Whether a request's Origin is the page's own, through any of the allowed names. */
  originAllowed(origin: string): boolean;
  /** Cookies get `Secure`: the page is reached over https (publicUrl or own TLS). */
  secureCookies: boolean;
}

const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** Host and port of a Host header or an origin's authority; the port is undefined when absent. */
function authority(value: string): HostEntry | undefined {
  return parseHostEntry(value);
}

function entryMatches(entry: HostEntry, candidate: HostEntry, defaultPort: number): boolean {
  if (entry.host !== candidate.host) return false;
  if (entry.port === undefined) return true;
  return (candidate.port ?? defaultPort) === entry.port;
}

export function webAccess(options: WebAccessOptions): WebAccess {
  const exact = new Set([options.listenAddress, ...(options.ownAddresses ?? [])].map((address) => address.toLowerCase()));
  const origins = new Set([...exact].map((address) => `${options.scheme}://${address}`));
  const publicUrl = options.web.publicUrl === undefined ? undefined : parsePublicUrl(options.web.publicUrl);
  const entries: HostEntry[] = [];
  if (publicUrl !== undefined) {
    origins.add(publicUrl.origin);
    const parsed = authority(publicUrl.host);
    if (parsed !== undefined) entries.push({ host: parsed.host, port: parsed.port ?? 443 });
  }
  for (const text of options.web.allowedHosts) {
    const parsed = parseHostEntry(text);
    if (parsed !== undefined) entries.push(parsed);
  }

  const hostAllowed = (host: string | undefined): boolean => {
    if (host === undefined) return false;
    if (exact.has(host.toLowerCase())) return true;
    const candidate = authority(host);
    // A Host without a port names the default port of the scheme the browser used: 443 for these names.
    return candidate !== undefined && entries.some((entry) => entryMatches(entry, candidate, 443));
  };

  const originAllowed = (origin: string): boolean => {
    if (origins.has(origin.toLowerCase())) return true;
    const match = /^(https?:)\/\/([^/]+)$/i.exec(origin);
    if (match === null) return false;
    const scheme = (match[1] ?? '').toLowerCase();
    const candidate = authority(match[2] ?? '');
    if (candidate === undefined) return false;
    // Plain http only from a loopback name: anything else would carry the cookie in clear (R-REM-1).
    if (scheme === 'http:' && !isLoopbackHost(candidate.host)) return false;
    return entries.some((entry) => entryMatches(entry, candidate, DEFAULT_PORT[scheme] ?? 443));
  };

  return {
    pageUrl: publicUrl?.url ?? `${options.scheme}://${options.listenAddress}/`,
    hostAllowed,
    originAllowed,
    secureCookies: options.scheme === 'https' || publicUrl !== undefined,
  };
}
