// Where assent keeps its state (SPEC §3) and the checks that the directory is
// private to its owner before anything is read from or written to it.
import { AssentError } from '../core/base/errors.js';

// Builtins through process.getBuiltinModule rather than `import`: an ESM import of
// node:fs builds its ESM facade, which loads fs/promises and the stream modules
// (a few ms), and the agent hook imports this module before every tool call an
// agent makes (SPEC §14: about the start-up time of `node -e 0`).
const fs = process.getBuiltinModule('node:fs');
const os = process.getBuiltinModule('node:os');
const path = process.getBuiltinModule('node:path');

export interface StatePaths {
  home: string;
  config: string;
  identity: string;
  socket: string;
  pid: string;
  log: string;
  journal: string;
  auditDir: string;
  spawnLock: string;
}

/** The folder of audit spool files under the state directory (heads/mcp/auditSpool.ts writes them, operations/auditSpool.ts reads them). */
export const SPOOL_DIR_NAME = 'spool';

export function spoolDirOf(home: string): string {
  return path.join(home, SPOOL_DIR_NAME);
}

/** sun_path holds 108 bytes on Linux and 104 on macOS, including the terminating NUL. */
export function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number {
  return platform === 'linux' ? 107 : 103;
}

/** Expands `~` and resolves a relative path against the user's home, never the current directory (R-STATE-4). */
function userScoped(value: string, homedir: string): string {
  if (value === '~') return homedir;
  if (value.startsWith('~/')) return path.join(homedir, value.slice(2));
  return path.resolve(homedir, value);
}

/**
 * Resolves every state path from user scope only: `ASSENT_HOME` (default
 * `~/.assent`) and `ASSENT_SOCKET`. A file in the project directory never
 * selects them (R-STATE-4). Throws `invalid_input` when the socket path does
 * not fit a Unix socket address (R-STATE-3), so the failure is a message and
 * not an EINVAL from listen().
 */
export function resolveStatePaths(
  env: NodeJS.ProcessEnv = process.env,
  homedir: string = os.homedir(),
  platform: NodeJS.Platform = process.platform,
): StatePaths {
  const rawHome = env['ASSENT_HOME'];
  const home = rawHome !== undefined && rawHome !== '' ? userScoped(rawHome, homedir) : path.join(homedir, '.assent');
  const rawSocket = env['ASSENT_SOCKET'];
  const socket = rawSocket !== undefined && rawSocket !== '' ? userScoped(rawSocket, homedir) : path.join(home, 'daemon.sock');
  const limit = maxSocketPathBytes(platform);
  const bytes = Buffer.byteLength(socket);
  if (bytes > limit) {
    throw new AssentError(
      'invalid_input',
      `socket path ${socket} is ${bytes} bytes, longer than the ${limit}-byte limit for Unix sockets on this platform; ` +
        'set ASSENT_SOCKET to a shorter path (e.g. /tmp/assent-$USER.sock) or use a shorter ASSENT_HOME',
      { details: { path: socket, bytes, limit } },
    );
  }
  return {
    home,
    config: path.join(home, 'config.json'),
    identity: path.join(home, 'identity.json'),
    socket,
    pid: path.join(home, 'daemon.pid'),
    log: path.join(home, 'daemon.log'),
    journal: path.join(home, 'journal.db'),
    auditDir: path.join(home, 'audit'),
    spawnLock: path.join(home, 'daemon.spawn.lock'),
  };
}

/** The parts of the file system and process the state checks use; tests replace them. */
export interface StateDirOptions {
  stat?: (target: string) => { uid: number; mode: number; isDirectory(): boolean };
  getuid?: () => number;
  /** The user's home directory, which advice must never suggest changing; default os.homedir(). */
  homedir?: () => string;
  random?: (n: number) => Uint8Array;
  now?: () => number;
}

/** identity.json: this state directory is one host (R-TEAM-3), named by a random id drawn once. */
export interface Identity {
  /** 32 lowercase hex digits (16 random bytes). */
  hostId: string;
  createdAt: number;
}

const HOST_ID_PATTERN = /^[0-9a-f]{32}$/;

/** Directories shared by design: changing their owner or mode would break the system or other users. */
const SYSTEM_DIRECTORIES = new Set(['/', '/tmp', '/var/tmp', '/dev/shm', '/private/tmp', '/private/var/tmp', '/var', '/usr', '/etc', '/home', '/Users', '/opt', '/srv', '/mnt', '/media', '/run']);

/**
 * Whether advice may suggest chmod/chown of `dir`: never for a shared
 * directory — a system directory, a top-level one, the user's home itself, or
 * any directory with the sticky bit or writable by everyone (others may own
 * files in it, and may already have planted some).
 */
function isSharedDirectory(dir: string, mode: number, homedir: string): boolean {
  const resolved = path.resolve(dir);
  if (SYSTEM_DIRECTORIES.has(resolved) || path.dirname(resolved) === '/' || resolved === path.resolve(homedir)) return true;
  return (mode & 0o1000) !== 0 || (mode & 0o002) !== 0;
}

/** What to do instead of changing a shared directory: use a private one (assent creates it 0700). */
function privateDirAdvice(dir: string, homedir: string): string {
  const fallback = path.join(homedir, '.assent');
  if (path.resolve(dir) === fallback) {
    return `do not trust files in it: move it aside (e.g. \`mv ~/.assent ~/.assent.untrusted\`) so assent creates a fresh private one (0700), or set ASSENT_HOME to another private directory`;
  }
  return `do not change this directory; set ASSENT_HOME to a private directory of your own such as ~/.assent (assent creates it 0700), or unset ASSENT_HOME to use ~/.assent`;
}

/**
 * Refuses a directory that another user owns or that group/others can write
 * (R-STATE-1): either could plant a config, a socket or a journal entry. The
 * fix it names never changes a shared directory (/tmp, /, $HOME…).
 */
export function checkPrivateDir(dir: string, options: StateDirOptions = {}): void {
  const stat = options.stat ?? fs.statSync;
  const getuid = options.getuid ?? (() => (typeof process.getuid === 'function' ? process.getuid() : -1));
  const homedir = (options.homedir ?? os.homedir)();
  const info = stat(dir);
  if (!info.isDirectory()) {
    throw new AssentError('state_insecure', `state path ${dir} is not a directory; move it away or point ASSENT_HOME at a directory`, {
      details: { path: dir },
    });
  }
  const uid = getuid();
  const shared = isSharedDirectory(dir, info.mode, homedir);
  if (uid !== -1 && info.uid !== uid) {
    throw new AssentError(
      'state_insecure',
      shared
        ? `state directory ${dir} is owned by uid ${info.uid}, not by you (uid ${uid}), and is shared with others; ${privateDirAdvice(dir, homedir)}`
        : `state directory ${dir} is owned by uid ${info.uid}, not by you (uid ${uid}); use your own directory (set ASSENT_HOME) or run \`chown ${uid} ${dir}\``,
      { details: { path: dir, ownerUid: info.uid, uid } },
    );
  }
  if ((info.mode & 0o022) !== 0) {
    const mode = (info.mode & 0o7777).toString(8).padStart(3, '0');
    throw new AssentError(
      'state_insecure',
      shared
        ? `state directory ${dir} is writable by group or others (mode ${mode}) and may hold files someone else put there; ${privateDirAdvice(dir, homedir)}`
        : `state directory ${dir} is writable by group or others (mode ${mode}); run \`chmod 700 ${dir}\``,
      { details: { path: dir, mode: info.mode & 0o777 } },
    );
  }
}

/**
 * Creates the state directory (0700) and its audit directory, refuses an
 * insecure existing one, and writes identity.json once with a random host id.
 * Only the state directory itself is created: a missing parent is an error
 * naming it, since a mistyped ASSENT_HOME would otherwise silently grow a deep
 * path that nothing else uses.
 */
export function ensureStateDir(paths: StatePaths, options: StateDirOptions = {}): void {
  if (!fs.existsSync(paths.home)) {
    const parent = path.dirname(paths.home);
    if (!fs.existsSync(parent)) {
      throw new AssentError(
        'invalid_input',
        `the state directory ${paths.home} cannot be created: its parent ${parent} does not exist; check ASSENT_HOME (unset it to use ~/.assent) or create ${parent} first`,
        { details: { path: paths.home, parent } },
      );
    }
    try {
      fs.mkdirSync(paths.home, { mode: 0o700 });
    } catch (error) {
      // Created by another process meanwhile: checked below like any existing one.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new AssentError('invalid_input', `cannot create the state directory ${paths.home} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check ASSENT_HOME and the permissions of ${parent}`, {
          cause: error,
          details: { path: paths.home, parent },
        });
      }
    }
    fs.chmodSync(paths.home, 0o700);
  }
  checkPrivateDir(paths.home, options);
  if (!fs.existsSync(paths.auditDir)) fs.mkdirSync(paths.auditDir, { mode: 0o700 });
  checkPrivateDir(paths.auditDir, options);
  if (!fs.existsSync(paths.identity)) {
    // Web Crypto's global, not node:crypto: the agent hook imports this module and must start fast (SPEC §14).
    const random = options.random ?? ((n: number) => globalThis.crypto.getRandomValues(new Uint8Array(n)));
    const identity: Identity = {
      hostId: Buffer.from(random(16)).toString('hex'),
      createdAt: (options.now ?? Date.now)(),
    };
    try {
      writeFileNew(paths.identity, `${JSON.stringify(identity)}\n`);
    } catch (error) {
      // Another process created it first; its identity stands.
      if (!(error instanceof AssentError && error.details?.['code'] === 'EEXIST')) throw error;
    }
  }
}

/**
 * Reads identity.json written by ensureStateDir. A file from before host ids
 * names the same random per-directory id `ownerId`; it is read as the host id
 * and the file is left as it is.
 */
export function readIdentity(paths: StatePaths): Identity {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(paths.identity, 'utf8'));
  } catch (cause) {
    throw new AssentError('state_insecure', `cannot read ${paths.identity}; remove it so assent writes a new one`, { cause, details: { path: paths.identity } });
  }
  const value = parsed as (Partial<Identity> & { ownerId?: unknown }) | null;
  const hostId = value === null || typeof value !== 'object' ? undefined : (value.hostId ?? value.ownerId);
  if (value === null || typeof hostId !== 'string' || !HOST_ID_PATTERN.test(hostId) || typeof value.createdAt !== 'number') {
    throw new AssentError('state_insecure', `${paths.identity} is not an identity file (it needs a "hostId" of 32 hex digits); remove it so assent writes a new one`, {
      details: { path: paths.identity },
    });
  }
  return { hostId, createdAt: value.createdAt };
}

/**
 * Writes a file that must not exist yet (O_CREAT|O_EXCL, mode 0600), so a
 * planted file or symlink is never followed or overwritten. Throws
 * `conflict` with details.code "EEXIST" when the path is taken.
 */
export function writeFileNew(target: string, data: string | Uint8Array): void {
  let fd: number;
  try {
    fd = fs.openSync(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new AssentError('conflict', `${target} already exists; choose a new file name or remove the old file first`, {
        cause,
        details: { path: target, code },
      });
    }
    throw new AssentError('invalid_input', `cannot create ${target} (${code ?? 'error'}); check that its directory exists and is yours`, {
      cause,
      details: { path: target, code },
    });
  }
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } catch (cause) {
    // Ours (created just now, exclusively): a half-written file would be read as a damaged one, so it goes.
    fs.closeSync(fd);
    fs.rmSync(target, { force: true });
    const code = (cause as NodeJS.ErrnoException).code;
    const full = code === 'ENOSPC' || code === 'EDQUOT';
    throw new AssentError(full ? 'unavailable' : 'invalid_input', `cannot write ${target} (${code ?? 'error'}); ${full ? 'its device has no space left: free space there and retry' : 'check its device and retry'}`, {
      cause,
      details: { path: target, code },
    });
  }
  fs.closeSync(fd);
}
