// What the HTTP listener needs before, and without, the app: the body cap, the
// security headers every answer carries, the error body of R-WEB-4 and the
// masking of credentials in logged paths. Kept apart from the Hono app so a
// daemon binds its page without loading the web framework until the first
// request arrives.
import { ERROR_TYPES, type AssentError } from '../../core/base/errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Sent on every answer, refusals included, also those the listener gives before the app runs. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const SECRET_SHAPE = /(asp1|ast1)_[A-Za-z0-9_-]*/g;

/** A request path as it may appear in a log line: no query, credential shapes masked, bounded length. */
export function loggablePath(path: string): string {
  return path.replace(SECRET_SHAPE, '$1_[redacted]').slice(0, 200);
}

export function httpStatusOf(error: AssentError): number {
  return ERROR_TYPES[error.type].httpStatus;
}

/** The error body of R-WEB-4: `{statusCode, code, error, message}`, code being the registry type. */
export function errorBody(error: AssentError): { statusCode: number; code: string; error: string; message: string } {
  const statusCode = httpStatusOf(error);
  // Last line of defence (R-J-7): a credential echoed by some message never leaves in an error body.
  return { statusCode, code: error.type, error: STATUS_TEXT[statusCode] ?? 'Error', message: error.message.replace(SECRET_SHAPE, '$1_[redacted]') };
}
