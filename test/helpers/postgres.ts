// A real PostgreSQL server for tests (R-TEAM-5): Debian's binaries from
// /usr/lib/postgresql/<version>/bin, a fresh cluster in a temp dir (initdb,
// --auth=trust), listening only on a private Unix socket in that dir
// (listen_addresses=''), removed again by `remove()`. initdb and postgres refuse
// to run as root, so under uid 0 (this machine and CI) they run as the
// `postgres` OS user with the temp dir handed to it.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';
/** The socket's name carries the port; with no TCP listener any fixed number will do in a private dir. */
const PORT = 5432;

export interface PostgresServer {
  /** The directory holding the socket (`.s.PGSQL.5432`). */
  socketDir: string;
  /** A URL for `database`, optionally with a password the server (trust auth) ignores. */
  url(database: string, options?: { password?: string }): string;
  /** Creates a fresh, empty database and returns its URL. */
  createDatabase(prefix?: string): Promise<string>;
  /** One SQL statement as the superuser, in `database` (default `postgres`). */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[], database?: string): Promise<T[]>;
  /** Stops the server (fast shutdown: sessions are disconnected), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again after stop(), on the same socket and data. */
  start(): Promise<void>;
  /** Stops it if running and deletes the temp dir. */
  remove(): Promise<void>;
}

/** The newest installed PostgreSQL bin directory; a clear error when there is none. */
export function postgresBinDir(): string {
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter((name) => existsSync(join(PG_ROOT, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = versions[0];
  if (newest === undefined) {
    throw new Error(`no PostgreSQL server binaries under ${PG_ROOT}/*/bin; install the Debian package: apt-get install -y postgresql`);
  }
  return join(PG_ROOT, newest, 'bin');
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL binary, as the `postgres` OS user when we are root. */
async function pgCommand(bin: string, args: string[]): Promise<string> {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  try {
    const { stdout } = await run(file, argv, { cwd: '/', timeout: 60_000 });
    return stdout;
  } catch (error) {
    const failed = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${failed.stderr ?? ''}${failed.stdout ?? ''}${failed.message}`, { cause: error });
  }
}

let counter = 0;

/**
 * Starts a private server. `durable: false` (the default) turns fsync off: the
 * tests stop the server cleanly or kill assent, never the machine, so nothing
 * they check depends on it, and it keeps them fast on a shared box.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  const dir = mkdtempSync('/tmp/as-pg-');
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    chownSync(data, uid, gid);
  }
  chmodSync(dir, 0o700);
  await pgCommand(join(bin, 'initdb'), ['-D', data, '--auth=trust', '--username=postgres', '--no-sync', '--encoding=UTF8', '--locale=C']);
  const settings = [`-c listen_addresses=''`, `-c unix_socket_directories=${dir}`, `-p ${PORT}`, '-c max_connections=200'];
  if (options.durable !== true) settings.push('-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off');
  const start = (): Promise<string> => pgCommand(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '30', '-o', settings.join(' '), 'start']);
  const stop = (): Promise<string> => pgCommand(join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '30', '-m', 'fast', 'stop']);
  await start();
  let running = true;

  const url = (database: string, urlOptions: { password?: string } = {}): string => {
    const auth = urlOptions.password === undefined ? 'postgres' : `postgres:${encodeURIComponent(urlOptions.password)}`;
    return `postgresql://${auth}@localhost:${PORT}/${database}?host=${encodeURIComponent(dir)}`;
  };
  const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = [], database = 'postgres'): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    socketDir: dir,
    url,
    query,
    async createDatabase(prefix = 't') {
      counter += 1;
      const name = `${prefix}_${process.pid}_${counter}_${Date.now().toString(36)}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
      await query(`CREATE DATABASE ${name}`);
      return url(name);
    },
    async stop() {
      if (!running) return;
      await stop();
      running = false;
    },
    async start() {
      if (running) return;
      await start();
      running = true;
    },
    async remove() {
      try {
        if (running) await stop();
      } catch {
        // Already gone; the directory goes anyway.
      }
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const fields = line?.split(':');
  if (fields === undefined || fields.length < 4) throw new Error('running as root, but there is no `postgres` OS user to run the PostgreSQL server as (the postgresql package creates it)');
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}
