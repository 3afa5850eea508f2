// The `web` section of config.json (SPEC §12, §19): where the page listens, the
// https name a TLS reverse proxy serves it under, the other Host names it may
// answer to, its own TLS, and how long a remembered device stays signed in.
// Pure: the HTTP head applies these values, this module only judges them.
import { z } from 'zod';
import { escapedJson } from '../base/escape.js';

export const DEFAULT_WEB_LISTEN = '127.0.0.1:7788';
/** How long "remember this device" keeps a browser signed in (R-REM-3). */
export const DEFAULT_DEVICE_TTL_DAYS = 30;
export const MAX_DEVICE_TTL_DAYS = 365;

/** Splits "host:port" (IPv6 in brackets) into parts; undefined when malformed. */
export function parseListen(value: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > 65535) return undefined;
  return { host: match[1] ?? '', port };
}

/** 127.0.0.0/8, ::1 and localhost (brackets optional): the only hosts where plain HTTP stays on this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}

/** Whether a `host:port` listen address is on loopback. */
export function isLoopbackListen(listen: string): boolean {
  const parsed = parseListen(listen);
  return parsed !== undefined && isLoopbackHost(parsed.host);
}

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`);
const IPV6 = /^\[[0-9a-fA-F:.]{2,45}\]$/;

/** One `web.allowedHosts` entry (R-REM-7): a host name (any port) or `name:port` (that port only). */
export interface HostEntry {
  /** Lower case; IPv6 in brackets. */
  host: string;
  port?: number;
}

/** Parses an allowedHosts entry; undefined when it is neither `name` nor `name:port`. */
export function parseHostEntry(value: string): HostEntry | undefined {
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(value);
  if (match === null) return undefined;
  const host = (match[1] ?? '').toLowerCase();
  if (!HOST_NAME.test(host) && !IPV6.test(host)) return undefined;
  if (match[2] === undefined) return { host };
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host, port };
}

/**
 * The parts of `web.publicUrl` the guards use, or undefined when it is not an
 * https URL of a site root: the page loads its script and API from absolute
 * paths, so a proxy must serve it at `/`.
 */
export function parsePublicUrl(value: string): { origin: string; host: string; hostname: string; url: string } | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || url.pathname !== '/') return undefined;
  if (value.includes('?') || value.includes('#')) return undefined;
  return { origin: url.origin, host: url.host, hostname: url.hostname, url: `${url.origin}/` };
}

const LISTEN_ALLOWED = 'a "host:port" string with a port from 0 to 65535, e.g. "127.0.0.1:7788"';
const PUBLIC_URL_ALLOWED =
  'the https:// URL a TLS reverse proxy serves the page at, a site root without path, query or fragment, e.g. "https://laptop.example.ts.net/"';
const HOSTS_ALLOWED = 'an array of host names ("laptop.example.ts.net", any port) or "name:port" entries (that port only)';
const TLS_ALLOWED = '"self-signed" (assent makes and keeps a certificate) or {"cert": "/absolute/cert.pem", "key": "/absolute/key.pem"}';

/** "got a string (…)" for a refinement's message: the value's type and a short, escaped rendering (R-CFG-1). */
function gotString(value: unknown, allowed: string): string {
  const text = String(value);
  return `got a string (${escapedJson(text.length > 60 ? `${text.slice(0, 60)}…` : text)}); expected ${allowed}`;
}

const absolutePath = (what: string): z.ZodString =>
  z.string({ error: `an absolute path to the ${what} (PEM)` }).refine((value) => value.startsWith('/'), { error: (issue) => gotString(issue.input, `an absolute path to the ${what} (PEM)`) });

export const TlsFilesSchema = z.strictObject({ cert: absolutePath('certificate'), key: absolutePath('private key') }, { error: TLS_ALLOWED });
export const WebTlsSchema = z.union([z.literal('self-signed'), TlsFilesSchema], { error: TLS_ALLOWED });
export type WebTls = z.infer<typeof WebTlsSchema>;

export const WebSchema = z
  .object(
    {
      listen: z
        .string({ error: LISTEN_ALLOWED })
        .refine((value) => parseListen(value) !== undefined, { error: (issue) => gotString(issue.input, LISTEN_ALLOWED) })
        .default(DEFAULT_WEB_LISTEN),
      /** R-REM-1: the page as a TLS reverse proxy serves it; its host joins the Host and Origin guards, cookies become Secure. */
      publicUrl: z
        .string({ error: PUBLIC_URL_ALLOWED })
        .refine((value) => parsePublicUrl(value) !== undefined, { error: (issue) => gotString(issue.input, PUBLIC_URL_ALLOWED) })
        .optional(),
      /** R-REM-7: more Host names the page answers to (https origins only, except loopback names). */
      allowedHosts: z
        .array(z.string({ error: HOSTS_ALLOWED }).refine((value) => parseHostEntry(value) !== undefined, { error: (issue) => gotString(issue.input, 'a host name (any port) or "name:port" (that port only)') }), { error: HOSTS_ALLOWED })
        .max(64, { error: 'at most 64 entries' })
        .default([]),
      /** R-REM-2: TLS served by the daemon itself, required when `listen` is not loopback. */
      tls: WebTlsSchema.optional(),
      /** R-REM-3: lifetime of a device paired with "remember this device". */
      deviceTtlDays: z
        .number({ error: `an integer from 1 to ${MAX_DEVICE_TTL_DAYS}` })
        .int({ error: `an integer from 1 to ${MAX_DEVICE_TTL_DAYS}` })
        .min(1, { error: `an integer from 1 to ${MAX_DEVICE_TTL_DAYS}` })
        .max(MAX_DEVICE_TTL_DAYS, { error: `an integer from 1 to ${MAX_DEVICE_TTL_DAYS}` })
        .default(DEFAULT_DEVICE_TTL_DAYS),
    },
    { error: 'an object with "listen", "publicUrl", "allowedHosts", "tls" and "deviceTtlDays"' },
  )
  .superRefine((web, ctx) => {
    // R-REM-2: plain HTTP is served only on loopback; elsewhere cookies and tokens would cross the network in clear.
    if (web.tls === undefined && parseListen(web.listen) !== undefined && !isLoopbackListen(web.listen)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tls'],
        message:
          `web.listen ${JSON.stringify(web.listen)} is not a loopback address, and plain HTTP is served only on loopback (session cookies would cross the network in clear); ` +
          'set web.tls to "self-signed" or to {"cert", "key"} files, or listen on 127.0.0.1 behind a TLS reverse proxy (web.publicUrl); see docs/remote.md',
      });
    }
  });
export type WebConfig = z.infer<typeof WebSchema>;

function describeTls(tls: WebTls | undefined): string {
  if (tls === undefined) return '(unset)';
  return typeof tls === 'string' ? escapedJson(tls) : `{cert ${escapedJson(tls.cert)}, key ${escapedJson(tls.key)}}`;
}

/**
 * Lines for the reload review (R-CFG-4): a new public name or allowed host
 * widens who can reach the page, so the operator sees it before confirming.
 * Values are escaped JSON (R-TTY-3): the file may have been written by an agent.
 */
export function diffWebConfig(a: WebConfig, b: WebConfig): string[] {
  const lines: string[] = [];
  const scalar = (key: string, x: string, y: string): void => {
    if (x !== y) lines.push(`web.${key}: ${x} → ${y}`);
  };
  scalar('listen', escapedJson(a.listen), escapedJson(b.listen));
  scalar('publicUrl', a.publicUrl === undefined ? '(unset)' : escapedJson(a.publicUrl), b.publicUrl === undefined ? '(unset)' : escapedJson(b.publicUrl));
  for (const host of b.allowedHosts.filter((entry) => !a.allowedHosts.includes(entry))) lines.push(`web.allowedHosts: added ${escapedJson(host)}`);
  for (const host of a.allowedHosts.filter((entry) => !b.allowedHosts.includes(entry))) lines.push(`web.allowedHosts: removed ${escapedJson(host)}`);
  scalar('tls', describeTls(a.tls), describeTls(b.tls));
  scalar('deviceTtlDays', String(a.deviceTtlDays), String(b.deviceTtlDays));
  return lines;
}
