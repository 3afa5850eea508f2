// The wire text of exported records (R-AUD-4): an RFC 5424 syslog message with
// assent's fields as structured data, and an ArcSight CEF line. Pure; the field
// mapping is documented in docs/audit.md, and tests parse both back with it.
import { SYSLOG_FACILITIES, type SyslogFacility } from '../config/auditExportConfig.js';
import { exportFields, summaryOf, toolIdOf, wasAllowed, type ExportRecord } from './auditExportRecord.js';

/**
 * The structured-data id of assent's element. 32473 is the private enterprise
 * number RFC 5612 reserves for documentation and examples; assent has none of
 * its own, and an `@` name is what RFC 5424 §7.2.2 asks of a non-IANA id.
 */
export const SD_ID = 'assent@32473';

/** RFC 5424 severities: a call that ran is informational, a refusal a notice, an unknown end a warning. */
export function severityOf(record: ExportRecord): number {
  if (record.outcome === 'uncertain' || record.outcome === 'no_outcome' || record.outcome === 'error') return 4;
  return wasAllowed(record.outcome) ? 6 : 5;
}

/** PARAM-VALUE escaping (RFC 5424 §6.3.3): `"`, `\` and `]` take a backslash. */
function sdValue(value: string | number): string {
  return String(value).replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** PRINTUSASCII without spaces, at most `max` characters; `-` (the NILVALUE) when nothing is left. */
function header(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '').slice(0, max);
  return clean === '' ? '-' : clean;
}

export interface SyslogFormatOptions {
  facility: SyslogFacility;
  appName: string;
  procId?: string;
  /** The message part; defaults to the record's one-line summary. */
  message?: string;
  /** False writes the NILVALUE instead of assent's SD-ELEMENT (CEF over syslog carries the fields in the message). */
  structuredData?: boolean;
}

/**
 * One RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [assent@32473 …] MSG`.
 * HOSTNAME is the host's label, MSGID the outcome; every exported field is a
 * PARAM of the one SD-ELEMENT (names are at most 32 characters, as §6.3.3 allows).
 */
export function formatSyslog(record: ExportRecord, options: SyslogFormatOptions): string {
  const pri = SYSLOG_FACILITIES[options.facility] * 8 + severityOf(record);
  const params = exportFields(record).map(([key, value]) => `${key.slice(0, 32)}="${sdValue(value)}"`);
  const ts = record.ts === '' ? '-' : record.ts;
  const message = options.message ?? summaryOf(record);
  const data = options.structuredData === false ? '-' : `[${SD_ID} ${params.join(' ')}]`;
  return `<${pri}>1 ${ts} ${header(record.hostName, 255)} ${header(options.appName, 48)} ${header(options.procId ?? '-', 128)} ${header(record.outcome, 32)} ${data} ${message}`;
}

/** RFC 5425 / RFC 6587 octet counting: the message's length in bytes, a space, the message. */
export function octetCounted(message: string): string {
  return `${new TextEncoder().encode(message).length} ${message}`;
}

/** CEF header fields escape `\` and `|`. */
function cefHeader(value: string | number): string {
  return String(value).replace(/[\\|]/g, (c) => `\\${c}`).replace(/[\r\n]/g, ' ');
}

/** CEF extension values escape `\` and `=`, and write line ends as `\n` / `\r`. */
function cefValue(value: string | number): string {
  return String(value)
    .replace(/[\\=]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r');
}

/** CEF severity 0-10 from the risk level: what an analyst sorts by. */
export function cefSeverityOf(record: ExportRecord): number {
  switch (record.risk) {
    case 'low':
      return 3;
    case 'elevated':
      return 6;
    case 'high':
      return 8;
    default:
      return 5;
  }
}

/**
 * The CEF extension keys, in the order they are written: the standard
 * dictionary key where ArcSight has one (its short name when it has both),
 * labelled custom strings and numbers for the rest. Each ArcSight key appears
 * once: `cs1`..`cs6` *are* `deviceCustomString1`..`6`, so a consumer that
 * normalises names (ArcSight, Filebeat's `decode_cef`) would merge the two
 * forms. The same table is docs/audit.md's CEF mapping.
 */
export const CEF_MAPPING: readonly { key: string; label?: string; field: keyof ExportRecord | 'toolId' | 'rtMs' }[] = [
  { key: 'rt', field: 'rtMs' },
  { key: 'dvchost', field: 'hostName' },
  { key: 'deviceExternalId', field: 'hostId' },
  { key: 'externalId', field: 'seq' },
  { key: 'act', field: 'outcome' },
  { key: 'cat', field: 'decidedHow' },
  { key: 'reason', field: 'deniedReason' },
  { key: 'suser', field: 'principal' },
  { key: 'duser', field: 'decidedBy' },
  { key: 'duid', field: 'credentialId' },
  { key: 'requestClientApplication', field: 'agent' },
  { key: 'destinationServiceName', field: 'toolId' },
  { key: 'cs1', label: 'ruleId', field: 'ruleId' },
  { key: 'cs2', label: 'channel', field: 'channel' },
  { key: 'cs3', label: 'sessionId', field: 'sessionId' },
  { key: 'cs4', label: 'approvedBy', field: 'approvedBy' },
  { key: 'cs5', label: 'argsSha256', field: 'argsSha256' },
  { key: 'cs6', label: 'risk', field: 'risk' },
  { key: 'cn1', label: 'waitedForConsentMs', field: 'waitedForConsentMs' },
  { key: 'cn2', label: 'durationMs', field: 'durationMs' },
  { key: 'flexString1', label: 'approvalId', field: 'approvalId' },
  { key: 'flexString2', label: 'lineSha256', field: 'lineSha256' },
];

/** `CEF:0|assent|assent|<version>|<signature id>|<name>|<severity>|<extensions>` for one record. */
export function formatCef(record: ExportRecord, version: string): string {
  const signature = `assent:${record.outcome}:${record.decidedHow}`;
  const name = `${toolIdOf(record)} ${record.outcome}`;
  const values: Record<string, unknown> = { ...record, toolId: toolIdOf(record), rtMs: Date.parse(record.ts) };
  const extensions: string[] = [];
  for (const entry of CEF_MAPPING) {
    let value = values[entry.field];
    if (Array.isArray(value)) value = value.join(',');
    if (typeof value === 'number' && !Number.isFinite(value)) continue;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    if (entry.label !== undefined) extensions.push(`${entry.key}Label=${cefValue(entry.label)}`);
    extensions.push(`${entry.key}=${cefValue(value)}`);
  }
  return `CEF:0|assent|assent|${cefHeader(version)}|${cefHeader(signature)}|${cefHeader(name)}|${cefSeverityOf(record)}|${extensions.join(' ')}`;
}

/** Reads a CEF line back into its header and extensions (the tests' and docs' parser; custom labels resolved). */
export function parseCef(line: string): { header: string[]; fields: Record<string, string> } | undefined {
  const header: string[] = [];
  let rest = line;
  for (let i = 0; i < 7; i += 1) {
    const match = /^((?:[^|\\]|\\.)*)\|/.exec(rest);
    if (match === null) return undefined;
    header.push((match[1] ?? '').replace(/\\(.)/g, '$1'));
    rest = rest.slice(match[0].length);
  }
  const raw: Record<string, string> = {};
  const pattern = /([A-Za-z0-9_]+)=((?:[^\\=]|\\.)*?)(?=\s+[A-Za-z0-9_]+=|$)/g;
  for (let match = pattern.exec(rest); match !== null; match = pattern.exec(rest)) {
    raw[match[1] ?? ''] = (match[2] ?? '').replace(/\\n/g, '\n').replace(/\\r/g, '\r').replace(/\\(.)/g, '$1');
  }
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key.endsWith('Label')) continue;
    const label = raw[`${key}Label`];
    fields[label ?? key] = value;
  }
  return { header, fields };
}
