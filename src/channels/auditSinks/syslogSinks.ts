// The syslog and CEF sinks (R-AUD-4): an RFC 5424 message per record with
// assent's fields as structured data, or a CEF line per record, carried over
// syslog or appended to a 0600 file (synced before the batch counts as sent).
import { chmod, open } from 'node:fs/promises';
import { describeSink, type CefSink, type SyslogSink } from '../../core/config/auditExportConfig.js';
import { formatCef, formatSyslog } from '../../core/audit/auditExportFormats.js';
import type { ExportRecord } from '../../core/audit/auditExportRecord.js';
import { syslogDelivery, type AuditSink } from './auditSink.js';
import { createSyslogTransport, type SyslogTransport } from './syslogTransport.js';

export function createSyslogSink(name: string, config: SyslogSink, options: { procId?: string } = {}): AuditSink {
  const transport = createSyslogTransport(config);
  return {
    name,
    kind: 'syslog',
    description: describeSink(config),
    delivery: syslogDelivery(config.transport),
    send: (records) => transport.send(records.map((record) => formatSyslog(record, { facility: config.facility, appName: config.appName, ...options }))),
    close: () => transport.close(),
  };
}

export function createCefSink(name: string, config: CefSink, options: { version: string; procId?: string }): AuditSink {
  const lines = (records: readonly ExportRecord[]): string[] => records.map((record) => formatCef(record, options.version));
  if (config.file !== undefined) {
    const file = config.file;
    return {
      name,
      kind: 'cef',
      description: describeSink(config),
      async send(records) {
        const handle = await open(file, 'a', 0o600);
        try {
          // A file created by someone else with a wider mode is narrowed: it holds who decided what.
          if (((await handle.stat()).mode & 0o077) !== 0) await chmod(file, 0o600);
          await handle.write(`${lines(records).join('\n')}\n`);
          await handle.sync();
        } finally {
          await handle.close();
        }
      },
      close: async () => undefined,
    };
  }
  const transport: SyslogTransport = createSyslogTransport({ transport: config.transport ?? 'udp', host: config.host, port: config.port, path: config.path, ca: config.ca });
  return {
    name,
    kind: 'cef',
    description: describeSink(config),
    delivery: syslogDelivery(config.transport ?? 'udp'),
    send: (records) =>
      transport.send(records.map((record) => formatSyslog(record, { facility: config.facility, appName: config.appName, message: formatCef(record, options.version), structuredData: false, ...options }))),
    close: () => transport.close(),
  };
}
