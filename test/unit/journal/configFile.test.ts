import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/core/base/canonical.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { AssentError } from '../../../src/core/base/errors.js';
import { inspectConfigFile, loadConfigFile } from '../../../src/journal/configFile.js';

describe('R-CFG-1/R-CFG-4 config file', () => {
  let tmp: string;
  let file: string;

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-config-'));
    file = path.join(tmp, 'config.json');
  });

  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a missing file means the defaults with the revision of the defaults', () => {
    expect(loadConfigFile(file)).toEqual({ config: DEFAULT_CONFIG, revision: digestOf(DEFAULT_CONFIG), problems: [], exists: false });
  });

  it('R-CFG-4 the revision is the digest of the exact text, so any edit changes it', () => {
    const text = '{"policy":{"default":"deny"}}';
    fs.writeFileSync(file, text);
    const loaded = loadConfigFile(file);
    expect(loaded.revision).toBe(digestOf(text));
    expect(loaded.config.policy.default).toBe('deny');
    fs.writeFileSync(file, `${text}\n`);
    expect(loadConfigFile(file).revision).not.toBe(loaded.revision);
  });

  it('invalid JSON is one problem at the document naming line and column', () => {
    fs.writeFileSync(file, '{\n  "policy": {\n    "default": "deny",\n  }\n}');
    const { config, problems } = inspectConfigFile(file);
    expect(config).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'error', path: '' });
    expect(problems[0]?.message).toMatch(/not valid JSON.*line 4, column 3/);
  });

  it('loadConfigFile throws config_invalid listing every problem; warnings alone load', () => {
    fs.writeFileSync(file, JSON.stringify({ policy: { default: 'x', consentTimeoutSeconds: 0 }, extra: 1 }));
    let caught: unknown;
    try {
      loadConfigFile(file);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AssentError);
    const error = caught as AssentError;
    expect(error.type).toBe('config_invalid');
    expect(error.message).toContain(file);
    expect(error.message).toContain('assent config check');
    expect((error.details?.['problems'] as unknown[]).length).toBe(3);
    fs.writeFileSync(file, JSON.stringify({ extra: 1 }));
    expect(loadConfigFile(file).problems).toEqual([expect.objectContaining({ severity: 'warning', path: 'extra' })]);
  });

  it('a key repeated in one object is an error at its path, so the file cannot say one thing and mean another', () => {
    fs.writeFileSync(
      file,
      '{"policy": {"default": "deny", "tools": {"a/b": "deny"}, "default": "allow"},\n "servers": {"x": {"command": "a", "args": ["\\"", {"k": 1, "k": 2}]}}}',
    );
    const { config, problems } = inspectConfigFile(file);
    expect(config).toBeUndefined();
    expect(problems.filter((p) => p.severity === 'error').map((p) => p.path)).toEqual(
      expect.arrayContaining(['policy.default', 'servers.x.args.1.k']),
    );
    expect(problems.find((p) => p.path === 'policy.default')?.message).toMatch(/more than once/);
    fs.writeFileSync(file, '{"policy": {"default": "deny"}, "web": {"default": "x"}}');
    expect(inspectConfigFile(file).problems.filter((p) => /more than once/.test(p.message))).toEqual([]);
  });

  it('a directory where the file should be is a clear error', () => {
    fs.mkdirSync(file);
    expect(() => inspectConfigFile(file)).toThrow(expect.objectContaining({ type: 'invalid_input', message: expect.stringContaining(file) }));
  });
});
