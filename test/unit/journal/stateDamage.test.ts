// Issue 35: what counts as a damaged state file, at the edges the daemon's
// start and `assent doctor` must tell apart (test/integration/faults/damagedState.test.ts
// runs each damage against a real daemon).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, lineDigest } from '../../../src/journal/auditLog.js';
import { verifyAudit } from '../../../src/journal/auditReaders.js';
import { isCutShortJson } from '../../../src/journal/configFile.js';
import { pinDamage, pinWrites, PINNED_CONFIG_KEY, DAMAGED_PIN_KEY } from '../../../src/journal/confirmedConfig.js';
import { findTornAuditTail } from '../../../src/journal/stateDamage.js';
import { applyAuditRepair, planAuditRepair } from '../../../src/journal/stateRepair.js';
import { ensureStateDir, resolveStatePaths } from '../../../src/state/statePaths.js';

const clock = { now: () => Date.parse('2026-01-01T10:00:00Z'), monotonic: () => 0 };

let root: string;
let dir: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-damage-'));
  dir = path.join(root, 'audit');
  fs.mkdirSync(dir);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

async function writeLines(count: number): Promise<string> {
  const log = new AuditLog({ dir, clock });
  for (let i = 0; i < count; i += 1) log.append({ ts: new Date(clock.now()).toISOString(), principal: 'me@host', server: 'fs', tool: 'read', argsSha256: 'x', outcome: 'ok' });
  await log.close();
  return path.join(dir, '2026-01-01.jsonl');
}

describe('issue 35 a torn audit tail', () => {
  it('a whole last record without its newline is not torn (the writer adds the newline); one cut in its JSON is, with its line and offset', async () => {
    const file = await writeLines(3);
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.slice(0, -1));
    expect(findTornAuditTail(dir)).toBeUndefined();
    const third = text.split('\n')[2] ?? '';
    fs.writeFileSync(file, text.slice(0, text.length - 20));
    expect(findTornAuditTail(dir)).toEqual({ file, line: 3, offset: text.length - third.length - 1, bytes: third.length - 19, endsWithNewline: false });
  });

  it('the zero bytes a file system leaves after power loss are a torn line, even ending in a newline; the repair cuts them and the chain verifies', async () => {
    const file = await writeLines(2);
    const whole = fs.readFileSync(file);
    fs.appendFileSync(file, Buffer.concat([Buffer.alloc(4096), Buffer.from('\n')]));
    expect(findTornAuditTail(dir)).toMatchObject({ line: 3, offset: whole.length, bytes: 4097, endsWithNewline: true });
    expect(verifyAudit(dir).firstBroken).toMatchObject({ line: 3, reason: expect.stringMatching(/^torn last line: not valid JSON/), fix: expect.stringContaining('assent audit repair') });
    const paths = resolveStatePaths({ ASSENT_HOME: root });
    ensureStateDir(paths);
    const now = new Date(clock.now());
    const plan = planAuditRepair(dir, now);
    expect(plan).toBeDefined();
    const result = applyAuditRepair(paths, plan!, now);
    expect(fs.readFileSync(result.backup).length).toBe(whole.length + 4097);
    expect(result.verification).toEqual({ ok: true, lines: 3 });
    expect(findTornAuditTail(dir)).toBeUndefined();
  });

  it('an empty newest day file is passed over: the torn line of the day before is found', async () => {
    const file = await writeLines(1);
    fs.appendFileSync(file, '{"seq":2,"pr');
    fs.writeFileSync(path.join(dir, '2026-01-02.jsonl'), '');
    expect(findTornAuditTail(dir)).toMatchObject({ file, line: 2 });
  });

  it('a torn line the writer chained over (as assent did before it refused a torn tail) is named as such, and is no torn tail', async () => {
    const file = await writeLines(1);
    const torn = '{"seq":2,"pr';
    fs.appendFileSync(file, `${torn}\n${JSON.stringify({ seq: 3, prev: lineDigest(torn), ts: 'x', principal: 'me@host', argsSha256: 'x', outcome: 'ok' })}\n`);
    expect(findTornAuditTail(dir)).toBeUndefined();
    expect(verifyAudit(dir).firstBroken).toMatchObject({ line: 2, reason: expect.stringMatching(/next line names its digest as prev/) });
  });
});

describe('issue 35 a damaged confirmed configuration and a config.json cut short', () => {
  it('pinDamage: empty, not JSON, no revision are damage; a readable record is not, valid or not', () => {
    expect(pinDamage('')).toBe('empty (0 bytes)');
    expect(pinDamage('{"revision":"v1:sha256:a","te')).toMatch(/^not valid JSON \(29 bytes/);
    expect(pinDamage('{"text":null}')).toBe('without a revision');
    expect(pinDamage('[]')).toBe('without a revision');
    expect(pinDamage('{"revision":"r","text":null}')).toBeUndefined();
    expect(pinDamage('{"revision":"r","text":"{\\"policy\\":{\\"default\\":\\"sometimes\\"}}"}')).toBeUndefined();
  });

  it('a reload keeps the damaged record it replaces, and nothing else', () => {
    const pin = { revision: 'r2', text: '{}' };
    expect(pinWrites('', pin).map(([key]) => key)).toEqual([DAMAGED_PIN_KEY, PINNED_CONFIG_KEY]);
    expect(pinWrites('{"revision":"r1","text":null}', pin).map(([key]) => key)).toEqual([PINNED_CONFIG_KEY]);
    expect(pinWrites(undefined, pin).map(([key]) => key)).toEqual([PINNED_CONFIG_KEY]);
  });

  it('isCutShortJson: text that stops early, not text that is wrong in the middle', () => {
    const full = JSON.stringify({ notifications: false, policy: { agents: { default: 'allow' } } }, null, 2);
    for (let cut = 1; cut < full.length; cut += 7) expect(isCutShortJson(full.slice(0, cut)), full.slice(0, cut)).toBe(true);
    expect(isCutShortJson(full)).toBe(false);
    expect(isCutShortJson('{"a": 1,, "b": 2}')).toBe(false);
    expect(isCutShortJson('{"a": tru}')).toBe(false);
  });
});
