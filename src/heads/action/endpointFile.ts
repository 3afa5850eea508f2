// The review broker's endpoint file `{schemaVersion:1, port, token}` (SPEC §6):
// created new (`wx`) with mode 0600, read back by `assent action connect` only
// when it is still a private regular file, and removed on exit only when it is
// still exactly the file the broker wrote.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, lstatSync, openSync, readSync, unlinkSync, writeSync, constants as fsConstants } from 'node:fs';
import type { Stats } from 'node:fs';
import { AssentError } from '../../core/base/errors.js';
import type { RandomBytes } from '../../core/base/ids.js';

export interface Endpoint {
  schemaVersion: 1;
  port: number;
  token: string;
}

/** What the broker remembers about the file it wrote, to remove only that file. */
export interface WrittenEndpoint {
  path: string;
  bytes: Buffer;
  dev: number;
  ino: number;
}

const TOKEN_PATTERN = /^[0-9a-f]{64}$/;
const MAX_ENDPOINT_BYTES = 1024;

/** A 256-bit token as 64 lowercase hex characters. */
export function newEndpointToken(random: RandomBytes = randomBytes): string {
  return Buffer.from(random(32)).toString('hex');
}

/** Creates the file; an existing path (file, symlink, anything) is refused rather than replaced. */
export function writeEndpointFile(path: string, endpoint: Endpoint): WrittenEndpoint {
  const bytes = Buffer.from(`${JSON.stringify(endpoint)}\n`, 'utf8');
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0), 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AssentError(
      'invalid_input',
      code === 'EEXIST'
        ? `The endpoint file ${path} already exists; the review broker only creates a new one. Remove it or choose another path.`
        : `The endpoint file ${path} could not be created (${code ?? 'error'}); choose a path in a directory you own.`,
      { details: { path, reason: code ?? 'create-failed' }, cause: error },
    );
  }
  try {
    writeSync(fd, bytes);
    const stat = fstatSync(fd);
    return { path, bytes, dev: stat.dev, ino: stat.ino };
  } finally {
    closeSync(fd);
  }
}

/** Removes the file only when it is the same inode holding the same bytes; reports whether it did. */
export function removeEndpointIfUnchanged(written: WrittenEndpoint): boolean {
  try {
    const stat = lstatSync(written.path);
    if (!stat.isFile() || stat.dev !== written.dev || stat.ino !== written.ino || stat.size !== written.bytes.byteLength) return false;
    const current = readPrivate(written.path, stat);
    if (current.byteLength !== written.bytes.byteLength || !timingSafeEqual(current, written.bytes)) return false;
    unlinkSync(written.path);
    return true;
  } catch {
    return false;
  }
}

function refuse(path: string, problem: string, reason: string): AssentError {
  return new AssentError('invalid_input', `The endpoint file ${path} ${problem}. Use the file the running \`assent action review\` wrote.`, {
    details: { path, reason },
  });
}

function readPrivate(path: string, expected: Stats): Buffer {
  const fd = openSync(path, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
  try {
    const stat = fstatSync(fd);
    if (stat.dev !== expected.dev || stat.ino !== expected.ino) throw refuse(path, 'was replaced while it was read', 'replaced');
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_ENDPOINT_BYTES + 1));
    const read = readSync(fd, buffer, 0, buffer.byteLength, 0);
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the endpoint for `assent action connect`: a regular file (no symlink)
 * owned by this user with mode 0600, holding exactly the three keys.
 */
export function readEndpointFile(path: string, uid: number | undefined = process.getuid?.()): Endpoint {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    throw refuse(path, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, 'unreadable');
  }
  if (stat.isSymbolicLink()) throw refuse(path, 'is a symbolic link', 'symlink');
  if (!stat.isFile()) throw refuse(path, 'is not a regular file', 'not-regular');
  if ((stat.mode & 0o777) !== 0o600) throw refuse(path, `has mode ${(stat.mode & 0o777).toString(8)}, not 600`, 'mode');
  if (uid !== undefined && stat.uid !== uid) throw refuse(path, 'belongs to another user', 'owner');
  if (stat.size > MAX_ENDPOINT_BYTES) throw refuse(path, `is larger than ${MAX_ENDPOINT_BYTES} bytes`, 'too-large');
  const bytes = readPrivate(path, stat);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw refuse(path, 'is not valid UTF-8 JSON', 'malformed');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw refuse(path, 'is not a JSON object', 'malformed');
  const record = parsed as Record<string, unknown>;
  const keys = Object.keys(record).sort().join(',');
  const { port, token } = record;
  if (
    keys !== 'port,schemaVersion,token' ||
    record['schemaVersion'] !== 1 ||
    typeof port !== 'number' ||
    !Number.isInteger(port) ||
    port < 1 ||
    port > 65535 ||
    typeof token !== 'string' ||
    !TOKEN_PATTERN.test(token)
  ) {
    throw refuse(path, 'does not hold exactly {schemaVersion: 1, port, token}', 'malformed');
  }
  return { schemaVersion: 1, port, token };
}

/** Constant-time comparison of a received token line with the expected token. */
export function tokenMatches(received: Buffer, token: string): boolean {
  const expected = Buffer.from(token, 'ascii');
  // Compare equal-length buffers always, so the time does not depend on where they differ or on the length.
  const padded = Buffer.alloc(expected.byteLength);
  received.copy(padded, 0, 0, Math.min(received.byteLength, padded.byteLength));
  return timingSafeEqual(padded, expected) && received.byteLength === expected.byteLength;
}
