// The confined run's entry (R-SH-14) as one CommonJS file: tsc's output of
// heads/cli/commands/confine.ts and every module it loads, in
// dist/bin/assent-confine.bundle.js, which dist/bin/assent-confine.js (the
// entry, src/bin/assent-confine.ts) compiles and runs. Of the policy's
// configuration module it takes only the two lists the sandbox profile reads
// (the credential locations and the gate files): the rest loads zod and the
// policy compilers, most of what `assent confine` spent starting. Then one
// trial run fills the bundle's V8 code cache, dist/bin/assent-confine.bundle.cache
// (scripts/confineCodeCache.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { binDir, bundleEntry, root } from './bundleEntry.mjs';

export const CONFINE_BUNDLE = join(binDir, 'assent-confine.bundle.js');
const CACHE = join(binDir, 'assent-confine.bundle.cache');

export async function bundleConfine() {
  const { modules } = await bundleEntry({
    input: join(root, 'dist', 'heads', 'cli', 'commands', 'confine.js'),
    bundleFile: CONFINE_BUNDLE,
    mark: '// Bundled by scripts/bundleConfine.mjs',
    comments: false,
    dataModules: { [join(root, 'dist', 'core', 'policy', 'agentPolicyConfig.js')]: ['CREDENTIALS', 'GATE_FILE_GLOBS'] },
  });
  const heavy = modules.filter((id) => /node_modules[\\/](zod|commander)[\\/]/.test(id));
  if (heavy.length > 0) throw new Error(`the confine bundle loads ${heavy.join(', ')}; it is meant to start without the CLI and zod (scripts/bundleConfine.mjs)`);

  rmSync(CACHE, { force: true });
  const trial = spawnSync(process.execPath, [join(root, 'scripts', 'confineCodeCache.mjs')], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
  if (trial.status !== 0 || !existsSync(CACHE)) throw new Error(`the bundled confine entry failed its trial run (exit ${trial.status}): ${trial.stdout}${trial.stderr}`);
}
