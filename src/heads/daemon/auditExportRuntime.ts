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
import type { AuditMetrics, AuditMetricsOptions } from '../../service/auditMetrics.js';
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
  /** How far the audit files are on disk (AuditLog.durableSeq): no sink reads, or moves its cursor, past it. */
  durableSeq?: () => number;
}

/** What /metrics serves: the OpenMetrics text and its content type. */
export type MetricsView = Pick<AuditMetrics, 'render' | 'contentType'>;

export interface AuditExportRuntime {
  exporter: AuditExporter;
  metrics: MetricsView;
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

/** The content type prom-client's registry gives the OpenMetrics text (a test holds the two equal). */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/**
 * The metrics registry (prom-client, about 2 MB resident with what it pulls in)
 * is loaded at the first audit line written or the first scrape, whichever
 * comes first: an idle daemon, or one whose calls all wait for a person, never
 * holds it. Lines written while it loads are counted once it is there.
 */
export class LazyAuditMetrics implements MetricsView {
  readonly contentType = OPENMETRICS_CONTENT_TYPE;
  private real: AuditMetrics | undefined;
  private loading: Promise<AuditMetrics> | undefined;
  private waiting: WrittenLine[] = [];

  constructor(
    private readonly options: AuditMetricsOptions,
    private readonly logger: Logger,
  ) {}

  /** The audit log's `onWritten`: counts each line's decision. Never throws. */
  observe(lines: readonly WrittenLine[]): void {
    if (this.real !== undefined) {
      this.real.observe(lines);
      return;
    }
    for (const line of lines) this.waiting.push(line);
    void this.load().catch(() => undefined);
  }

  async render(): Promise<string> {
    return (await this.load()).render();
  }

  /** Whether the registry is loaded (for tests). */
  get loaded(): boolean {
    return this.real !== undefined;
  }

  private load(): Promise<AuditMetrics> {
    this.loading ??= import('../../service/auditMetrics.js').then(
      ({ AuditMetrics }) => {
        const real = new AuditMetrics(this.options);
        real.observe(this.waiting);
        this.waiting = [];
        this.real = real;
        return real;
      },
      (error: unknown) => {
        // Not counted rather than held without bound; the next line or scrape tries again.
        this.loading = undefined;
        this.waiting = [];
        this.logger.warn('the metrics registry could not be loaded; /metrics answers an error until it can', { error });
        throw error;
      },
    );
    return this.loading;
  }
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
    return { sink, source: new AuditTail(options.auditDir, options.durableSeq), batchSize: config.batchSize, maxLag: config.maxLag };
  });
  const exporter = new AuditExporter({ sinks: entries, cursors: options.cursors, host: options.host, timers: options.timers, now: options.now, logger: options.logger });
  const metrics = new LazyAuditMetrics({ pending: options.pending, exportLag: () => exporter.lagBySink() }, options.logger);
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
