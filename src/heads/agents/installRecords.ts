// What `assent install` wrote, per settings file, so `assent uninstall` can put
// back the exact bytes that were there before: $ASSENT_HOME/installs.json
// (0600) holds, per file, the digest of the bytes install wrote and where the
// bytes before it are (the backup beside the file, or "there was no file").
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssentError } from '../../core/base/errors.js';
import { ensureStateDir, writeFileNew, type StatePaths } from '../../state/statePaths.js';
import type { AgentId, InstallScope } from './agentTargets.js';
import { isJsonObject } from './settingsFiles.js';

export interface InstallRecord {
  agent: AgentId;
  scope: InstallScope;
  /** What install wrote into the file. */
  kinds: ('hooks' | 'mcp')[];
  /** sha256 of the file's bytes as install left them. */
  afterDigest: string;
  /** sha256 of the bytes before the first install that this record covers; undefined when there was no file. */
  beforeDigest?: string;
  /** The backup holding those bytes; undefined when there was no file. */
  backup?: string;
  /** Directories install created for the file, outermost first. */
  createdDirs: string[];
  installedAt: string;
}

export type InstallRecords = Record<string, InstallRecord>;

export function digestText(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function recordsPath(paths: StatePaths): string {
  return path.join(paths.home, 'installs.json');
}

/** Reads installs.json; missing or unreadable means no records (uninstall then removes entries structurally). */
export function readInstallRecords(paths: StatePaths): InstallRecords {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(recordsPath(paths), 'utf8'));
  } catch {
    return {};
  }
  const files = isJsonObject(parsed) ? parsed['files'] : undefined;
  if (!isJsonObject(files)) return {};
  const records: InstallRecords = {};
  for (const [file, value] of Object.entries(files)) {
    if (isJsonObject(value) && typeof value['afterDigest'] === 'string' && Array.isArray(value['createdDirs']) && Array.isArray(value['kinds'])) records[file] = value as unknown as InstallRecord;
  }
  return records;
}

/** Writes installs.json atomically (0600) in the private state directory. */
export function writeInstallRecords(paths: StatePaths, records: InstallRecords): void {
  ensureStateDir(paths);
  const target = recordsPath(paths);
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileNew(temp, `${JSON.stringify({ version: 1, files: records }, null, 2)}\n`);
  try {
    fs.renameSync(temp, target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw new AssentError('invalid_input', `cannot write ${target} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the state directory`, { cause: error, details: { path: target } });
  }
}
