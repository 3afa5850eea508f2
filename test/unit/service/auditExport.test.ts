// R-AUD-5: the exporter sends from the files' lines after its cursor, moves the
// cursor only after a batch was taken, retries with a capped backoff, reports
// lag, last success and last error, and flags a sink beyond its maxLag.
import { describe, expect, it } from 'vitest';
import type { ExportRecord } from '../../../src/core/audit/auditExportRecord.js';
import type { AuditSink } from '../../../src/channels/auditSinks/auditSink.js';
import type { TailLine } from '../../../src/journal/auditTail.js';
import { AuditExporter } from '../../../src/service/auditExport.js';
import { createLogger } from '../../../src/service/logger.js';
import { createCefSink, createSyslogSink } from '../../../src/channels/auditSinks/syslogSinks.js';
import { validateConfig } from '../../../src/core/config/config.js';
import type { CefSink, SyslogSink } from '../../../src/core/config/auditExportConfig.js';

/** Timers run by hand: `fire()` runs the earliest, and `delays` keeps every delay asked for. */
function manualTimers() {
  const pending = new Map<number, { at: number; run: () => void }>();
  const delays: number[] = [];
  let id = 0;
  return {
    delays,
    setTimeout(run: () => void, ms: number): unknown {
      id += 1;
      pending.set(id, { at: ms, run });
      delays.push(ms);
      return id;
    },
    clearTimeout(handle: unknown): void {
      pending.delete(handle as number);
    },
    /** Runs every timer except the poll (2000 ms). */
    fireRetries(): void {
      for (const [key, timer] of [...pending]) {
        if (timer.at === 2000) continue;
        pending.delete(key);
        timer.run();
      }
    },
  };
}

function source(count: () => number) {
  return {
    async linesAfter(afterSeq: number, limit: number): Promise<TailLine[]> {
      const out: TailLine[] = [];
      for (let seq = afterSeq + 1; seq <= count() && out.length < limit; seq += 1) out.push({ seq, line: JSON.stringify({ seq, outcome: 'ok', ts: '2026-01-01T00:00:00.000Z' }), digest: `d${seq}`, file: 'f' });
      return out;
    },
    lastSeq: async () => count(),
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('R-AUD-5 AuditExporter', () => {
  it('delivers after the cursor, retries with a capped backoff while the sink fails, then catches up; status says so', async () => {
    let lines = 25;
    let failing = true;
    const received: ExportRecord[] = [];
    const sink: AuditSink = {
      name: 'hook',
      kind: 'webhook',
      description: 'webhook https://x/',
      send: async (records) => {
        if (failing) throw new Error('ECONNREFUSED: connect');
        received.push(...records);
      },
      close: async () => undefined,
    };
    const cursors = new Map<string, number>([['hook', 5]]);
    const timers = manualTimers();
    const exporter = new AuditExporter({
      sinks: [{ sink, source: source(() => lines), batchSize: 10, maxLag: 15 }],
      cursors: { exportCursor: async (name) => cursors.get(name) ?? 0, advanceExportCursor: async (name, seq) => void cursors.set(name, Math.max(cursors.get(name) ?? 0, seq)) },
      host: { id: 'h', name: 'n' },
      timers,
      now: () => 1_000,
      logger: createLogger({ write: () => undefined }),
      retryMs: 100,
      maxRetryMs: 400,
    });
    await exporter.start();
    await flush();
    for (let i = 0; i < 5; i += 1) {
      timers.fireRetries();
      await flush();
    }
    const retries = timers.delays.filter((ms) => ms !== 2000);
    expect(retries).toEqual([100, 200, 400, 400, 400, 400]);
    expect(exporter.status()['hook']).toMatchObject({ cursor: 5, lag: 20, lagging: true, delivered: 0, lastSuccessAt: null, lastError: { message: 'ECONNREFUSED: connect' } });
    expect(exporter.neededFrom()).toBe(6);

    failing = false;
    timers.fireRetries();
    await flush();
    expect(received.map((record) => record.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    expect(cursors.get('hook')).toBe(25);
    expect(exporter.status()['hook']).toMatchObject({ cursor: 25, lag: 0, lagging: false, delivered: 20 });
    expect(exporter.status()['hook']!.lastSuccessAt).not.toBeNull();

    lines = 27;
    exporter.written(27);
    await flush();
    expect(received.map((record) => record.seq).slice(-2)).toEqual([26, 27]);
    await exporter.close();
  });
});

describe('R-AUD-5 status says what a sink can know of delivery', () => {
  it('a UDP sink is unacknowledged, with a note that lag 0 does not mean received; stream syslog is sent, a webhook acknowledged', async () => {
    const { config } = validateConfig({
      audit: {
        export: [
          { kind: 'syslog', name: 'udp', transport: 'udp', host: '127.0.0.1', port: 9 },
          { kind: 'cef', name: 'cef-udp', transport: 'udp', host: '127.0.0.1', port: 9 },
          { kind: 'syslog', name: 'tcp', transport: 'tcp', host: '127.0.0.1', port: 9 },
        ],
      },
    });
    const [udp, cefUdp, tcp] = config!.audit.export as [SyslogSink, CefSink, SyslogSink];
    const sinks: AuditSink[] = [
      createSyslogSink('udp', udp),
      createCefSink('cef-udp', cefUdp, { version: '0.1.0' }),
      createSyslogSink('tcp', tcp),
      { name: 'hook', kind: 'webhook', description: 'webhook https://x/', send: async () => undefined, close: async () => undefined },
    ];
    const exporter = new AuditExporter({
      sinks: sinks.map((sink) => ({ sink, source: source(() => 0), batchSize: 10, maxLag: 15 })),
      cursors: { exportCursor: async () => 0, advanceExportCursor: async () => undefined },
      host: { id: 'h', name: 'n' },
      timers: manualTimers(),
      now: () => 1_000,
      logger: createLogger({ write: () => undefined }),
    });
    const status = exporter.status();
    expect(status['udp']).toMatchObject({ lag: 0, delivery: 'unacknowledged', note: expect.stringContaining('cannot know whether they arrived') });
    expect(status['cef-udp']).toMatchObject({ delivery: 'unacknowledged' });
    expect(status['tcp']).toMatchObject({ delivery: 'sent' });
    expect(status['tcp']!.note).toBeUndefined();
    expect(status['hook']).toMatchObject({ delivery: 'acknowledged' });
    for (const sink of sinks) await sink.close();
  });
});
