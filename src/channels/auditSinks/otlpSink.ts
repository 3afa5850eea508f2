// The OpenTelemetry sink (R-AUD-4): each record becomes an OpenTelemetry log
// record built by the SDK's own LoggerProvider, and each batch is encoded and
// posted by the SDK's OTLP/HTTP protobuf exporter; nothing here encodes OTLP.
// A batch counts as sent when the exporter reports success (the receiver's 2xx).
import { readFileSync } from 'node:fs';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, type LogRecordProcessor, type ReadableLogRecord, type SdkLogRecord } from '@opentelemetry/sdk-logs';
import { describeSink, type OtlpSink } from '../../core/config/auditExportConfig.js';
import { severityOf } from '../../core/audit/auditExportFormats.js';
import { exportFields, summaryOf, type ExportRecord } from '../../core/audit/auditExportRecord.js';
import type { AuditSink } from './auditSink.js';

/** The event name of every exported record, and the prefix of its attributes. */
export const OTLP_EVENT_NAME = 'assent.decision';

/** Collects what the logger emits, synchronously, so one batch of records becomes one export. */
class CollectingProcessor implements LogRecordProcessor {
  records: ReadableLogRecord[] = [];
  onEmit(record: SdkLogRecord): void {
    this.records.push(record);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The attribute names of a record: `assent.<field>`, e.g. `assent.decidedHow`; lists stay lists. */
export function otlpAttributesOf(record: ExportRecord): Record<string, string | number | string[]> {
  // `event.name` as an attribute too: receivers on OTLP definitions older than the log record's own event_name field still see it.
  const attributes: Record<string, string | number | string[]> = { 'event.name': OTLP_EVENT_NAME };
  for (const [key, value] of exportFields(record)) attributes[`assent.${key}`] = value;
  if (record.approvedBy !== undefined) attributes['assent.approvedBy'] = record.approvedBy;
  return attributes;
}

function severityNumberOf(record: ExportRecord): SeverityNumber {
  const severity = severityOf(record);
  return severity <= 4 ? SeverityNumber.WARN : severity === 5 ? SeverityNumber.INFO2 : SeverityNumber.INFO;
}

export function createOtlpSink(name: string, config: OtlpSink, options: { version: string; host: { id: string; name: string }; ca?: string }): AuditSink {
  const collector = new CollectingProcessor();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': options.version, 'host.id': options.host.id, 'host.name': options.host.name }),
    processors: [collector],
  });
  const logger = provider.getLogger('assent.audit', options.version);
  const exporter = new OTLPLogExporter({
    url: config.url,
    headers: { ...config.headers },
    timeoutMillis: 10_000,
    ...(options.ca === undefined ? {} : { httpAgentOptions: { ca: readFileSync(options.ca) } }),
  });
  return {
    name,
    kind: 'otlp',
    description: describeSink(config),
    async send(records) {
      collector.records = [];
      for (const record of records) {
        logger.emit({
          eventName: OTLP_EVENT_NAME,
          timestamp: Date.parse(record.ts),
          severityNumber: severityNumberOf(record),
          severityText: record.outcome,
          body: summaryOf(record),
          attributes: otlpAttributesOf(record),
        });
      }
      const batch = collector.records;
      collector.records = [];
      await new Promise<void>((resolve, reject) => {
        exporter.export(batch, (result) => {
          // ExportResultCode.SUCCESS is 0.
          if (result.code === 0) resolve();
          else reject(result.error ?? new Error('the OTLP receiver did not accept the batch'));
        });
      });
    },
    async close() {
      await exporter.shutdown().catch(() => undefined);
      await provider.shutdown().catch(() => undefined);
    },
  };
}
