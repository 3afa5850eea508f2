// The webhook sink (R-AUD-4): NDJSON batches POSTed over HTTPS, one exported
// record per line, signed with HMAC-SHA256 under the key in `secretFile`. The
// signature covers the timestamp header and the body (`<timestamp>.<body>`), so
// a receiver that checks the time refuses a replayed batch. 2xx counts as taken.
import { createHmac } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { describeSink, type WebhookSink } from '../../core/config/auditExportConfig.js';
import { AssentError } from '../../core/base/errors.js';
import type { AuditSink } from './auditSink.js';

export const SIGNATURE_HEADER = 'x-assent-signature';
export const TIMESTAMP_HEADER = 'x-assent-timestamp';

/** `sha256=<hex>` over `<timestamp>.<body>`: what the receiver recomputes with the shared key. */
export function webhookSignature(key: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Reads the HMAC key: a file only its owner can read, at least 32 characters once trimmed. */
export function readWebhookKey(file: string): string {
  let mode: number;
  let text: string;
  try {
    mode = statSync(file).mode;
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new AssentError('config_invalid', `cannot read the webhook key file ${file}: ${(error as Error).message}; create it with mode 0600`, { cause: error });
  }
  if ((mode & 0o077) !== 0) throw new AssentError('config_invalid', `the webhook key file ${file} is readable by others (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`);
  if (text.length < 32) throw new AssentError('config_invalid', `the webhook key in ${file} is shorter than 32 characters; write a longer random key there (e.g. openssl rand -hex 32)`);
  return text;
}

export function createWebhookSink(name: string, config: WebhookSink, options: { now?: () => number; key?: string } = {}): AuditSink {
  const key = options.key ?? readWebhookKey(config.secretFile);
  const ca = config.ca === undefined ? undefined : readFileSync(config.ca);
  const now = options.now ?? Date.now;
  return {
    name,
    kind: 'webhook',
    description: describeSink(config),
    send(records) {
      const body = `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;
      const timestamp = String(Math.floor(now() / 1000));
      return new Promise<void>((resolve, reject) => {
        const req = request(
          config.url,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/x-ndjson',
              'content-length': Buffer.byteLength(body),
              [TIMESTAMP_HEADER]: timestamp,
              [SIGNATURE_HEADER]: webhookSignature(key, timestamp, body),
            },
            timeout: 10_000,
            ...(ca === undefined ? {} : { ca }),
          },
          (res) => {
            res.resume();
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) res.on('end', () => resolve());
            else reject(new Error(`the webhook answered HTTP ${status}`));
          },
        );
        req.on('timeout', () => req.destroy(new Error('the webhook did not answer within 10 s')));
        req.on('error', reject);
        req.end(body);
      });
    },
    close: async () => undefined,
  };
}
