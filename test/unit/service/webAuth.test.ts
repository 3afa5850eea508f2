// Pairing codes, sessions and bearer tokens on a fake clock (R-WEB-2, R-WEB-4).
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import { WebAuth, type TokenStore } from '../../../src/service/webAuth.js';
import type { TokenRecord } from '../../../src/journal/journal.js';
import { browserOpener, pairingUrl } from '../../../src/heads/cli/commands/web.js';
import { createLogger, redactSecrets } from '../../../src/service/logger.js';

/** An in-memory token store with a fixed audience. */
function memoryStore(audience = 'aud-1'): TokenStore & { rows: TokenRecord[] } {
  const rows: TokenRecord[] = [];
  return {
    rows,
    instanceId: () => audience,
    insertToken: (token) => void rows.push({ ...token }),
    findTokenByHash: (hash) => rows.find((row) => row.tokenSha256 === hash),
    getToken: (id) => rows.find((row) => row.id === id),
    listTokens: () => [...rows],
    revokeToken: (id, at) => {
      const row = rows.find((candidate) => candidate.id === id);
      if (row === undefined || row.revokedAt !== undefined) return false;
      row.revokedAt = at;
      return true;
    },
  };
}

let counter = 0;
/** Deterministic but distinct bytes for each call. */
const random = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + counter++ * 17) % 256);

afterEach(() => {
  counter = 0;
});

describe('WebAuth', () => {
  it('R-WEB-2 a pairing code has 8 characters from the id alphabet and works once', () => {
    const auth = new WebAuth({ tokens: memoryStore(), clock: new FakeClock(), random });
    const { code, expiresAt } = auth.issuePairingCode();
    expect(code).toMatch(/^[a-km-z]{8}$/);
    expect(expiresAt).toBe(new FakeClock().now() + 120_000);
    const { cookie, session } = auth.redeemPairingCode(` ${code.toUpperCase()} `);
    expect(auth.sessionFor(cookie)).toEqual(session);
    expect(() => auth.redeemPairingCode(code)).toThrow(expect.objectContaining({ type: 'unauthorized' }));
  });

  it('R-WEB-2 a newer code replaces the older one', () => {
    const clock = new FakeClock();
    const auth = new WebAuth({ tokens: memoryStore(), clock, random });
    const first = auth.issuePairingCode().code;
    const second = auth.issuePairingCode().code;
    expect(first).not.toBe(second);
    expect(() => auth.redeemPairingCode(first)).toThrow(expect.objectContaining({ type: 'unauthorized' }));
    clock.advance(1000); // the older code was a wrong try for the newer one
    expect(auth.redeemPairingCode(second).cookie.length).toBeGreaterThanOrEqual(43);
  });

  it('R-WEB-2 four wrong tries leave the code usable; the fifth burns it', () => {
    const clock = new FakeClock();
    const auth = new WebAuth({ tokens: memoryStore(), clock, random });
    const { code } = auth.issuePairingCode();
    for (let i = 0; i < 4; i += 1) {
      expect(() => auth.redeemPairingCode('xxxxxxxx')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
      clock.advance(8000); // past each wait (hardening 2)
    }
    expect(auth.pairingActive).toBe(true);
    expect(() => auth.redeemPairingCode('xxxxxxxx')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
    expect(auth.pairingActive).toBe(false);
    expect(() => auth.redeemPairingCode(code)).toThrow(/burnt/);
  });

  it('R-WEB-2 (hardening 2) each wrong code makes the next try wait longer: 1, 2, 4, 8 s, then the 5th wrong code burns it', () => {
    const clock = new FakeClock();
    const auth = new WebAuth({ tokens: memoryStore(), clock, random });
    const { code } = auth.issuePairingCode();
    for (const waitMs of [1000, 2000, 4000, 8000]) {
      expect(() => auth.redeemPairingCode('xxxxxxxx')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
      // Inside the wait even the right code is not looked at.
      expect(() => auth.redeemPairingCode(code)).toThrow(expect.objectContaining({ type: 'rate_limited', details: { retryAfterMs: waitMs } }));
      clock.advance(waitMs - 1);
      expect(() => auth.redeemPairingCode(code)).toThrow(expect.objectContaining({ type: 'rate_limited', details: { retryAfterMs: 1 } }));
      clock.advance(1);
      expect(auth.pairingActive).toBe(true);
    }
    expect(() => auth.redeemPairingCode('xxxxxxxx')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
    expect(auth.pairingActive).toBe(false);
    clock.advance(60_000);
    expect(() => auth.redeemPairingCode(code)).toThrow(/burnt/);
  });

  it('R-WEB-2 (hardening 2) a burst of 1,000 wrong codes counts as one: the code still pairs after the wait', () => {
    const clock = new FakeClock();
    const auth = new WebAuth({ tokens: memoryStore(), clock, random });
    const { code } = auth.issuePairingCode();
    const types = new Map<string, number>();
    for (let i = 0; i < 1000; i += 1) {
      try {
        auth.redeemPairingCode(`wrong${String(i).padStart(3, '0')}`);
      } catch (error) {
        const type = (error as { type: string }).type;
        types.set(type, (types.get(type) ?? 0) + 1);
      }
    }
    expect(Object.fromEntries(types)).toEqual({ unauthorized: 1, rate_limited: 999 });
    expect(auth.pairingActive).toBe(true);
    clock.advance(1000);
    expect(auth.redeemPairingCode(code).cookie.length).toBeGreaterThanOrEqual(43);
  });

  it('R-WEB-2 (hardening 2) burning a code takes at least 15 s of waits, and a new code starts without a wait', () => {
    const clock = new FakeClock();
    const auth = new WebAuth({ tokens: memoryStore(), clock, random });
    auth.issuePairingCode();
    const started = clock.monotonic();
    let wrong = 0;
    while (auth.pairingActive) {
      try {
        auth.redeemPairingCode('xxxxxxxx');
      } catch (error) {
        if ((error as { type: string }).type === 'unauthorized') wrong += 1;
      }
      clock.advance(100);
    }
    expect(wrong).toBe(5);
    expect(clock.monotonic() - started).toBeGreaterThanOrEqual(15_000);
    auth.issuePairingCode();
    expect(() => auth.redeemPairingCode('xxxxxxxx')).toThrow(expect.objectContaining({ type: 'unauthorized' }));
    const fresh = auth.issuePairingCode();
    expect(auth.redeemPairingCode(fresh.code).cookie.length).toBeGreaterThanOrEqual(43);
  });

  it('R-WEB-2 sessions expire and can be ended; only hashes are kept', () => {
    const clock = new FakeClock();
    const auth = new WebAuth({ tokens: memoryStore(), clock, random, sessionTtlMs: 1000 });
    const { cookie } = auth.redeemPairingCode(auth.issuePairingCode().code);
    expect(JSON.stringify([...(auth as unknown as { sessions: { byHash: Map<string, unknown> } }).sessions.byHash.entries()])).not.toContain(cookie);
    clock.advance(999);
    expect(auth.sessionFor(cookie)).toBeDefined();
    clock.advance(1);
    expect(auth.sessionFor(cookie)).toBeUndefined();
    const second = auth.redeemPairingCode(auth.issuePairingCode().code).cookie;
    auth.endSession(second);
    expect(auth.sessionFor(second)).toBeUndefined();
  });

  it('R-WEB-4 tokens are stored as hashes, bound to the audience, expire and can be revoked', async () => {
    const clock = new FakeClock();
    const store = memoryStore('aud-1');
    const auth = new WebAuth({ tokens: store, clock, random });
    const { token, info } = await auth.createToken({ name: 'ci', ttlMs: 60_000 });
    expect(token).toMatch(/^ast1_[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(store.rows)).not.toContain(token.slice(5));
    expect(info).toMatchObject({ name: 'ci', audience: 'aud-1', state: 'active' });
    expect((await auth.authenticateToken(token))?.name).toBe('ci');
    expect(await auth.authenticateToken(`${token}x`)).toBeUndefined();

    // The same row under another daemon's audience is refused.
    const row = store.rows[0];
    if (row === undefined) throw new Error('no row');
    row.audience = 'aud-2';
    expect(await auth.authenticateToken(token)).toBeUndefined();
    row.audience = 'aud-1';

    clock.advance(60_000);
    expect(await auth.authenticateToken(token)).toBeUndefined();
    expect((await auth.listTokens())[0]?.state).toBe('expired');

    const live = await auth.createToken({ name: 'other', ttlMs: 60_000 });
    expect((await auth.revokeToken(live.info.id)).state).toBe('revoked');
    expect(await auth.authenticateToken(live.token)).toBeUndefined();
    await expect(auth.revokeToken(live.info.id)).rejects.toThrow(expect.objectContaining({ type: 'conflict' }));
    await expect(auth.revokeToken('tnope')).rejects.toThrow(expect.objectContaining({ type: 'not_found' }));
    await expect(auth.createToken({ name: 'x', ttlMs: 0 })).rejects.toThrow(expect.objectContaining({ type: 'invalid_params' }));
  });

  it('R-WEB-2 `assent web --open` puts the code in the URL fragment only, as one argv element', () => {
    const url = pairingUrl('http://127.0.0.1:7788/', 'abcdefgh');
    expect(url).toBe('http://127.0.0.1:7788/#code=abcdefgh');
    const parsed = new URL(url);
    expect(parsed.pathname).toBe('/');
    expect(parsed.search).toBe('');
    expect(browserOpener('linux')).toMatchObject({ command: 'xdg-open' });
    expect(browserOpener('linux').args(url)).toEqual([url]);
    expect(browserOpener('darwin').command).toBe('open');
    expect(browserOpener('win32').args(url).at(-1)).toBe(url);
  });

  it('R-J-7 the logger masks a bearer token shape like a proof, as the last line of defence', async () => {
    const auth = new WebAuth({ tokens: memoryStore(), clock: new FakeClock(), random });
    const { token } = await auth.createToken({ name: 'log', ttlMs: 1000 });
    expect(redactSecrets(`Bearer ${token}`)).toBe('Bearer ast1_[redacted]');
    const lines: string[] = [];
    createLogger({ write: (line: string) => lines.push(line) }).warn('oops', { header: `Bearer ${token}` });
    expect(lines.join('')).not.toContain(token.slice(5));
  });
});
