// R-SH-11 and the `--version` root of unsound allows: `--version` is allowed
// only for the programs in the version table, each with the reason it reads
// nothing of the project first; launchers are judged by the files they read,
// and real rustup and Maven show the harm of the old catch-all.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../../src/core/config/config.js';
import type { AgentPolicySnapshot } from '../../../../src/core/policy/agentPolicyConfig.js';
import { VERSION_PROGRAMS, VERSION_REFUSED } from '../../../../src/core/policy/programs/version.js';
import { judgeShell } from '../../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../../helpers/shellFixture.js';

let host: ShellHost;
let parser: ShellParser;
let snapshot: AgentPolicySnapshot;

beforeAll(async () => {
  host = makeShellHost();
  parser = await loadShellParser();
  snapshot = host.snapshot(DEFAULT_CONFIG.policy);
});
afterAll(() => host[Symbol.dispose]());

const decide = (command: string, cwd = host.cwd) => judgeShell(parser, snapshot, command, cwd);

/** A fresh project under the host's work folder with these files (a path ending in `/` is a folder). */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(host.root, 'work', 'v-'));
  for (const [path, text] of Object.entries(files)) {
    if (path.endsWith('/')) mkdirSync(join(dir, path), { recursive: true });
    else {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  }
  return dir;
}

function which(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

describe('the version table: every program whose --version is allowed, and why it reads nothing first', () => {
  it('each entry names its reason, and each one is allow in a plain project', () => {
    expect(VERSION_PROGRAMS.length).toBeGreaterThan(20);
    for (const program of VERSION_PROGRAMS) {
      expect(program.why.length, String(program.name)).toBeGreaterThan(20);
      const name = typeof program.name === 'string' ? program.name : ({ '^(node|nodejs)$': 'node', '^(npm|npx)$': 'npm', '^python[0-9.]*$': 'python3', '^pip[0-9.]*$': 'pip3', '^(ruby|gem)$': 'ruby', '^(cargo|rustc|rustup)$': 'cargo' } as Record<string, string>)[program.name.source] ?? program.name.source.replace(/^\^\(?|[()$|\\+?*].*$/g, '');
      for (const flag of program.flags) expect(decide(`${name} ${flag}`).decision, `${name} ${flag}`).toBe('allow');
    }
  });

  it('names outside the table prompt with the reason: launchers that read project files, and unknown programs', () => {
    for (const { name, why } of VERSION_REFUSED) {
      const verdict = decide(`${name} --version`);
      expect(verdict.decision, name).toBe('prompt');
      expect(verdict.parts[0]?.reason, name).toContain(why);
    }
    for (const command of ['frobnicate --version', 'mytool -V', './gradlew --version', './build.sh --version', 'node_modules/.bin/tsc --version', 'npx tsc --version']) {
      expect(decide(command).decision, command).not.toBe('allow');
    }
  });
});

describe('launchers are judged by the files they read', () => {
  it.each([
    ['cargo --version', { 'rust-toolchain.toml': '[toolchain]\npath = "tc"\n' }],
    ['rustc -V', { 'rust-toolchain': 'stable\n' }],
    ['rustup --version', { 'rust-toolchain.toml': '[toolchain]\nchannel = "stable"\n' }],
    ['node --version', { '.mise.toml': '[env]\n_.source = "./x.sh"\n' }],
    ['node -v', { '.tool-versions': 'nodejs path:./fake\n' }],
    ['npm --version', { '.nvmrc': '20\n' }],
    ['python3 --version', { '.python-version': 'system\n' }],
    ['ruby -v', { '.ruby-version': '3.2\n' }],
    ['java --version', { '.java-version': '17\n' }],
    ['python3 -V', { 'mise/config.toml': '[tools]\n' }],
  ])('%s prompts where %o exists', (command, files) => {
    const dir = project(files);
    const verdict = decide(command, dir);
    expect(verdict.decision).toBe('prompt');
    expect(verdict.parts[0]?.reason).toMatch(/version manager's shim/);
  });

  it('the file is looked for above the directory the command runs in, up to the cwd, and not above the cwd', () => {
    const dir = project({ 'rust-toolchain.toml': '[toolchain]\npath = "tc"\n', 'sub/': '' });
    expect(decide('cd sub && cargo --version', dir).decision).toBe('prompt');
    expect(decide('cargo --version', join(dir, 'sub')).decision).toBe('allow');
    expect(decide('cargo --version', dir).decision).toBe('prompt');
    expect(decide('echo stable > rust-toolchain; cargo --version', project({})).decision).toBe('prompt');
    expect(decide('cargo --version', project({ 'Cargo.toml': '[package]\n' })).decision).toBe('allow');
  });
});

describe('the harm, in real bash', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'assent-version-')));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.skipIf(!which('rustup'))("rustup's cargo proxy runs the toolchain a project's rust-toolchain.toml names", () => {
    const dir = join(scratch, 'rust');
    mkdirSync(join(dir, 'tc', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'tc', 'bin', 'cargo'), `#!/bin/sh\ntouch ${dir}/marker\n`);
    chmodSync(join(dir, 'tc', 'bin', 'cargo'), 0o755);
    writeFileSync(join(dir, 'rust-toolchain.toml'), `[toolchain]\npath = "${dir}/tc"\n`);
    spawnSync('/bin/bash', ['-c', 'cargo --version'], { cwd: dir, timeout: 30_000 });
    expect(existsSync(join(dir, 'marker'))).toBe(true);
    expect(decide('cargo --version', dir).decision).toBe('prompt');
  });

  it.skipIf(!which('mvn'))('JAVA_HOME=./fakejdk mvn --version runs the project\'s ./fakejdk/bin/java', () => {
    const dir = join(scratch, 'maven');
    mkdirSync(join(dir, 'fakejdk', 'bin'), { recursive: true });
    writeFileSync(join(dir, 'fakejdk', 'bin', 'java'), `#!/bin/sh\ntouch ${dir}/marker\n`);
    chmodSync(join(dir, 'fakejdk', 'bin', 'java'), 0o755);
    spawnSync('/bin/bash', ['-c', 'JAVA_HOME=./fakejdk mvn --version'], { cwd: dir, timeout: 60_000 });
    expect(existsSync(join(dir, 'marker'))).toBe(true);
    expect(decide('JAVA_HOME=./fakejdk mvn --version', dir).decision).toBe('prompt');
    expect(decide('mvn --version', dir).decision).toBe('prompt');
    expect(decide('mvn -v', dir).decision).toBe('prompt');
  });
});
