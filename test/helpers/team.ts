// Team mode for tests (R-TEAM-5): a private PostgreSQL server, one database,
// and several hosts — each a temp ASSENT_HOME with its own config.json naming
// that database (`journal.kind: "postgres"`) and its own `host.name`, its own
// daemon and its own filesystem upstream.
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { startFsStack, type Cleanups, type FsStack } from './fsStack.js';
import { startPostgres, type PostgresServer } from './postgres.js';

export interface TeamHost extends FsStack {
  name: string;
  /** An RPC client on this host's daemon, closed by the cleanups. */
  connect(): Promise<DaemonClient>;
}

/** Starts (once per test file) the PostgreSQL server the team tests share; removed by the returned cleanup. */
export async function teamServer(cleanups: Cleanups): Promise<PostgresServer> {
  const server = await startPostgres();
  cleanups.push(() => server.remove());
  return server;
}

/**
 * Hosts on one fresh database of `server`: each gets `config` merged over
 * `{journal: {kind: "postgres", url}, host: {name}}` (and what startFsStack adds).
 * They start one after another, so the first one migrates the database.
 */
export async function startTeam(
  cleanups: Cleanups,
  server: PostgresServer,
  names: readonly string[],
  config: Record<string, unknown> = {},
  options: { url?: string; journal?: Record<string, unknown>; daemonEnv?: Record<string, NodeJS.ProcessEnv> } = {},
): Promise<{ url: string; hosts: TeamHost[] }> {
  const url = options.url ?? (await server.createDatabase('team'));
  const hosts: TeamHost[] = [];
  for (const name of names) {
    const stack = await startFsStack(cleanups, { journal: options.journal ?? { kind: 'postgres', url }, host: { name }, ...config }, options.daemonEnv?.[name]);
    hosts.push({
      ...stack,
      name,
      connect: async () => {
        const client = await DaemonClient.connect({ socketPath: stack.home.paths.socket, autoSpawn: false });
        cleanups.push(() => client.close());
        return client;
      },
    });
  }
  return { url, hosts };
}

/** The pending approvals `assent pending --json` lists on a host, once at least `count` are there (waits up to 10 s). */
export async function pendingOn(host: TeamHost, count = 1): Promise<{ id: string; tool?: string; args?: Record<string, unknown>; hostId?: string; approvedBy?: string[] }[]> {
  let last: unknown;
  for (let i = 0; i < 400; i += 1) {
    const result = await host.home.runCli(['pending', '--json']);
    last = result.stdout || result.stderr;
    const list = (JSON.parse(result.stdout) as { data: { id: string }[] }).data;
    if (list.length >= count) return list;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`fewer than ${count} pending approvals on ${host.name}: ${String(last)}`);
}
