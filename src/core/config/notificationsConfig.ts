// The `notifications` section of config.json (R-D-10, R-REM-4, R-REM-7): the OS
// notification, an ntfy topic and a webhook. `true`/`false` is shorthand for
// `{os: true|false}`. Pure: the notifiers send, this module only judges values.
import { z } from 'zod';
import { escapeText } from '../base/escape.js';
import { isLoopbackHost } from './webConfig.js';

const HTTP_URL = 'an http:// or https:// URL, e.g. "https://ntfy.sh"';

function parseHttpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

const httpUrl = z.string({ error: HTTP_URL }).refine((value) => parseHttpUrl(value) !== undefined, { error: HTTP_URL });

export const NtfyTargetSchema = z
  .object(
    {
      /** The ntfy server's root; the message is published as JSON to it (the topic goes in the body). */
      url: httpUrl,
      topic: z
        .string({ error: 'a topic name: 1-64 letters, digits, "_" or "-"' })
        .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'a topic name: 1-64 letters, digits, "_" or "-"' }),
      /** A file holding an ntfy access token, sent as `Authorization: Bearer`; read at each push, never logged. */
      tokenFile: z.string({ error: 'an absolute file path' }).min(1, { error: 'an absolute file path' }).optional(),
    },
    { error: 'an object with "url" and "topic" (and optionally "tokenFile")' },
  )
  .superRefine((target, ctx) => {
    const url = parseHttpUrl(target.url);
    if (target.tokenFile !== undefined && url !== undefined && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: 'a plain http:// URL off this machine would carry the ntfy token from "tokenFile" in clear; use an https:// URL',
      });
    }
  });
export type NtfyTarget = z.infer<typeof NtfyTargetSchema>;

export const WebhookTargetSchema = z.object(
  {
    url: httpUrl,
    /** `json`: assent's own JSON document; `slack`: a Slack-compatible `{text}` message. */
    format: z.enum(['json', 'slack'], { error: '"json" or "slack"' }).default('json'),
  },
  { error: 'an object with "url" and "format" ("json" or "slack")' },
);
export type WebhookTarget = z.infer<typeof WebhookTargetSchema>;

const NOTIFICATIONS_ALLOWED = 'true or false, or an object with "os", "ntfy" and "webhook"';

export const NotificationsSchema = z
  .preprocess(
    (value) => (typeof value === 'boolean' ? { os: value } : value),
    z.object(
      {
        os: z.boolean({ error: 'true or false' }).default(true),
        ntfy: NtfyTargetSchema.optional(),
        webhook: WebhookTargetSchema.optional(),
      },
      { error: NOTIFICATIONS_ALLOWED },
    ),
  )
  .prefault(true);
export type NotificationsConfig = z.infer<typeof NotificationsSchema>;

/** The push targets configured, by name, in the order they are announced to. */
export function pushTargetsOf(config: NotificationsConfig): { ntfy?: NtfyTarget; webhook?: WebhookTarget } {
  const targets: { ntfy?: NtfyTarget; webhook?: WebhookTarget } = {};
  if (config.ntfy !== undefined) targets.ntfy = config.ntfy;
  if (config.webhook !== undefined) targets.webhook = config.webhook;
  return targets;
}

/** A URL as a reload diff may show it: scheme and host only, since a webhook's path is often its secret. */
function originOf(value: string): string {
  const url = parseHttpUrl(value);
  return url === undefined ? '(invalid URL)' : escapeText(url.origin);
}

/**
 * Reload diff lines for `notifications` (R-CFG-4). The ntfy topic (which is
 * the topic's password on a public server) and a webhook URL's path and query
 * are never shown, only that they changed.
 */
export function diffNotifications(a: NotificationsConfig, b: NotificationsConfig): string[] {
  const lines: string[] = [];
  if (a.os !== b.os) lines.push(`notifications.os: ${a.os} → ${b.os}`);
  const target = (name: 'ntfy' | 'webhook', before: NtfyTarget | WebhookTarget | undefined, after: NtfyTarget | WebhookTarget | undefined): void => {
    if (before === undefined && after === undefined) return;
    if (before === undefined && after !== undefined) lines.push(`notifications.${name}: added (${originOf(after.url)})`);
    else if (before !== undefined && after === undefined) lines.push(`notifications.${name}: removed (was ${originOf(before.url)})`);
    else if (JSON.stringify(before) !== JSON.stringify(after)) {
      const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
      const changed = keys.filter((key) => (before as Record<string, unknown>)[key] !== (after as Record<string, unknown>)[key]);
      lines.push(`notifications.${name}: ${changed.join(', ')} changed (${originOf(before?.url ?? '')} → ${originOf(after?.url ?? '')})`);
    }
  };
  target('ntfy', a.ntfy, b.ntfy);
  target('webhook', a.webhook, b.webhook);
  return lines;
}
