// The `audit.export` section of config.json (R-AUD-4): where audit lines are
// sent besides the day files. Pure: the sinks send, this module only judges
// values, names each sink and says what of it may be shown (never a secret).
import { z } from 'zod';
import { escapeText } from '../base/escape.js';

const ABSOLUTE = 'an absolute file path';
const absolutePath = z.string({ error: ABSOLUTE }).refine((value) => value.startsWith('/') && !value.includes('\0'), { error: ABSOLUTE });
const SINK_NAME = 'a sink name: 1-64 letters, digits, "_", "." or "-"';
const sinkName = z.string({ error: SINK_NAME }).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, { error: SINK_NAME });
const port = z.number({ error: 'a port from 1 to 65535' }).int({ error: 'a port from 1 to 65535' }).min(1, { error: 'a port from 1 to 65535' }).max(65535, { error: 'a port from 1 to 65535' });

/** Syslog facilities by name (RFC 5424 §6.2.1); assent's decisions are security records, so `authpriv` by default. */
export const SYSLOG_FACILITIES = {
  kern: 0, user: 1, mail: 2, daemon: 3, auth: 4, syslog: 5, lpr: 6, news: 7, uucp: 8, cron: 9, authpriv: 10, ftp: 11,
  local0: 16, local1: 17, local2: 18, local3: 19, local4: 20, local5: 21, local6: 22, local7: 23,
} as const;
export type SyslogFacility = keyof typeof SYSLOG_FACILITIES;
const facility = z.enum(Object.keys(SYSLOG_FACILITIES) as [SyslogFacility, ...SyslogFacility[]], { error: 'a syslog facility name such as "authpriv" or "local0"' });

/** What every sink shares: its name (the key of its cursor) and how far it may fall behind before it says so. */
const common = {
  name: sinkName.optional(),
  /** Records not yet delivered beyond which the sink reports `lagging` in daemon status and the log (R-AUD-5); nothing is dropped. */
  maxLag: z.number({ error: 'an integer from 1 to 10000000' }).int().min(1).max(10_000_000).default(10_000),
  /** Records per delivery. */
  batchSize: z.number({ error: 'an integer from 1 to 1000' }).int().min(1).max(1000).default(100),
};

/** A syslog destination: UDP, TCP or TLS (RFC 5425 octet-counted framing), or a Unix stream socket. */
const syslogTarget = {
  transport: z.enum(['udp', 'tcp', 'tls', 'unix'], { error: '"udp", "tcp", "tls" or "unix"' }),
  host: z.string({ error: 'a host name or address' }).min(1).optional(),
  port: port.optional(),
  /** The Unix stream socket (transport "unix"). */
  path: absolutePath.optional(),
  /** PEM file of the CA that signed the receiver's certificate (transport "tls"); the system's CAs otherwise. */
  ca: absolutePath.optional(),
  facility: facility.default('authpriv'),
  appName: z.string().regex(/^[\x21-\x7e]{1,48}$/, { error: '1-48 printable ASCII characters without spaces' }).default('assent'),
};

function checkSyslogTarget(target: { transport?: string; host?: string | undefined; port?: number | undefined; path?: string | undefined; ca?: string | undefined }, ctx: z.RefinementCtx): void {
  if (target.transport === 'unix') {
    if (target.path === undefined) ctx.addIssue({ code: 'custom', path: ['path'], message: 'transport "unix" needs "path", the receiver\'s Unix stream socket' });
    if (target.host !== undefined || target.port !== undefined) ctx.addIssue({ code: 'custom', message: '"host" and "port" do not apply to transport "unix"; remove them' });
  } else {
    if (target.host === undefined || target.port === undefined) ctx.addIssue({ code: 'custom', message: `transport ${JSON.stringify(target.transport)} needs "host" and "port"` });
    if (target.path !== undefined) ctx.addIssue({ code: 'custom', path: ['path'], message: '"path" applies only to transport "unix"' });
  }
  if (target.ca !== undefined && target.transport !== 'tls') ctx.addIssue({ code: 'custom', path: ['ca'], message: '"ca" applies only to transport "tls"' });
}

export const SyslogSinkSchema = z.object({ kind: z.literal('syslog'), ...common, ...syslogTarget }).superRefine(checkSyslogTarget);

/** CEF (ArcSight Common Event Format): to a 0600 file, or carried as the message of an RFC 5424 line. */
export const CefSinkSchema = z
  .object({
    kind: z.literal('cef'),
    ...common,
    file: absolutePath.optional(),
    transport: syslogTarget.transport.optional(),
    host: syslogTarget.host,
    port: syslogTarget.port,
    path: syslogTarget.path,
    ca: syslogTarget.ca,
    facility: syslogTarget.facility,
    appName: syslogTarget.appName,
  })
  .superRefine((sink, ctx) => {
    if ((sink.file === undefined) === (sink.transport === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a "cef" sink needs exactly one of "file" (an absolute path, written 0600) or "transport" (syslog: "udp", "tcp", "tls" or "unix")' });
      return;
    }
    if (sink.transport !== undefined) checkSyslogTarget(sink, ctx);
  });

const HTTP_URL = 'an http:// or https:// URL';
function httpUrlOf(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** OpenTelemetry logs over OTLP/HTTP (protobuf), sent with the OpenTelemetry SDK's own exporter. */
export const OtlpSinkSchema = z
  .object({
    kind: z.literal('otlp'),
    ...common,
    /** The logs endpoint, e.g. "http://127.0.0.1:4318/v1/logs". */
    url: z.string({ error: HTTP_URL }).refine((value) => httpUrlOf(value) !== undefined, { error: HTTP_URL }),
    /** Sent with each request (an API key, say); every value counts as a secret and is never shown. */
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, { error: 'a header name' }), z.string({ error: 'a string' })).default({}),
    /** `service.name` of the exported resource. */
    serviceName: z.string().min(1).max(100).default('assent'),
  });

/** NDJSON batches over HTTPS, each body signed with HMAC-SHA256 under the key in `secretFile`. */
export const WebhookSinkSchema = z
  .object({
    kind: z.literal('webhook'),
    ...common,
    url: z.string({ error: 'an https:// URL' }).refine((value) => httpUrlOf(value)?.protocol === 'https:', { error: 'an https:// URL (the batches carry the HMAC signature; plain http is refused)' }),
    /** A 0600 file holding the HMAC key (at least 32 bytes of text); read when the daemon starts, never shown. */
    secretFile: absolutePath,
    /** PEM file of the CA that signed the receiver's certificate; the system's CAs otherwise. */
    ca: absolutePath.optional(),
  });

export const ExportSinkSchema = z.discriminatedUnion('kind', [SyslogSinkSchema, CefSinkSchema, OtlpSinkSchema, WebhookSinkSchema], {
  error: 'an object whose "kind" is "syslog", "cef", "otlp" or "webhook"',
});
export type ExportSink = z.infer<typeof ExportSinkSchema>;
export type SyslogSink = z.infer<typeof SyslogSinkSchema>;
export type CefSink = z.infer<typeof CefSinkSchema>;
export type OtlpSink = z.infer<typeof OtlpSinkSchema>;
export type WebhookSink = z.infer<typeof WebhookSinkSchema>;

export const AuditSchema = z
  .object(
    {
      export: z
        .array(ExportSinkSchema, { error: 'an array of sinks' })
        .max(16, { error: 'at most 16 sinks' })
        .default([])
        .superRefine((sinks, ctx) => {
          const seen = new Set<string>();
          sinks.forEach((sink, index) => {
            const name = sinkNameOf(sink, index);
            if (seen.has(name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `the sink name ${JSON.stringify(name)} is used twice; each sink keeps its own cursor, so names must differ` });
            seen.add(name);
          });
        }),
    },
    { error: 'an object with "export"' },
  );
export type AuditConfig = z.infer<typeof AuditSchema>;

/** The key of a sink's cursor: its `name`, else `<kind>-<position>`; renaming a sink starts it from the beginning of the files. */
export function sinkNameOf(sink: Pick<ExportSink, 'kind' | 'name'>, index: number): string {
  return sink.name ?? `${sink.kind}-${index + 1}`;
}

/** Where a sink sends, as it may be shown (status, logs, diffs): no header value, no key, no URL userinfo or query. */
export function describeSink(sink: ExportSink): string {
  switch (sink.kind) {
    case 'syslog':
      return `syslog ${targetOf(sink)}`;
    case 'cef':
      return sink.file !== undefined ? `cef file ${escapeText(sink.file)}` : `cef over syslog ${targetOf(sink)}`;
    case 'otlp': {
      const names = Object.keys(sink.headers).sort();
      return `otlp ${originAndPath(sink.url)}${names.length === 0 ? '' : ` (headers ${names.map(escapeText).join(', ')}: values hidden)`}`;
    }
    case 'webhook':
      return `webhook ${originAndPath(sink.url)} (HMAC key from ${escapeText(sink.secretFile)})`;
  }
}

function targetOf(sink: { transport?: string | undefined; host?: string | undefined; port?: number | undefined; path?: string | undefined }): string {
  return sink.transport === 'unix' ? `unix ${escapeText(sink.path ?? '')}` : `${sink.transport ?? ''} ${escapeText(sink.host ?? '')}:${sink.port ?? ''}`;
}

function originAndPath(value: string): string {
  const url = httpUrlOf(value);
  return url === undefined ? '(invalid URL)' : escapeText(`${url.protocol}//${url.host}${url.pathname}`);
}

/** R-CFG-4 diff lines for `audit.export`: sinks added, removed or changed, named and described without secrets. */
export function diffAuditExport(a: AuditConfig, b: AuditConfig): string[] {
  const named = (config: AuditConfig): Map<string, ExportSink> => new Map(config.export.map((sink, index) => [sinkNameOf(sink, index), sink]));
  const before = named(a);
  const after = named(b);
  const lines: string[] = [];
  for (const name of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const x = before.get(name);
    const y = after.get(name);
    const key = `audit.export.${escapeText(name)}`;
    if (x === undefined && y !== undefined) lines.push(`${key}: added (${describeSink(y)})`);
    else if (x !== undefined && y === undefined) lines.push(`${key}: removed (was ${describeSink(x)})`);
    else if (x !== undefined && y !== undefined && JSON.stringify(x) !== JSON.stringify(y)) lines.push(`${key}: changed (${describeSink(x)} → ${describeSink(y)})`);
  }
  return lines;
}

/** The secret values a sink holds in the configuration itself (header values), for the logger's last-line masking. */
export function sinkSecrets(sink: ExportSink): string[] {
  return sink.kind === 'otlp' ? Object.values(sink.headers).filter((value) => value.length >= 4) : [];
}
