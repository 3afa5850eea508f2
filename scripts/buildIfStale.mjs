// `npm start` builds dist/ first when it is missing or older than what it is
// built from, so that a fresh clone runs with `npm ci && npm start` and a
// restart after no change starts at once. (The package has no `prepare`
// script: npm's install-script policy would flag it on every install of the
// packed tarball, where dist/ is already built.)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const built = join(root, 'dist', 'bin', 'assent.js');

/** The newest modification time under `path` (a file or a folder), 0 when it is absent. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const sources = Math.max(newest(join(root, 'src')), newest(join(root, 'scripts')), newest(join(root, 'package.json')), newest(join(root, 'tsconfig.build.json')));
const output = newest(built);
if (output === 0 || output < sources) {
  const npm = process.env['npm_execpath'];
  const result = npm === undefined ? spawnSync('npm', ['run', 'build'], { stdio: 'inherit', cwd: root }) : spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit', cwd: root });
  process.exit(result.status ?? 1);
}
