// Assembles audit export and metrics for the daemon's composition root
// (R-AUD-4..6): one sink per `audit.export` entry with its own reader of the
// audit files, the exporter over the store's cursors, and the metrics registry.
// A sink that cannot be built (an unreadable key file) still appears in status,
// failing with the reason, so a mistake never stops the daemon or a call.
import { describeSink, sinkNameOf, sinkSecrets, type ExportSink } from '../../core/config/auditExportConfig.js';
import { failureText, type AuditSink } from '../../channels/auditSinks/auditSink.js';
import { createCefSink, createSyslogSink } from '../../channels/auditSinks/syslogSinks.js';
import { createWebhookSink, readWebhookKey } from '../../channels/auditSinks/webhookSink.js';
import type { WrittenLine } from '../../journal/auditLog.js';
import { AuditTail } from '../../journal/auditTail.js';
import { AuditExporter, type ExportCursors } from '../../service/auditExport.js';
import { AuditMetrics } from '../../service/auditMetrics.js';
import type { Logger } from '../../service/logger.js';
import { registerSecret } from '../../service/logger.js';
import type { Timers } from '../../core/base/timers.js';
import { VERSION } from '../../version.js';

export interface AuditExportRuntimeOptions {
  sinks: readonly ExportSink[];
  auditDir: string;
  cursors: ExportCursors;
  host: { id: string; name: string };
  timers: Timers;
  now: () => number;
  logger: Logger;
  pending: () => number;
}

export interface AuditExportRuntime {
  exporter: AuditExporter;
  metrics: AuditMetrics;
  /** The audit log's `onWritten` for both. */
  written(lines: readonly WrittenLine[]): void;
}

function brokenSink(name: string, sink: ExportSink, reason: string): AuditSink {
  return {
    name,
    kind: sink.kind,
    description: `${sink.kind} (not started: ${reason})`,
    send: () => Promise.reject(new Error(`${reason}; fix the configuration and restart the daemon`)),
    close: () => Promise.resolve(),
  };
}

/**
 * The OpenTelemetry SDK costs a daemon about 25 MB resident, so it is loaded
 * only by a daemon that exports to OTLP, when its first batch goes out.
 */
function lazyOtlpSink(name: string, sink: Extract<ExportSink, { kind: 'otlp' }>, host: { id: string; name: string }): AuditSink {
  let loaded: Promise<AuditSink> | undefined;
  const real = (): Promise<AuditSink> => (loaded ??= import('../../channels/auditSinks/otlpSink.js').then((otlp) => otlp.createOtlpSink(name, sink, { version: VERSION, host })));
  return {
    name,
    kind: 'otlp',
    description: describeSink(sink),
    send: async (records) => (await real()).send(records),
    close: async () => {
      if (loaded !== undefined) await (await loaded).close();
    },
  };
}

function buildSink(name: string, sink: ExportSink, host: { id: string; name: string }): AuditSink {
  const procId = String(process.pid);
  switch (sink.kind) {
    case 'syslog':
      return createSyslogSink(name, sink, { procId });
    case 'cef':
      return createCefSink(name, sink, { version: VERSION, procId });
    case 'otlp':
      return lazyOtlpSink(name, sink, host);
    case 'webhook': {
      // Masked by the logger from here on, like the team database's password.
      const key = readWebhookKey(sink.secretFile);
      registerSecret(key);
      return createWebhookSink(name, sink, { key });
    }
  }
}

export function createAuditExportRuntime(options: AuditExportRuntimeOptions): AuditExportRuntime {
  const entries = options.sinks.map((config, index) => {
    const name = sinkNameOf(config, index);
    for (const secret of sinkSecrets(config)) registerSecret(secret);
    let sink: AuditSink;
    try {
      sink = buildSink(name, config, options.host);
    } catch (error) {
      const reason = failureText(error);
      options.logger.warn('an export sink could not be started; it is reported in `assent daemon status`', { sink: name, error: reason });
      sink = brokenSink(name, config, reason);
    }
    return { sink, source: new AuditTail(options.auditDir), batchSize: config.batchSize, maxLag: config.maxLag };
  });
  const exporter = new AuditExporter({ sinks: entries, cursors: options.cursors, host: options.host, timers: options.timers, now: options.now, logger: options.logger });
  const metrics = new AuditMetrics({ pending: options.pending, exportLag: () => exporter.lagBySink() });
  return {
    exporter,
    metrics,
    written(lines) {
      metrics.observe(lines);
      const last = lines[lines.length - 1];
      if (last !== undefined) exporter.written(last.seq);
    },
  };
}
