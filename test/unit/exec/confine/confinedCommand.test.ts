// R-SH-14: a confined run does not prove the sandbox before it starts (no
// `bwrap --version`, no trial sandbox on every command); a bwrap that cannot
// build the sandbox still runs nothing, and the run then says why and exits
// 126. Stand-in bwraps play the hosts where it fails; the real one, where
// present, passes the command's own exit code through.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CANNOT_RUN, runConfinedCommand } from '../../../../src/exec/confine/confinedCommand.js';
import { buildSandboxProfile } from '../../../../src/exec/confine/sandboxProfile.js';
import { sandboxStatus } from '../../../../src/exec/confine/sandboxRun.js';
import { repositoryLocation } from '../../../../src/shell/gitRepository.js';
import { cleanupsAfterEach } from '../../../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

interface Fixture {
  base: string;
  project: string;
  home: string;
  said: string[];
  run(command: string, options?: { path?: string; profile?: string; trusted?: readonly string[] }): Promise<number>;
}

function fixture(): Fixture {
  const base = mkdtempSync(join(tmpdir(), 'assent-confined-'));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  const said: string[] = [];
  return {
    base,
    project,
    home,
    said,
    run: (command, options = {}) =>
      runConfinedCommand({
        command,
        ...(options.trusted === undefined ? {} : { trustedDirs: options.trusted }),
        ...(options.profile === undefined ? {} : { profile: options.profile }),
        cwd: project,
        home,
        assentHome: join(home, '.assent'),
        env: { PATH: options.path ?? process.env['PATH'] ?? SYSTEM_PATH, HOME: home },
        locateRepository: repositoryLocation,
        say: (text) => said.push(text),
        stdio: ['ignore', 'ignore', 'ignore'],
      }),
  };
}

/** A directory holding a stand-in `bwrap` (the script) ahead of the system's PATH. */
function standInBwrap(base: string, script: string): string {
  const bin = join(base, `bin-${String(Math.random()).slice(2, 8)}`);
  mkdirSync(bin);
  writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, 'bwrap'), 0o755);
  return `${bin}:${SYSTEM_PATH}`;
}

/** The stand-in's directory and the system's: trusted, so the stand-in is the bwrap used. */
const trustingStandIn = (path: string): string[] => [path.split(':')[0] as string, '/usr/local/bin', '/usr/bin', '/bin'];

describe('R-SH-14 a confined run whose sandbox does not start runs nothing and says why', () => {
  it('without bwrap on PATH: 126, the reason, nothing run', async () => {
    const f = fixture();
    const bin = join(f.base, 'empty-bin');
    mkdirSync(bin);
    expect(await f.run('touch ran', { path: bin })).toBe(CANNOT_RUN);
    expect(f.said.join('\n')).toMatch(/the sandbox is not available: bwrap \(bubblewrap\) is not on PATH .*; nothing was run/);
    expect(existsSync(join(f.project, 'ran'))).toBe(false);
  });

  it('a bwrap too old for --disable-userns: 126, named with its version, nothing run', async () => {
    const f = fixture();
    const path = standInBwrap(f.base, 'if [ "$1" = --version ]; then echo "bubblewrap 0.6.1"; exit 0; fi\necho "bwrap: Unknown option --disable-userns" >&2; exit 1');
    expect(await f.run('touch ran', { path, trusted: trustingStandIn(path) })).toBe(CANNOT_RUN);
    expect(f.said.join('\n')).toMatch(/the sandbox did not start: .*bubblewrap 0\.6\.1, older than 0\.8\.0.*; nothing was run/);
    expect(existsSync(join(f.project, 'ran'))).toBe(false);
  });

  it('user namespaces refused: 126, with the sysctl that allows them, nothing run', async () => {
    const f = fixture();
    const path = standInBwrap(f.base, 'if [ "$1" = --version ]; then echo "bubblewrap 0.9.0"; exit 0; fi\necho "bwrap: setting up uid map: Permission denied" >&2; exit 1');
    expect(await f.run('touch ran', { path, trusted: trustingStandIn(path) })).toBe(CANNOT_RUN);
    expect(f.said.join('\n')).toMatch(/the sandbox did not start: user namespaces are refused .*sysctl/);
    expect(existsSync(join(f.project, 'ran'))).toBe(false);
  });

  it('a bwrap the agent could have written (outside the system directories) is never used: the command does not run through it', async () => {
    const f = fixture();
    // A "bwrap" that just runs the command, unconfined: ahead of everything else on PATH, and alone.
    const alone = standInBwrap(f.base, 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"').split(':')[0] as string;
    expect(await f.run('touch ran', { path: alone })).toBe(CANNOT_RUN);
    expect(f.said.join('\n')).toMatch(/the only bwrap on PATH is .*outside the system's directories.*not used/);
    expect(existsSync(join(f.project, 'ran'))).toBe(false);
  });

  it('another layout than the decision\'s: 126 naming both digests, nothing run', async () => {
    const f = fixture();
    const wrong = '0'.repeat(64);
    expect(await f.run('touch ran', { profile: wrong })).toBe(CANNOT_RUN);
    expect(f.said.join('\n')).toMatch(new RegExp(`decided as ${wrong}, but ${f.project} now gives [0-9a-f]{64}: the project's layout changed`));
    expect(existsSync(join(f.project, 'ran'))).toBe(false);
  });
});

describe.skipIf(!sandboxStatus().available)('R-SH-14 a confined run on a host whose sandbox works', () => {
  it('runs the command for the decided layout and passes its exit code through, a failing one too', async () => {
    const f = fixture();
    const decided = buildSandboxProfile({ cwd: f.project, home: f.home, assentHome: join(f.home, '.assent'), env: {}, locateRepository: repositoryLocation }).digest;
    expect(await f.run('touch ran', { profile: decided })).toBe(0);
    expect(existsSync(join(f.project, 'ran'))).toBe(true);
    expect(await f.run('exit 3', { profile: decided })).toBe(3);
    expect(f.said).toEqual([]);
  });
});
