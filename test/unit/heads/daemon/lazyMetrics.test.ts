// The metrics registry is loaded at the first audit line or scrape (SPEC §14
// memory budget), and nothing written before it is there goes uncounted.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LazyAuditMetrics, OPENMETRICS_CONTENT_TYPE } from '../../../../src/heads/daemon/auditExportRuntime.js';
import { createLogger } from '../../../../src/service/logger.js';

const quiet = createLogger({ write: () => undefined });
const line = (seq: number, record: Record<string, unknown>) => ({ seq, ts: '2025-01-01T00:00:00.000Z', line: JSON.stringify(record), record });

describe('LazyAuditMetrics', () => {
  it('names the content type prom-client gives OpenMetrics text', () => {
    expect(OPENMETRICS_CONTENT_TYPE).toBe(Registry.OPENMETRICS_CONTENT_TYPE);
  });

  it('loads nothing until a line is written, then counts the lines written while it loaded', async () => {
    const metrics = new LazyAuditMetrics({ pending: () => 3, exportLag: () => [] }, quiet);
    expect(metrics.loaded).toBe(false);
    metrics.observe([line(1, { outcome: 'ok', channel: 'cli', approvalId: 'a1', waitedForConsentMs: 1200 })]);
    metrics.observe([line(2, { outcome: 'denied' })]);
    const text = await metrics.render();
    expect(metrics.loaded).toBe(true);
    metrics.observe([line(3, { outcome: 'ok', channel: 'cli' })]);
    const after = await metrics.render();
    expect(text).toMatch(/assent_decisions_total\{outcome="ok",channel="cli"\} 1\n/);
    expect(text).toMatch(/assent_decisions_total\{outcome="denied",channel="none"\} 1\n/);
    expect(text).toMatch(/assent_pending_approvals 3\n/);
    expect(after).toMatch(/assent_decisions_total\{outcome="ok",channel="cli"\} 2\n/);
    expect(after.trimEnd().endsWith('# EOF')).toBe(true);
  });

  it('R-SH-14 counts confined runs by agent, once per decision: the started line, not its end', async () => {
    const metrics = new LazyAuditMetrics({ pending: () => 0, exportLag: () => [] }, quiet);
    const digest = 'a'.repeat(64);
    metrics.observe([
      line(1, { agent: 'claude-code', outcome: 'started', confined: digest }),
      line(2, { agent: 'claude-code', outcome: 'ok', confined: digest }),
      line(3, { agent: 'codex', outcome: 'started', confined: digest }),
      line(4, { agent: 'codex', outcome: 'started' }),
    ]);
    const text = await metrics.render();
    expect(text).toMatch(/assent_confined_runs_total\{agent="claude-code"\} 1\n/);
    expect(text).toMatch(/assent_confined_runs_total\{agent="codex"\} 1\n/);
  });
});
