// R-SH-14: the digest a decision names is the layout's. The daemon builds the
// profile without the agent's environment; the confined run builds it once
// with the agent's and must name the same layout digest, whatever that
// environment holds — secrets, caches, a runtime directory under /run or one
// elsewhere, which adds a mount of its own.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../src/core/base/canonical.js';
import { buildSandboxProfile, type SandboxProfileOptions } from '../../../../src/exec/confine/sandboxProfile.js';
import { repositoryLocation } from '../../../../src/shell/gitRepository.js';
import { cleanupsAfterEach } from '../../../helpers/cleanups.js';

const cleanups = cleanupsAfterEach();
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function layout(): Omit<SandboxProfileOptions, 'env'> & { base: string } {
  const base = mkdtempSync(join(tmpdir(), 'assent-profile-'));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const home = join(base, 'home');
  const project = join(home, 'project');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  for (const dir of ['hooks', 'objects', 'refs']) mkdirSync(join(project, '.git', dir), { recursive: true });
  mkdirSync(join(project, 'src'));
  writeFileSync(join(project, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(project, '.git', 'config'), '[core]\n\tbare = false\n');
  writeFileSync(join(project, '.env'), 'TOKEN=x\n');
  return { base, cwd: join(project, 'src'), home, assentHome: join(home, '.assent'), locateRepository: repositoryLocation };
}

describe('R-SH-14 the layout digest a confined run checks against the decision', () => {
  it('is the digest of the profile built without the environment, for environments that only add variables', () => {
    const { base: _base, ...options } = layout();
    const decided = buildSandboxProfile({ ...options, env: {} });
    expect(decided.layoutDigest).toBe(decided.digest);
    for (const env of [
      { PATH: '/usr/bin:/bin', HOME: options.home, LANG: 'C.UTF-8' },
      { GITHUB_TOKEN: 'x', SERVICE_URL: 'postgres://u:pw@db/x', BASH_ENV: '/x', KEEP_ME: 'kept' },
      { npm_config_cache: '/elsewhere', XDG_CACHE_HOME: '/elsewhere', TMPDIR: '/var/tmp', ASSENT_CONFINED: '0' },
      { XDG_RUNTIME_DIR: '/run/user/1000' },
      { XDG_RUNTIME_DIR: 'relative/dir' },
    ]) {
      const run = buildSandboxProfile({ ...options, env });
      expect(run.layoutDigest, JSON.stringify(env)).toBe(decided.digest);
      expect(run.args, JSON.stringify(env)).toEqual(decided.args);
    }
    // A variable the agent has is in the run's environment, so the run's own digest differs.
    expect(buildSandboxProfile({ ...options, env: { KEEP_ME: 'kept' } }).digest).not.toBe(decided.digest);
  });

  it('is still the decision\'s when the environment adds a mount (a runtime directory outside /run)', () => {
    const { base: _base, ...options } = layout();
    // Outside /tmp, which the sandbox hides whole: a runtime directory there would add nothing.
    mkdirSync(join(REPO_ROOT, 'test-output'), { recursive: true });
    const runtime = mkdtempSync(join(REPO_ROOT, 'test-output', 'runtime-'));
    cleanups.push(() => rmSync(runtime, { recursive: true, force: true }));
    const decided = buildSandboxProfile({ ...options, env: {} });
    const run = buildSandboxProfile({ ...options, env: { XDG_RUNTIME_DIR: runtime } });
    expect(run.hidden).toContain(runtime);
    expect(run.args).not.toEqual(decided.args);
    expect(run.layoutDigest).toBe(decided.digest);
  });

  it('is the sha256 of the canonical JSON of the bwrap words and the variable names', () => {
    const { base: _base, ...options } = layout();
    const profile = buildSandboxProfile({ ...options, env: { KEEP_ME: 'kept', 'ODD\u00e9\u{1f600}"\\': 'x' } });
    expect(profile.digest).toBe(createHash('sha256').update(canonicalJson({ args: profile.args, env: Object.keys(profile.env).sort() })).digest('hex'));
  });

  it('changes with the layout: a gate file that appears is another digest', () => {
    const { base: _base, ...options } = layout();
    expect(buildSandboxProfile({ ...options, env: {} }).root).toBe(join(options.home, 'project'));
    const before = buildSandboxProfile({ ...options, env: { KEEP_ME: 'kept' } }).layoutDigest;
    mkdirSync(join(options.cwd, '..', '.vscode'));
    expect(buildSandboxProfile({ ...options, env: { KEEP_ME: 'kept' } }).layoutDigest).not.toBe(before);
  });
});
