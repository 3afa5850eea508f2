// `assent init`: writes config.json with the default policy spelled out (R-POL-8),
// never over an existing file unless forced, and then only after keeping a backup.
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { AssentError } from '../core/base/errors.js';
import { ensureStateDir, writeFileNew, type StatePaths } from '../state/statePaths.js';

export interface InitConfigOptions {
  force: boolean;
  now?: () => number;
}

export interface InitConfigResult {
  path: string;
  /** Where the file that was there is kept, when --force replaced one. */
  backup?: string;
}

function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** Writes `text` as config.json (0600, via a new file renamed into place). */
export function writeInitialConfig(paths: StatePaths, text: string, options: InitConfigOptions): InitConfigResult {
  ensureStateDir(paths);
  const exists = fs.existsSync(paths.config);
  if (exists && !options.force) {
    throw new AssentError('conflict', `${paths.config} already exists, so init leaves it alone; run "assent init --force" to replace it (the old file is kept as a backup)`, {
      details: { path: paths.config },
    });
  }
  const result: InitConfigResult = { path: paths.config };
  if (exists) {
    const backup = `${paths.config}.assent-backup-${stamp((options.now ?? Date.now)())}`;
    writeFileNew(backup, fs.readFileSync(paths.config));
    result.backup = backup;
  }
  const temp = `${paths.config}.init-${randomBytes(6).toString('hex')}`;
  writeFileNew(temp, text);
  fs.renameSync(temp, paths.config);
  return result;
}
