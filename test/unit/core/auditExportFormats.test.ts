// R-AUD-4: the exported record says how each call was decided and carries
// digests only; CEF and RFC 5424 lines parse back with the mapping docs/audit.md gives.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatCef, formatSyslog, octetCounted, parseCef, SD_ID } from '../../../src/core/audit/auditExportFormats.js';
import { toExportRecord, type ExportRecord } from '../../../src/core/audit/auditExportRecord.js';

const HOST = { id: 'h0123456789abcdef', name: 'laptop' };
const DIGEST = `v1:sha256:${'a'.repeat(64)}`;
const LINE_DIGEST = `v1:sha256:${'b'.repeat(64)}`;

/** Audit lines shaped as the daemon writes them (R-AUD-1), with a caller that quotes a path and a command. */
const lines: Record<string, Record<string, unknown>> = {
  allowed: { seq: 1, prev: DIGEST, ts: '2026-03-01T10:00:00.000Z', principal: 'me@laptop', sessionId: 's1', server: 'fs', tool: 'read_file', argsSha256: DIGEST, outcome: 'ok', waitedForConsentMs: 0, durationMs: 3, caller: { head: 'mcp', cwd: '/home/me/secret-project', command: 'cat /etc/shadow' }, risk: 'low' },
  policyDenied: { seq: 2, prev: DIGEST, ts: '2026-03-01T10:00:01.000Z', principal: 'me@laptop', sessionId: 's1', server: 'fs', tool: 'move_file', argsSha256: DIGEST, outcome: 'denied', deniedReason: 'policy', caller: { head: 'mcp' }, risk: 'elevated' },
  personApproved: { seq: 3, prev: DIGEST, ts: '2026-03-01T10:00:02.000Z', principal: 'me@laptop', sessionId: 's1', server: 'fs', tool: 'write_file', argsSha256: DIGEST, outcome: 'ok', channel: 'cli', approvalId: 'bcdef', waitedForConsentMs: 2500, durationMs: 4, decidedBy: 'me@laptop', approvedBy: ['me@laptop'], peer: { source: 'ss+proc', pid: 4 }, risk: 'elevated' },
  passkeyApproved: { seq: 4, prev: DIGEST, ts: '2026-03-01T10:00:03.000Z', principal: 'me@laptop', sessionId: 's2', server: 'claude', tool: 'Bash', agent: 'claude-code', callId: 'c1', argsSha256: DIGEST, outcome: 'started', channel: 'web', approvalId: 'ghijk', waitedForConsentMs: 9000, decidedBy: 'web:phone', approvedBy: ['web:phone'], presence: 'passkey', credentialId: 'cred-AbC_123', risk: 'high' },
};

/** The CEF mapping table of docs/audit.md: CEF key → record field (ts and the tool id as the docs name them). */
function documentedCefMapping(): { key: string; label: string | undefined; field: string }[] {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/audit.md'), 'utf8');
  const table = doc.slice(doc.indexOf('<!-- cef-mapping:start -->'), doc.indexOf('<!-- cef-mapping:end -->'));
  const rows = table.split('\n').filter((row) => row.startsWith('| `'));
  return rows.map((row) => {
    const cells = row.split('|').slice(1, -1).map((cell) => cell.trim());
    const unquote = (cell: string | undefined): string | undefined => /`([^`]+)`/.exec(cell ?? '')?.[1];
    return { key: unquote(cells[0]) ?? '', label: unquote(cells[1]), field: unquote(cells[2]) ?? '' };
  });
}

function expectedValue(record: ExportRecord, field: string): string | undefined {
  if (field === 'ts') return String(Date.parse(record.ts));
  if (field === 'server/tool') return record.server !== undefined && record.tool !== undefined ? `${record.server}/${record.tool}` : record.kind;
  const value = (record as unknown as Record<string, unknown>)[field];
  if (Array.isArray(value)) return value.join(',');
  return value === undefined ? undefined : String(value);
}

describe('R-AUD-4 exported records', () => {
  it('say how each call was decided: policy, policy denial, a person (channel and principal), a passkey', () => {
    expect(toExportRecord(lines['allowed']!, HOST, LINE_DIGEST)).toMatchObject({ decidedHow: 'policy', outcome: 'ok', risk: 'low', hostId: HOST.id, seq: 1 });
    expect(toExportRecord(lines['policyDenied']!, HOST, LINE_DIGEST)).toMatchObject({ decidedHow: 'policy', outcome: 'denied', deniedReason: 'policy' });
    expect(toExportRecord(lines['personApproved']!, HOST, LINE_DIGEST)).toMatchObject({ decidedHow: 'person', channel: 'cli', decidedBy: 'me@laptop', approvalId: 'bcdef' });
    expect(toExportRecord(lines['passkeyApproved']!, HOST, LINE_DIGEST)).toMatchObject({ decidedHow: 'passkey', channel: 'web', credentialId: 'cred-AbC_123', agent: 'claude-code', risk: 'high' });
    expect(toExportRecord({ ...lines['personApproved']!, approvedBy: ['a@x', 'b@y'] }, HOST, LINE_DIGEST).decidedHow).toBe('quorum');
    expect(toExportRecord({ seq: 5, outcome: 'consent_timeout', approvalId: 'x' }, HOST, LINE_DIGEST).decidedHow).toBe('timeout');
    expect(toExportRecord({ seq: 6, outcome: 'cancelled', approvalId: 'x' }, HOST, LINE_DIGEST).decidedHow).toBe('withdrawn');
    expect(toExportRecord({ seq: 7, outcome: 'ok', channel: 'rule', ruleId: 'r1' }, HOST, LINE_DIGEST)).toMatchObject({ decidedHow: 'rule', ruleId: 'r1' });
    expect(toExportRecord({ seq: 8, outcome: 'ok' }, HOST, LINE_DIGEST).risk).toBe('unrated');
  });

  it('never carry the caller, the peer, free-text reasons or unknown fields', () => {
    const record = toExportRecord({ ...lines['allowed']!, deniedReason: 'the operator typed /etc/passwd here', args: { path: '/srv/x' }, command: 'rm -rf /' }, HOST, LINE_DIGEST);
    const text = JSON.stringify(record);
    for (const secret of ['secret-project', '/etc/shadow', '/etc/passwd', '/srv/x', 'rm -rf', 'ss+proc', 'caller']) expect(text).not.toContain(secret);
  });
});

describe('R-AUD-4 CEF', () => {
  const mapping = documentedCefMapping();

  it('the documented mapping is the one the code writes', () => {
    expect(mapping.length).toBeGreaterThan(15);
    expect(mapping.map((row) => row.key)).toContain('act');
  });

  it.each(Object.keys(lines))('a CEF line for the %s call parses with the field mapping docs/audit.md gives', (name) => {
    const record = toExportRecord(lines[name]!, HOST, LINE_DIGEST);
    const parsed = parseCef(formatCef(record, '0.1.0'));
    expect(parsed).toBeDefined();
    expect(parsed!.header.slice(0, 4)).toEqual(['CEF:0', 'assent', 'assent', '0.1.0']);
    expect(parsed!.header[4]).toBe(`assent:${record.outcome}:${record.decidedHow}`);
    let checked = 0;
    for (const row of mapping) {
      const want = expectedValue(record, row.field);
      const got = parsed!.fields[row.label ?? row.key];
      expect(got, `${row.key} (${row.field})`).toBe(want);
      if (want !== undefined) checked += 1;
    }
    expect(checked).toBeGreaterThan(8);
  });

  it('escapes what would break a CEF line', () => {
    const record = toExportRecord({ seq: 9, outcome: 'ok', server: 'a', tool: 'b' }, { id: 'h', name: 'n|m=x\\y' }, LINE_DIGEST);
    const parsed = parseCef(formatCef(record, '1|2'));
    expect(parsed?.header[3]).toBe('1|2');
    expect(parsed?.fields['tool']).toBe('a/b');
    expect(parsed?.fields['dvchost']).toBe('n|m=x\\y');
  });
});

describe('R-AUD-4 RFC 5424', () => {
  it('writes every field as a PARAM of the assent SD-ELEMENT with escaping, the outcome as MSGID, octet-counted for streams', () => {
    const record = toExportRecord(lines['personApproved']!, HOST, LINE_DIGEST);
    const message = formatSyslog(record, { facility: 'authpriv', appName: 'assent', procId: '42' });
    expect(message.startsWith(`<86>1 2026-03-01T10:00:02.000Z laptop assent 42 ok [${SD_ID} `)).toBe(true);
    expect(message).toContain('decidedHow="person"');
    expect(message).toContain('decidedBy="me@laptop"');
    const odd = formatSyslog(toExportRecord({ seq: 1, outcome: 'denied', sessionId: 'a"b]c' }, { id: 'h', name: 'la"p]to\\p' }, LINE_DIGEST), { facility: 'local0', appName: 'assent' });
    expect(odd).toContain('<133>1 ');
    expect(odd).toContain('hostName="la\\"p\\]to\\\\p"');
    // An id that does not look like one is not exported at all.
    expect(odd).not.toContain('sessionId');
    expect(octetCounted('é')).toBe('2 é');
  });
});
