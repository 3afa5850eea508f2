import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssentError } from '../../../src/core/base/errors.js';
import {
  checkPrivateDir,
  ensureStateDir,
  readIdentity,
  resolveStatePaths,
  writeFileNew,
  type StatePaths,
} from '../../../src/state/statePaths.js';

function caught(fn: () => unknown): AssentError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AssentError) return error;
    throw error;
  }
  throw new TypeError('expected an AssentError');
}

describe('R-STATE-2..4 resolveStatePaths', () => {
  it('defaults to ~/.assent and names every state file inside it', () => {
    const paths = resolveStatePaths({}, '/home/me', 'linux');
    expect(paths).toEqual({
      home: '/home/me/.assent',
      config: '/home/me/.assent/config.json',
      identity: '/home/me/.assent/identity.json',
      socket: '/home/me/.assent/daemon.sock',
      pid: '/home/me/.assent/daemon.pid',
      log: '/home/me/.assent/daemon.log',
      journal: '/home/me/.assent/journal.db',
      auditDir: '/home/me/.assent/audit',
      spawnLock: '/home/me/.assent/daemon.spawn.lock',
    });
  });

  it('R-STATE-4 resolves a relative ASSENT_HOME against the home directory, not the current one, and expands ~', () => {
    expect(resolveStatePaths({ ASSENT_HOME: 'state/assent' }, '/home/me', 'linux').home).toBe('/home/me/state/assent');
    expect(resolveStatePaths({ ASSENT_HOME: '~/x' }, '/home/me', 'linux').home).toBe('/home/me/x');
    expect(resolveStatePaths({ ASSENT_HOME: '~' }, '/home/me', 'linux').home).toBe('/home/me');
    expect(resolveStatePaths({ ASSENT_HOME: '/abs/dir' }, '/home/me', 'linux').config).toBe('/abs/dir/config.json');
  });

  it('R-STATE-3 ASSENT_SOCKET overrides the socket path', () => {
    expect(resolveStatePaths({ ASSENT_SOCKET: '/tmp/a.sock' }, '/home/me', 'linux').socket).toBe('/tmp/a.sock');
  });

  it('R-STATE-3 a socket path over the platform limit is a clear invalid_input error naming the path and the fix', () => {
    const long = `/tmp/${'x'.repeat(110)}.sock`;
    const error = caught(() => resolveStatePaths({ ASSENT_SOCKET: long }, '/home/me', 'linux'));
    expect(error.type).toBe('invalid_input');
    expect(error.message).toContain(long);
    expect(error.message).toContain('ASSENT_SOCKET');
    const deepHome = `/${'d'.repeat(100)}`;
    expect(caught(() => resolveStatePaths({ ASSENT_HOME: deepHome }, '/home/me', 'linux')).message).toContain(`${deepHome}/daemon.sock`);
    // 107 bytes fits on Linux, not on macOS (103).
    const exact = `/${'y'.repeat(106)}`;
    expect(resolveStatePaths({ ASSENT_SOCKET: exact }, '/home/me', 'linux').socket).toBe(exact);
    expect(caught(() => resolveStatePaths({ ASSENT_SOCKET: exact }, '/home/me', 'darwin')).type).toBe('invalid_input');
  });
});

describe('R-STATE-1 ensureStateDir', () => {
  let tmp: string;
  let paths: StatePaths;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-state-'));
    paths = resolveStatePaths({ ASSENT_HOME: path.join(tmp, 'home') }, tmp, 'linux');
  });

  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('R-TEAM-3 creates the directory 0700 and identity.json 0600 with a random hostId of 32 hex digits, once', () => {
    ensureStateDir(paths, { random: (n) => new Uint8Array(n).fill(0xab), now: () => 42 });
    expect(fs.statSync(paths.home).mode & 0o777).toBe(0o700);
    expect(fs.statSync(paths.auditDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(paths.identity).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(paths.identity, 'utf8'))).toEqual({ hostId: 'ab'.repeat(16), createdAt: 42 });
    expect(readIdentity(paths)).toEqual({ hostId: 'ab'.repeat(16), createdAt: 42 });
    ensureStateDir(paths, { random: (n) => new Uint8Array(n).fill(0xcd), now: () => 43 });
    expect(readIdentity(paths).hostId).toBe('ab'.repeat(16));
  });

  it('R-TEAM-3 an identity.json from before host ids (ownerId) is read as the host id and left unchanged', () => {
    fs.mkdirSync(paths.home, { mode: 0o700 });
    const legacy = `${JSON.stringify({ ownerId: '0123456789abcdef'.repeat(2), createdAt: 7 })}\n`;
    fs.writeFileSync(paths.identity, legacy, { mode: 0o600 });
    ensureStateDir(paths);
    expect(readIdentity(paths)).toEqual({ hostId: '0123456789abcdef'.repeat(2), createdAt: 7 });
    expect(fs.readFileSync(paths.identity, 'utf8')).toBe(legacy);
  });

  it('R-TEAM-3 an identity.json whose hostId is not 32 hex digits is refused with the fix', () => {
    fs.mkdirSync(paths.home, { mode: 0o700 });
    fs.writeFileSync(paths.identity, JSON.stringify({ hostId: 'not-hex', createdAt: 1 }), { mode: 0o600 });
    const error = caught(() => readIdentity(paths));
    expect(error.type).toBe('state_insecure');
    expect(error.message).toMatch(/"hostId" of 32 hex digits.*remove it/);
  });

  it('refuses a state directory with mode 0770, naming the path and the chmod fix', () => {
    fs.mkdirSync(paths.home, { mode: 0o700 });
    fs.chmodSync(paths.home, 0o770);
    const error = caught(() => ensureStateDir(paths));
    expect(error.type).toBe('state_insecure');
    expect(error.message).toContain(`chmod 700 ${paths.home}`);
    expect(fs.existsSync(paths.identity)).toBe(false);
  });

  it('R-STATE-1 (hardening 1) refuses a world-writable state directory without advising chmod: files may have been planted there', () => {
    fs.mkdirSync(paths.home, { mode: 0o700 });
    fs.chmodSync(paths.home, 0o777);
    const error = caught(() => ensureStateDir(paths));
    expect(error.type).toBe('state_insecure');
    expect(error.message).toContain(paths.home);
    expect(error.message).not.toContain('chmod');
    expect(error.message).toContain('private directory');
    expect(fs.existsSync(paths.identity)).toBe(false);
  });

  it('refuses a state directory owned by another user, naming the path and the fix', () => {
    fs.mkdirSync(paths.home, { mode: 0o700 });
    const otherOwner = (target: string): fs.Stats => Object.assign(fs.statSync(target), { uid: 4242 });
    const error = caught(() => ensureStateDir(paths, { stat: otherOwner, getuid: () => 1000 }));
    expect(error.type).toBe('state_insecure');
    expect(error.message).toContain(paths.home);
    expect(error.message).toMatch(/uid 4242.*ASSENT_HOME|chown/);
  });

  it('R-STATE-1 (hardening 1) never advises changing a shared system directory: /tmp, /var/tmp, / and $HOME get "choose a private directory"', () => {
    const dirStat = (uid: number, mode: number) => (): { uid: number; mode: number; isDirectory(): boolean } => ({ uid, mode, isDirectory: () => true });
    const cases: Array<[string, number, number]> = [
      ['/tmp', 0, 0o41777],
      ['/var/tmp', 0, 0o41777],
      ['/', 0, 0o40755],
      ['/home/me', 1000, 0o40775],
      [path.join(tmp, 'shared'), 1000, 0o41777],
      [path.join(tmp, 'open'), 1000, 0o40777 | 0o002],
    ];
    for (const [dir, uid, mode] of cases) {
      const error = caught(() => checkPrivateDir(dir, { stat: dirStat(uid, mode), getuid: () => 1000, homedir: () => '/home/me' }));
      expect(error.type, dir).toBe('state_insecure');
      expect(error.message, dir).toContain(dir);
      expect(error.message, dir).not.toMatch(/chmod|chown/);
      expect(error.message, dir).toContain('~/.assent');
    }
    // A private directory of the user's own still gets the exact fix.
    const own = path.join(tmp, 'mine');
    expect(caught(() => checkPrivateDir(own, { stat: dirStat(1000, 0o40770), getuid: () => 1000, homedir: () => '/home/me' })).message).toContain(`chmod 700 ${own}`);
  });

  it('R-STATE-1 (hardening 1) a missing parent of ASSENT_HOME is an error naming it; nothing is created', () => {
    const deep = resolveStatePaths({ ASSENT_HOME: path.join(tmp, 'a', 'b', 'state') }, tmp, 'linux');
    const error = caught(() => ensureStateDir(deep));
    expect(error.type).toBe('invalid_input');
    expect(error.message).toContain(path.join(tmp, 'a', 'b'));
    expect(error.message).toContain('ASSENT_HOME');
    expect(fs.existsSync(path.join(tmp, 'a'))).toBe(false);
    // The state dir itself is created when its parent exists.
    ensureStateDir(paths);
    expect(fs.statSync(paths.home).isDirectory()).toBe(true);
  });

  it('accepts 0755 (not writable by others) and refuses a file where the directory should be', () => {
    fs.mkdirSync(paths.home, { mode: 0o755 });
    fs.chmodSync(paths.home, 0o755);
    expect(() => checkPrivateDir(paths.home)).not.toThrow();
    const file = path.join(tmp, 'file');
    fs.writeFileSync(file, 'x');
    expect(caught(() => checkPrivateDir(file)).message).toContain(file);
  });
});

describe('writeFileNew', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-new-'));
  });
  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('creates a 0600 file and refuses to overwrite or follow a symlink', () => {
    const target = path.join(tmp, 'proof');
    writeFileNew(target, 'one');
    expect(fs.readFileSync(target, 'utf8')).toBe('one');
    expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    const error = caught(() => writeFileNew(target, 'two'));
    expect(error.type).toBe('conflict');
    expect(fs.readFileSync(target, 'utf8')).toBe('one');
    const link = path.join(tmp, 'link');
    fs.symlinkSync(path.join(tmp, 'elsewhere'), link);
    expect(() => writeFileNew(link, 'x')).toThrow(AssentError);
    expect(fs.existsSync(path.join(tmp, 'elsewhere'))).toBe(false);
  });
});
