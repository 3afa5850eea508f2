// Remembered devices (R-REM-3) on a fake clock over a real journal: a session
// paired with "remember this device" is stored as the hash of its cookie, is
// found again by a new WebAuth on the same journal (a restart), lasts
// web.deviceTtlDays, and revocation ends it at once and for good.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import { deviceNameFrom } from '../../../src/core/approval/deviceName.js';
import { Journal } from '../../../src/journal/journal.js';
import { WebAuth } from '../../../src/service/webAuth.js';

const DAY = 86_400_000;
const PHONE_UA = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function journalAt(dir: string, clock: FakeClock): Journal {
  const journal = Journal.open(join(dir, 'journal.db'), { clock });
  cleanups.push(() => journal.close());
  return journal;
}

function setup(ttlDays = 30): { dir: string; clock: FakeClock; journal: Journal; auth: WebAuth; restart(): WebAuth } {
  const dir = mkdtempSync(join(tmpdir(), 'as-devices-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new FakeClock(Date.UTC(2026, 5, 1));
  const journal = journalAt(dir, clock);
  const make = (store: Journal): WebAuth =>
    new WebAuth({ tokens: store, devices: store, clock, random: (n) => new Uint8Array(randomBytes(n)), deviceTtlMs: () => ttlDays * DAY });
  return {
    dir,
    clock,
    journal,
    auth: make(journal),
    restart: () => {
      journal.close();
      return make(journalAt(dir, clock));
    },
  };
}

function pair(auth: WebAuth, remember: boolean, userAgent = PHONE_UA): { cookie: string; id: string } {
  const { cookie, session } = auth.redeemPairingCode(auth.issuePairingCode().code, { remember, userAgent });
  return { cookie, id: session.id };
}

describe('remembered devices (issue 13 item 3)', () => {
  it('R-REM-3 a remembered device is signed in again after a restart; a session that is not remembered is not', () => {
    const { auth, restart, clock } = setup();
    const phone = pair(auth, true);
    clock.advance(1);
    const laptop = pair(auth, false, 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0');
    expect(auth.listDevices().map((device) => [device.id, device.name, device.remembered])).toEqual([
      [phone.id, 'Chrome on Android', true],
      [laptop.id, 'Firefox on Linux', false],
    ]);
    clock.advance(3_600_000);
    const after = restart();
    expect(after.sessionFor(phone.cookie)?.id).toBe(phone.id);
    expect(after.sessionFor(laptop.cookie)).toBeUndefined();
    expect(after.listDevices()).toEqual([
      { id: phone.id, name: 'Chrome on Android', userAgent: PHONE_UA, pairedAt: Date.UTC(2026, 5, 1), lastSeenAt: Date.UTC(2026, 5, 1) + 3_600_001, expiresAt: Date.UTC(2026, 5, 1) + 30 * DAY, remembered: true },
    ]);
  });

  it('R-REM-3 the journal keeps only the SHA-256 of the cookie, never the cookie', () => {
    const { auth, dir } = setup();
    const { cookie } = pair(auth, true);
    const raw = new Database(join(dir, 'journal.db'), { readonly: true });
    cleanups.push(() => raw.close());
    const rows = raw.prepare('SELECT * FROM web_devices').all();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(cookie);
    expect((rows[0] as { cookie_sha256: string }).cookie_sha256).toBe(createHash('sha256').update(cookie).digest('hex'));
  });

  it('R-REM-3 a remembered device lasts web.deviceTtlDays from pairing, across restarts', () => {
    const { auth, clock, restart } = setup(7);
    const { cookie } = pair(auth, true);
    clock.advance(7 * DAY - 1);
    expect(restart().sessionFor(cookie)).toBeDefined();
    clock.advance(1);
    expect(restart().sessionFor(cookie)).toBeUndefined();
  });

  it('R-REM-3 revoking a device signs it out at once, tells the listeners, and it stays out after a restart', () => {
    const { auth, restart } = setup();
    const phone = pair(auth, true);
    const other = pair(auth, true);
    const ended: string[] = [];
    auth.onCredentialEnded((key) => ended.push(key));
    expect(auth.revokeDevice(phone.id)).toMatchObject({ id: phone.id, remembered: true });
    expect(ended).toEqual([`session:${phone.id}`]);
    expect(auth.sessionFor(phone.cookie)).toBeUndefined();
    expect(auth.sessionFor(other.cookie)).toBeDefined();
    expect(() => auth.revokeDevice(phone.id)).toThrow(expect.objectContaining({ type: 'not_found', message: expect.stringContaining('assent web devices') }));
    const after = restart();
    expect(after.sessionFor(phone.cookie)).toBeUndefined();
    expect(after.sessionFor(other.cookie)).toBeDefined();
  });

  it('R-REM-3 "Sign out" on the page ends a remembered device for good too', () => {
    const { auth, restart } = setup();
    const phone = pair(auth, true);
    auth.endSession(phone.cookie);
    expect(auth.sessionFor(phone.cookie)).toBeUndefined();
    expect(restart().sessionFor(phone.cookie)).toBeUndefined();
  });

  it('R-REM-3 last-seen is kept in memory at every request and written to the journal at most once a minute', () => {
    const { auth, clock, journal } = setup();
    const { cookie, id } = pair(auth, true);
    const start = clock.now();
    clock.advance(10_000);
    auth.sessionFor(cookie);
    expect(auth.listDevices()[0]?.lastSeenAt).toBe(start + 10_000);
    expect(journal.listWebDevices(clock.now())[0]?.lastSeenAt).toBe(start);
    clock.advance(60_000);
    auth.sessionFor(cookie);
    expect(journal.listWebDevices(clock.now()).find((device) => device.id === id)?.lastSeenAt).toBe(start + 70_000);
  });

  it('R-REM-3 a revoked token ends its streams through the same listener', async () => {
    const { auth } = setup();
    const ended: string[] = [];
    auth.onCredentialEnded((key) => ended.push(key));
    const { info } = await auth.createToken({ name: 'ci', ttlMs: 60_000 });
    await auth.revokeToken(info.id);
    expect(ended).toEqual([`token:${info.id}`]);
  });

  it('R-REM-3 device names are guessed from the user agent', () => {
    expect(deviceNameFrom(PHONE_UA)).toBe('Chrome on Android');
    expect(deviceNameFrom('Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1')).toBe('Safari on iPhone');
    expect(deviceNameFrom('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0')).toBe('Edge on Windows');
    expect(deviceNameFrom('curl/8.5.0')).toBe('browser');
    expect(deviceNameFrom(undefined)).toBe('browser');
  });
});
