// R-POL-8 (agent actions, init): `assent init` writes the default policy to
// config.json, refuses to replace an existing file, and with --force keeps a backup.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { AssentError } from '../../../src/core/base/errors.js';
import { defaultConfigDocument } from '../../../src/heads/cli/commands/init.js';
import { loadConfigFile } from '../../../src/journal/configFile.js';
import { writeInitialConfig } from '../../../src/journal/initConfig.js';
import { resolveStatePaths } from '../../../src/state/statePaths.js';

describe('R-POL-8 assent init', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-init-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const paths = () => resolveStatePaths({ ASSENT_HOME: path.join(tmp, 'state') }, tmp);
  const text = `${JSON.stringify(defaultConfigDocument(), null, 2)}\n`;

  it('writes a config.json (0600) that validates and decides exactly like no file at all', () => {
    const result = writeInitialConfig(paths(), text, { force: false });
    expect(result).toEqual({ path: paths().config });
    expect(fs.statSync(paths().config).mode & 0o777).toBe(0o600);
    const loaded = loadConfigFile(paths().config);
    expect(loaded.problems).toEqual([]);
    expect(loaded.config).toEqual(DEFAULT_CONFIG);
    expect(JSON.parse(fs.readFileSync(paths().config, 'utf8')).policy.paths.rules[0]).toEqual({ glob: '~/.ssh/**', access: 'any', decision: 'deny' });
  });

  it('refuses to replace an existing file, which stays as it was', () => {
    fs.mkdirSync(path.join(tmp, 'state'), { mode: 0o700 });
    fs.writeFileSync(paths().config, '{"policy":{"default":"deny"}}', { mode: 0o600 });
    expect(() => writeInitialConfig(paths(), text, { force: false })).toThrow(AssentError);
    expect(() => writeInitialConfig(paths(), text, { force: false })).toThrow(/already exists.*--force/);
    expect(fs.readFileSync(paths().config, 'utf8')).toBe('{"policy":{"default":"deny"}}');
  });

  it('--force replaces it and keeps the old file beside it as a backup', () => {
    fs.mkdirSync(path.join(tmp, 'state'), { mode: 0o700 });
    fs.writeFileSync(paths().config, '{"policy":{"default":"deny"}}', { mode: 0o600 });
    const result = writeInitialConfig(paths(), text, { force: true, now: () => Date.UTC(2026, 0, 2, 3, 4, 5) });
    expect(result.backup).toBe(`${paths().config}.assent-backup-20260102T030405Z`);
    expect(fs.readFileSync(result.backup as string, 'utf8')).toBe('{"policy":{"default":"deny"}}');
    expect(fs.readFileSync(paths().config, 'utf8')).toBe(text);
  });
});
