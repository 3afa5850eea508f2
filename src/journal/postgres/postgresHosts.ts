// The team store's hosts (R-TEAM-6): each host's label and the configuration revision it runs, which its proofs bind.
import type { HostRecord, HostStore } from '../store.js';
import type { PgContext } from './postgresQuery.js';

async function announceHost(db: PgContext, host: { name: string; revision: string; at: number }): Promise<void> {
  await db.query(
    `INSERT INTO hosts (host_id, name, revision, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (host_id) DO UPDATE SET name = excluded.name, revision = excluded.revision, updated_at = excluded.updated_at`,
    [db.hostId, host.name, host.revision, host.at],
  );
}

async function listHosts(db: PgContext): Promise<HostRecord[]> {
  const result = await db.query<{ host_id: string; name: string; revision: string; updated_at: number }>('SELECT * FROM hosts ORDER BY name, host_id');
  return result.rows.map((row) => ({ hostId: row.host_id, name: row.name, revision: row.revision, updatedAt: row.updated_at }));
}

export function postgresHosts(db: PgContext): HostStore {
  return {
    announceHost: (host) => announceHost(db, host),
    listHosts: () => listHosts(db),
  };
}
