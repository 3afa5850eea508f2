// Reading the confirmed configuration without a daemon (hardening 3, R-CFG-4):
// read-only, never creating or migrating the journal, and saying why when
// there is nothing to read.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodePin, FAIL_CLOSED_CONFIG, pinFromJournal, PINNED_CONFIG_KEY, readConfirmedConfig } from '../../../src/journal/confirmedConfig.js';
import { compilePolicy, evaluateToolPolicy } from '../../../src/core/policy/toolPolicy.js';
import { Journal } from '../../../src/journal/journal.js';

let tmp: string;
let file: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-confirmed-'));
  file = path.join(tmp, 'journal.db');
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const TEXT = JSON.stringify({ servers: { fs: { command: 'true' } }, policy: { default: 'deny', tools: { 'fs/read_file': 'allow' } } });

describe('R-CFG-4 readConfirmedConfig (hardening 3)', () => {
  it('returns the configuration the daemon pinned, with its revision', () => {
    const journal = Journal.open(file);
    journal.writeMeta(PINNED_CONFIG_KEY, encodePin({ revision: 'v1:sha256:abc', text: TEXT }));
    journal.close();
    const read = readConfirmedConfig(file, '/home/me/.assent/config.json');
    expect(read).toMatchObject({ ok: true, revision: 'v1:sha256:abc', config: { policy: { default: 'deny', tools: { 'fs/read_file': 'allow' } } } });
  });

  it('never creates a journal, and says there is none', () => {
    const read = readConfirmedConfig(file, '/home/me/.assent/config.json');
    expect(read).toMatchObject({ ok: false });
    expect(read.ok ? '' : read.why).toContain('no assent daemon has run for this state directory');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('never migrates: an older journal keeps its schema version; a journal without a pin says so', () => {
    const db = new Database(file);
    db.exec("CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1); CREATE TABLE daemon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);");
    db.close();
    const read = readConfirmedConfig(file, '/home/me/.assent/config.json');
    expect(read.ok ? '' : read.why).toContain('holds no confirmed configuration');
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT version FROM schema_version').get()).toEqual({ version: 1 });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE name = 'calls_in_progress'").get()).toBeUndefined();
    after.close();
  });

  it('a stored pin that no longer validates is not used', () => {
    const journal = Journal.open(file);
    journal.writeMeta(PINNED_CONFIG_KEY, encodePin({ revision: 'v1:sha256:abc', text: '{"policy":{"default":"sometimes"}}' }));
    journal.close();
    const read = readConfirmedConfig(file, '/home/me/.assent/config.json');
    expect(read.ok ? '' : read.why).toContain('no longer validates');
    expect(read).toMatchObject({ ok: false, invalid: true });
  });
});

describe('R-CFG-4 pinFromJournal: a stored pin that no longer validates runs fail-closed (hardening pin 1)', () => {
  const configPath = '/home/me/.assent/config.json';

  it('a valid pin is the configuration it stands for', () => {
    const pinned = pinFromJournal(encodePin({ revision: 'v1:sha256:abc', text: TEXT }), configPath);
    expect(pinned).toMatchObject({ revision: 'v1:sha256:abc', path: configPath, config: { policy: { default: 'deny' } } });
    expect(pinned.invalid).toBeUndefined();
  });

  it.each([
    ['a policy key naming an unknown alias', '{"policy":{"tools":{"ghost/x":"allow"}}}', 'policy.tools.ghost/x'],
    ['an unknown key inside policy', '{"policy":{"defualt":"allow"}}', 'policy.defualt'],
  ])('%s: no servers, every call denied, and the problem named with `assent config reload`', (_name, text, problemPath) => {
    const pinned = pinFromJournal(encodePin({ revision: 'v1:sha256:old', text }), configPath);
    expect(pinned.config).toBe(FAIL_CLOSED_CONFIG);
    expect(pinned.config.servers).toEqual({});
    expect(pinned.revision).not.toBe('v1:sha256:old');
    expect(pinned.invalid?.revision).toBe('v1:sha256:old');
    expect(pinned.invalid?.problems.map((p) => p.path)).toContain(problemPath);
    expect(pinned.invalid?.message).toContain('assent config reload');
    expect(pinned.path).toContain('assent config reload');
    const snapshot = compilePolicy(pinned.config.policy, []);
    for (const annotations of [{ readOnlyHint: true }, { destructiveHint: true }, {}]) {
      expect(evaluateToolPolicy(snapshot, { server: 'fs', tool: 'read_file', args: {}, annotations }, 0).decision).toBe('deny');
    }
  });

  it('a stored record that is not even JSON runs fail-closed too', () => {
    const pinned = pinFromJournal('{not json', configPath);
    expect(pinned.config).toBe(FAIL_CLOSED_CONFIG);
    expect(pinned.invalid?.revision).toBeUndefined();
    expect(pinned.invalid?.message).toContain('assent config reload');
  });
});
