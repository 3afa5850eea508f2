// R-AUD-4: the exported record says how each call was decided and carries
// digests only; CEF and RFC 5424 lines parse back with the mapping docs/audit.md gives.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CEF_MAPPING, formatCef, formatSyslog, octetCounted, parseCef, SD_ID } from '../../../src/core/audit/auditExportFormats.js';
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

/**
 * ArcSight's CEF extension dictionary (CEF Implementation Standard, "ArcSight
 * Extension Dictionary"): short key name → full name. Keys with no short name
 * map to themselves. Written from the published table, not from assent's code.
 */
const ARCSIGHT_KEYS: Record<string, string> = {
  act: 'deviceAction',
  app: 'applicationProtocol',
  cat: 'deviceEventCategory',
  cnt: 'baseEventCount',
  dhost: 'destinationHostName',
  dmac: 'destinationMacAddress',
  dntdom: 'destinationNtDomain',
  dpid: 'destinationProcessId',
  dpriv: 'destinationUserPrivileges',
  dproc: 'destinationProcessName',
  dpt: 'destinationPort',
  dst: 'destinationAddress',
  dtz: 'deviceTimeZone',
  duid: 'destinationUserId',
  duser: 'destinationUserName',
  dvc: 'deviceAddress',
  dvchost: 'deviceHostName',
  dvcmac: 'deviceMacAddress',
  dvcpid: 'deviceProcessId',
  end: 'endTime',
  fname: 'fileName',
  fsize: 'fileSize',
  in: 'bytesIn',
  msg: 'message',
  out: 'bytesOut',
  outcome: 'eventOutcome',
  proto: 'transportProtocol',
  request: 'requestUrl',
  rt: 'deviceReceiptTime',
  shost: 'sourceHostName',
  smac: 'sourceMacAddress',
  sntdom: 'sourceNtDomain',
  spid: 'sourceProcessId',
  spriv: 'sourceUserPrivileges',
  sproc: 'sourceProcessName',
  spt: 'sourcePort',
  src: 'sourceAddress',
  start: 'startTime',
  suid: 'sourceUserId',
  suser: 'sourceUserName',
  reason: 'reason',
  externalId: 'externalId',
  deviceExternalId: 'deviceExternalId',
  deviceFacility: 'deviceFacility',
  deviceProcessName: 'deviceProcessName',
  deviceDirection: 'deviceDirection',
  deviceDnsDomain: 'deviceDnsDomain',
  deviceNtDomain: 'deviceNtDomain',
  deviceInboundInterface: 'deviceInboundInterface',
  deviceOutboundInterface: 'deviceOutboundInterface',
  devicePayloadId: 'devicePayloadId',
  deviceTranslatedAddress: 'deviceTranslatedAddress',
  destinationDnsDomain: 'destinationDnsDomain',
  destinationServiceName: 'destinationServiceName',
  destinationTranslatedAddress: 'destinationTranslatedAddress',
  destinationTranslatedPort: 'destinationTranslatedPort',
  sourceDnsDomain: 'sourceDnsDomain',
  sourceServiceName: 'sourceServiceName',
  sourceTranslatedAddress: 'sourceTranslatedAddress',
  sourceTranslatedPort: 'sourceTranslatedPort',
  requestClientApplication: 'requestClientApplication',
  requestContext: 'requestContext',
  requestCookies: 'requestCookies',
  requestMethod: 'requestMethod',
  fileCreateTime: 'fileCreateTime',
  fileHash: 'fileHash',
  fileId: 'fileId',
  fileModificationTime: 'fileModificationTime',
  filePath: 'filePath',
  filePermission: 'filePermission',
  fileType: 'fileType',
  oldFileName: 'oldFileName',
  oldFileHash: 'oldFileHash',
  oldFilePath: 'oldFilePath',
  flexDate1: 'flexDate1',
  flexDate1Label: 'flexDate1Label',
  flexString1: 'flexString1',
  flexString1Label: 'flexString1Label',
  flexString2: 'flexString2',
  flexString2Label: 'flexString2Label',
};
for (let n = 1; n <= 6; n += 1) Object.assign(ARCSIGHT_KEYS, { [`cs${n}`]: `deviceCustomString${n}`, [`cs${n}Label`]: `deviceCustomString${n}Label` });
for (let n = 1; n <= 3; n += 1) Object.assign(ARCSIGHT_KEYS, { [`cn${n}`]: `deviceCustomNumber${n}`, [`cn${n}Label`]: `deviceCustomNumber${n}Label` });
for (let n = 1; n <= 4; n += 1) Object.assign(ARCSIGHT_KEYS, { [`cfp${n}`]: `deviceCustomFloatingPoint${n}`, [`cfp${n}Label`]: `deviceCustomFloatingPoint${n}Label` });
for (let n = 1; n <= 2; n += 1) Object.assign(ARCSIGHT_KEYS, { [`deviceCustomDate${n}`]: `deviceCustomDate${n}`, [`deviceCustomDate${n}Label`]: `deviceCustomDate${n}Label` });
/** Every full name is also a key in its own right: a producer may write either form. */
const FULL_NAMES = new Set(Object.values(ARCSIGHT_KEYS));
const SHORT_NAME_OF = new Map(Object.entries(ARCSIGHT_KEYS).filter(([short, full]) => short !== full).map(([short, full]) => [full, short]));

/** The full ArcSight name a normalising consumer files a key under, or undefined for a key ArcSight does not define. */
function normalisedKey(key: string): string | undefined {
  return ARCSIGHT_KEYS[key] ?? (FULL_NAMES.has(key) ? key : undefined);
}

/** The extension keys of a CEF line in order, as a consumer that does not resolve labels reads them. */
function rawCefKeys(line: string): string[] {
  const extensions = line.split(/(?<!\\)\|/).slice(7).join('|');
  return [...extensions.matchAll(/(?:^|\s)([A-Za-z0-9_]+)=/g)].map((match) => match[1] ?? '');
}

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
    expect(toExportRecord({ seq: 8, outcome: 'denied', deniedReason: 'unavailable' }, HOST, LINE_DIGEST).decidedHow).toBe('unavailable');
    expect(toExportRecord({ seq: 9, outcome: 'denied', deniedReason: 'shutdown' }, HOST, LINE_DIGEST).decidedHow).toBe('system');
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

  it('uses each ArcSight key once, in one form: the documented mapping against ArcSight\'s published dictionary', () => {
    const seen = new Map<string, string>();
    for (const row of mapping) {
      const keys = row.label === undefined ? [row.key] : [row.key, `${row.key}Label`];
      for (const key of keys) {
        const full = normalisedKey(key);
        expect(full, `${key} is not an ArcSight CEF key`).toBeDefined();
        // The short name where ArcSight has one, so no consumer sees both forms.
        expect(SHORT_NAME_OF.get(key), `${key} has a short name`).toBeUndefined();
        expect(seen.get(full!), `${key} and ${seen.get(full!) ?? ''} are the same ArcSight key`).toBeUndefined();
        seen.set(full!, key);
      }
      // Labels belong to custom keys only; a standard key says what it is by its name.
      expect(row.label === undefined, row.key).toBe(!/^(cs|cn|cfp|flexString|flexDate|deviceCustomDate)\d/.test(row.key));
    }
    expect(mapping.map(({ key, label }) => ({ key, label }))).toEqual(CEF_MAPPING.map(({ key, label }) => ({ key, label })));
  });

  it.each(Object.keys(lines))('a CEF line for the %s call has no key twice once ArcSight names are normalised', (name) => {
    const record = toExportRecord({ ...lines[name]!, ruleId: 'policy.commands.rules.35', approvedBy: ['a@x', 'b@y'] }, HOST, LINE_DIGEST);
    const keys = rawCefKeys(formatCef(record, '0.1.0')).map((key) => normalisedKey(key) ?? key);
    expect(keys.length).toBeGreaterThan(15);
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });

  it('escapes what would break a CEF line', () => {
    const record = toExportRecord({ seq: 9, outcome: 'ok', server: 'a', tool: 'b' }, { id: 'h', name: 'n|m=x\\y' }, LINE_DIGEST);
    const parsed = parseCef(formatCef(record, '1|2'));
    expect(parsed?.header[3]).toBe('1|2');
    expect(parsed?.fields['destinationServiceName']).toBe('a/b');
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
