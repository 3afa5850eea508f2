// Issue 35 item 5, the 60 s soak (bench/soak.mjs; `npm run soak` runs it for
// 10 minutes). Against a real daemon in a temp ASSENT_HOME, all at once: agent
// hooks of Claude Code, Codex and Gemini CLI (allowed, denied, asking a person
// who approves or denies), bursts of gateway calls with 32 in flight through a
// real `assent mcp` in front of a fake upstream, every approval decided from the
// CLI (a typed code in a real terminal, or `assent deny`) and from the web API (a
// bearer token) in turn, audit export to an HTTPS webhook receiver that goes down
// and comes back, and two daemon restarts (graceful, then kill -9). Asserted here:
// the correctness targets only. The audit chain verifies; no effect ran twice, ran
// although it was denied or refused, ran without its audit line, or was lost (a
// call answered ok that never ran, an allowed call refused for anything but the
// daemon being away); each decision the daemon accepted is audited as made, on
// its channel; every exported (hostId, seq) reached the receiver; the daemon's
// and the gateway's open descriptors are back to their baseline once the load has
// settled. RSS growth and event-loop delay are printed, never asserted: npm test
// does not judge speed (the 10-minute soak reports them against their targets).
import { describe, expect, it } from 'vitest';
import { requireBuiltCli } from '../../helpers/daemon.js';
// @ts-expect-error plain ESM shared with `npm run soak`, no type declarations
import { runSoak, summarize } from '../../../bench/soak.mjs';

interface Verdict {
  name: string;
  value: number | undefined;
  ok: boolean | undefined;
  correctness: boolean;
}

interface SoakReport {
  verdicts: Verdict[];
  audit: { ok: boolean; lines: number };
  hooks: { calls: number; answers: Record<string, number>; violations: Record<string, number> };
  gateway: { calls: number; bursts: number; inFlight: number; answers: Record<string, number>; violations: Record<string, number> };
  approvals: { accepted: number; byChannel: Record<string, number>; violations: Record<string, number> };
  exports: { auditLines: number; delivered: number; missing: number; outages: number };
  descriptors: { baseline: { daemonFds: number; gatewayFds: number }; final: { daemonFds: number; gatewayFds: number } };
  restarts: { kind: string }[];
}

const zeros = (counts: Record<string, number>): Record<string, number> => Object.fromEntries(Object.keys(counts).map((key) => [key, 0]));

describe('issue 35 item 5: the 60 s soak', () => {
  it('hooks, 32 gateway calls in flight, CLI and web approvals, a receiver going down and up, a graceful and a kill -9 restart: 0 audit gaps, 0 lost or doubled effects, every export delivered, descriptors back to baseline', async () => {
    requireBuiltCli();
    const report = (await runSoak({ durationMs: 60_000, write: false, log: (line: string) => console.info(line) })) as SoakReport;
    console.info(summarize(report));

    // The mix ran: every kind of hook call by every agent's shape, every gateway tool, both channels both ways, both faults.
    expect(Object.keys(report.hooks.answers)).toEqual(expect.arrayContaining(['allow → allow', 'deny → deny (policy)', 'ask-yes → allow', 'ask-no → deny (consent_denied)']));
    expect(report.hooks.calls).toBeGreaterThanOrEqual(30);
    expect(Object.keys(report.gateway.answers)).toEqual(expect.arrayContaining(['echo → ok', 'erase → refused (policy)', 'deploy(yes) → ok', 'deploy(no) → refused (consent_denied)']));
    expect(report.gateway.inFlight).toBe(32);
    expect(report.gateway.calls).toBeGreaterThanOrEqual(1000);
    expect(Object.keys(report.approvals.byChannel).sort()).toEqual(['cli allow', 'cli deny', 'web allow', 'web deny']);
    expect(report.restarts.map((restart) => restart.kind)).toEqual(['graceful', 'kill -9']);
    expect(report.exports.outages).toBeGreaterThanOrEqual(1);

    // 0 audit gaps.
    expect(report.audit).toMatchObject({ ok: true });
    expect(report.audit.lines).toBe(report.exports.auditLines);
    // 0 lost, doubled, unaudited or wrongly run effects.
    expect(report.hooks.violations).toEqual(zeros(report.hooks.violations));
    expect(report.gateway.violations).toEqual(zeros(report.gateway.violations));
    expect(report.approvals.violations).toEqual({ mismatched: 0, unaudited: 0 });
    // Every exported (hostId, seq) delivered.
    expect(report.exports.missing).toBe(0);
    expect(report.exports.delivered).toBeGreaterThanOrEqual(report.exports.auditLines);
    // Descriptors back to baseline after settle.
    expect(report.descriptors.final.daemonFds).toBeLessThanOrEqual(report.descriptors.baseline.daemonFds);
    expect(report.descriptors.final.gatewayFds).toBeLessThanOrEqual(report.descriptors.baseline.gatewayFds);
    // The soak's own verdicts agree.
    expect(report.verdicts.filter((verdict) => verdict.correctness && verdict.ok !== true)).toEqual([]);
  }, 120_000);
});
