// The review endpoint file (SPEC §6): created new and private, read back only
// when still private and well-formed, removed only while unchanged; tokens
// compared without early exit.
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssentError } from '../../../../src/core/base/errors.js';
import {
  newEndpointToken,
  readEndpointFile,
  removeEndpointIfUnchanged,
  tokenMatches,
  writeEndpointFile,
} from '../../../../src/heads/action/endpointFile.js';

let dir: string;
let path: string;
const token = 'ab'.repeat(32);
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-endpoint-'));
  path = join(dir, 'endpoint.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function refusalReason(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AssentError);
    return (error as AssentError).details?.['reason'];
  }
  throw new Error('expected a refusal');
}

describe('writeEndpointFile', () => {
  it('SPEC §6 creates a 0600 file with exactly schemaVersion, port and token', () => {
    writeEndpointFile(path, { schemaVersion: 1, port: 4242, token });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ schemaVersion: 1, port: 4242, token });
    expect(readEndpointFile(path)).toEqual({ schemaVersion: 1, port: 4242, token });
  });

  it('SPEC §6 never replaces an existing file or follows a symlink (wx)', () => {
    writeFileSync(path, 'keep');
    expect(refusalReason(() => writeEndpointFile(path, { schemaVersion: 1, port: 1, token }))).toBe('EEXIST');
    expect(readFileSync(path, 'utf8')).toBe('keep');
    const target = join(dir, 'target');
    const link = join(dir, 'link.json');
    symlinkSync(target, link);
    expect(() => writeEndpointFile(link, { schemaVersion: 1, port: 1, token })).toThrow(AssentError);
    expect(existsSync(target)).toBe(false);
  });

  it('SPEC §6 a token is 256 random bits as 64 hex characters', () => {
    expect(newEndpointToken((n) => new Uint8Array(n).fill(0xab))).toBe(token);
    expect(newEndpointToken()).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('readEndpointFile refusals', () => {
  it('refuses a symlink, a directory, a wrong mode and malformed content', () => {
    writeEndpointFile(path, { schemaVersion: 1, port: 4242, token });
    const link = join(dir, 'link.json');
    symlinkSync(path, link);
    expect(refusalReason(() => readEndpointFile(link))).toBe('symlink');
    expect(refusalReason(() => readEndpointFile(dir))).toBe('not-regular');
    chmodSync(path, 0o644);
    expect(refusalReason(() => readEndpointFile(path))).toBe('mode');
    expect(refusalReason(() => readEndpointFile(join(dir, 'missing.json')))).toBe('unreadable');
    const bad = (content: string): unknown => {
      const file = join(dir, `bad-${Math.random()}.json`);
      writeFileSync(file, content, { mode: 0o600 });
      return refusalReason(() => readEndpointFile(file));
    };
    expect(bad('not json')).toBe('malformed');
    expect(bad(JSON.stringify({ schemaVersion: 1, port: 4242, token, extra: 1 }))).toBe('malformed');
    expect(bad(JSON.stringify({ schemaVersion: 2, port: 4242, token }))).toBe('malformed');
    expect(bad(JSON.stringify({ schemaVersion: 1, port: 70000, token }))).toBe('malformed');
    expect(bad(JSON.stringify({ schemaVersion: 1, port: 4242, token: token.toUpperCase() }))).toBe('malformed');
    expect(bad(JSON.stringify({ schemaVersion: 1, port: 4242, token: token.slice(2) }))).toBe('malformed');
  });

  it('refuses a file owned by another user', () => {
    writeEndpointFile(path, { schemaVersion: 1, port: 4242, token });
    const uid = statSync(path).uid;
    expect(refusalReason(() => readEndpointFile(path, uid + 1))).toBe('owner');
  });
});

describe('removeEndpointIfUnchanged', () => {
  it('SPEC §6 removes the file it wrote', () => {
    const written = writeEndpointFile(path, { schemaVersion: 1, port: 4242, token });
    expect(removeEndpointIfUnchanged(written)).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('SPEC §6 leaves a file whose bytes changed', () => {
    const written = writeEndpointFile(path, { schemaVersion: 1, port: 4242, token });
    writeFileSync(path, readFileSync(path, 'utf8').replace('4242', '4243'));
    expect(removeEndpointIfUnchanged(written)).toBe(false);
    expect(existsSync(path)).toBe(true);
  });

  it('SPEC §6 leaves a different file with identical bytes (replaced inode)', () => {
    const written = writeEndpointFile(path, { schemaVersion: 1, port: 4242, token });
    const bytes = readFileSync(path);
    // Written beside it while the original still exists, so it gets another inode, then moved over it.
    const replacement = join(dir, 'replacement.json');
    writeFileSync(replacement, bytes, { mode: 0o600 });
    renameSync(replacement, path);
    expect(statSync(path).ino).not.toBe(written.ino);
    expect(removeEndpointIfUnchanged(written)).toBe(false);
    expect(existsSync(path)).toBe(true);
  });
});

describe('tokenMatches', () => {
  it('SPEC §6 accepts only the exact token', () => {
    expect(tokenMatches(Buffer.from(token), token)).toBe(true);
    expect(tokenMatches(Buffer.from(token.slice(0, 63)), token)).toBe(false);
    expect(tokenMatches(Buffer.from(`${token}0`), token)).toBe(false);
    expect(tokenMatches(Buffer.from(`${token.slice(0, 63)}c`), token)).toBe(false);
    expect(tokenMatches(Buffer.alloc(0), token)).toBe(false);
  });
});
