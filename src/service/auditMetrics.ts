// What /metrics counts (R-AUD-6), with prom-client, rendered in the OpenMetrics
// text format: decisions by outcome and channel, hook decisions, confined runs, consent-wait
// and decision-latency histograms (all from the audit lines as they are
// written), pending approvals and export lag (read when scraped).
import { Counter, Gauge, Histogram, Registry, type OpenMetricsContentType } from 'prom-client';
import type { WrittenLine } from '../journal/auditLog.js';

/** Seconds: from an instant policy answer to the 1500 s cap of a consent wait (R-CFG-3). */
const BUCKETS = [0.005, 0.05, 0.25, 1, 5, 15, 30, 60, 120, 300, 900, 1500];

export interface AuditMetricsOptions {
  pending: () => number;
  exportLag: () => readonly { sink: string; lag: number }[];
}

export class AuditMetrics {
  readonly registry = new Registry<OpenMetricsContentType>();
  private readonly decisions: Counter<'outcome' | 'channel'>;
  private readonly hookDecisions: Counter<'agent' | 'outcome'>;
  private readonly confinedRuns: Counter<'agent'>;
  private readonly consentWait: Histogram;
  private readonly decisionLatency: Histogram;

  constructor(options: AuditMetricsOptions) {
    this.registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const registers = [this.registry];
    this.decisions = new Counter({ name: 'assent_decisions', help: 'Audited calls by outcome and by the channel that decided them (none: policy).', labelNames: ['outcome', 'channel'], registers });
    this.hookDecisions = new Counter({ name: 'assent_hook_decisions', help: "Audited agent actions (an agent's own tools, seen through its hook) by agent and outcome.", labelNames: ['agent', 'outcome'], registers });
    this.confinedRuns = new Counter({ name: 'assent_confined_runs', help: 'Agent commands that ran project code in the sandbox without a person (R-SH-14), by agent.', labelNames: ['agent'], registers });
    this.consentWait = new Histogram({ name: 'assent_consent_wait_seconds', help: 'How long calls that asked a person waited for the decision.', buckets: BUCKETS, registers });
    this.decisionLatency = new Histogram({ name: 'assent_decision_latency_seconds', help: 'Time from a call reaching assent to its decision, every call (policy answers count as their wait, about 0).', buckets: BUCKETS, registers });
    new Gauge({
      name: 'assent_pending_approvals',
      help: 'Approvals waiting for a decision.',
      registers,
      collect() {
        this.set(options.pending());
      },
    });
    new Gauge({
      name: 'assent_export_lag_records',
      help: 'Audit lines each export sink has not taken yet.',
      labelNames: ['sink'],
      registers,
      collect() {
        this.reset();
        for (const { sink, lag } of options.exportLag()) this.set({ sink }, lag);
      },
    });
  }

  /** Each label set's counter, made once: prom-client's labelled `inc` would build and hash the label key at every line. */
  private readonly decisionCounters = new Map<string, { inc(): void }>();
  private readonly hookCounters = new Map<string, { inc(): void }>();
  private readonly confinedCounters = new Map<string, { inc(): void }>();

  /** The audit log's `onWritten`: counts each line's decision from the record it wrote (never re-parsed). Never throws. */
  observe(lines: readonly WrittenLine[]): void {
    for (const { record } of lines) {
      try {
        const outcome = typeof record['outcome'] === 'string' ? record['outcome'] : 'unknown';
        const agent = record['agent'];
        // An agent action's `started` line is its decision; its end line repeats it.
        const ending = typeof agent === 'string' && outcome !== 'started' && outcome !== 'denied' && outcome !== 'consent_denied' && outcome !== 'consent_timeout';
        if (ending) continue;
        const channel = typeof record['channel'] === 'string' ? record['channel'] : 'none';
        counterFor(this.decisionCounters, outcome, channel, () => this.decisions.labels({ outcome, channel })).inc();
        if (typeof agent === 'string') counterFor(this.hookCounters, agent, outcome, () => this.hookDecisions.labels({ agent, outcome })).inc();
        if (typeof agent === 'string' && outcome === 'started' && typeof record['confined'] === 'string') counterFor(this.confinedCounters, agent, '', () => this.confinedRuns.labels({ agent })).inc();
        const waitedMs = record['waitedForConsentMs'];
        const waited = typeof waitedMs === 'number' ? waitedMs / 1000 : 0;
        this.decisionLatency.observe(waited);
        if (typeof record['approvalId'] === 'string' && typeof waitedMs === 'number') this.consentWait.observe(waited);
      } catch {
        // A record prom-client refuses (a label it cannot take) is not counted.
      }
    }
  }

  /** The OpenMetrics text (ends with `# EOF`). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The counter child of one label pair, made at its first line; the pair is joined by a NUL, which no label holds. */
function counterFor(children: Map<string, { inc(): void }>, first: string, second: string, make: () => { inc(): void }): { inc(): void } {
  const key = `${first}\u0000${second}`;
  let child = children.get(key);
  if (child === undefined) {
    child = make();
    children.set(key, child);
  }
  return child;
}
