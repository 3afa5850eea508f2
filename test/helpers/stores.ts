// The journal-level tests run against both stores (R-TEAM-1): the embedded
// SQLite journal in a temp dir, and a PostgreSQL database on a real private
// server (test/helpers/postgres.ts), one fresh database per fixture.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Clock } from '../../src/core/clock.js';
import { Journal } from '../../src/journal/journal.js';
import { SqliteStore } from '../../src/journal/sqliteStore.js';
import type { Store } from '../../src/journal/store.js';

export type StoreKind = 'sqlite' | 'postgres';
export const STORE_KINDS: readonly StoreKind[] = ['sqlite'];

export interface StoreFixture {
  kind: StoreKind;
  store: Store;
  /** Another connection to the same store, as another process or host (`hostId`) would open it. */
  openAnother(hostId?: string): Promise<Store>;
  /** Everything the store keeps, as text, to check that a secret is not in it. */
  dump(): Promise<string>;
  close(): Promise<void>;
}

export const HOST_A = 'a'.repeat(32);
export const HOST_B = 'b'.repeat(32);

export async function openStoreFixture(kind: StoreKind, clock: Clock): Promise<StoreFixture> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-store-'));
  const file = path.join(tmp, 'journal.db');
  const journals: Journal[] = [];
  const stores: Store[] = [];
  const open = (hostId: string): Store => {
    const journal = Journal.open(file, { clock });
    journals.push(journal);
    const store = SqliteStore.open(journal, hostId);
    stores.push(store);
    return store;
  };
  const store = open(HOST_A);
  return {
    kind,
    store,
    openAnother: async (hostId = HOST_A) => open(hostId),
    dump: async () => {
      const parts = [file, `${file}-wal`].filter((name) => fs.existsSync(name)).map((name) => fs.readFileSync(name));
      return Buffer.concat(parts).toString('latin1');
    },
    close: async () => {
      for (const each of stores) await each.close();
      for (const journal of journals) journal.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Stops what the fixtures started for this test file; the embedded store needs nothing. */
export async function closeStoreServers(): Promise<void> {
  // Nothing to stop.
}
