// What the soak concludes from its records: effects (each call's answer against
// the effect logs and the audit), approvals (each decision against the audit
// line of its call), export delivery, resident memory growth, descriptors and the
// event-loop delay, each against its target (issue 35 item 5).
import { readFileSync } from 'node:fs';

/** Outcomes of an audit line that says the call ran (or may have). */
const RAN_OUTCOMES = new Set(['ok', 'started', 'error', 'uncertain', 'no_outcome']);

function countLines(file, parse) {
  const counts = new Map();
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return counts;
  }
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const key = parse(line);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function byDigest(lines) {
  const map = new Map();
  for (const line of lines) {
    const list = map.get(line.argsSha256);
    if (list === undefined) map.set(line.argsSha256, [line]);
    else list.push(line);
  }
  return map;
}

const tally = (into, key) => (into[key] = (into[key] ?? 0) + 1);

/**
 * An agent action's `started` line is queued when the daemon answers allow, and written a moment later
 * (R-AUD-3: audit writes never hold up a call; agent actions are not journaled either). A kill -9 inside
 * that moment loses the line of a call the agent runs. Such a call, answered at most this long before a
 * kill -9 (SPEC §14's budget for a gateway killed -9), is counted apart as `lostAtKill`; any other
 * effect without its line is a violation.
 */
export const KILL_WINDOW_MS = 100;

/**
 * Every hook call against the effects file (the agent ran it: `K`) and its audit lines.
 * Violations: an effect run twice, run although denied (by policy or a person) or without
 * an approval, run without an audit line saying it was allowed (but see KILL_WINDOW_MS),
 * allowed twice in the audit, or an allowed call refused for any reason but the daemon being
 * away (a restart). `kills` are the performance.now() times of the kill -9s.
 */
export function judgeHooks({ calls, effectsFile, audit, decisions, digestOf, kills = [] }) {
  const markers = countLines(effectsFile, (line) => Number(line));
  const lines = byDigest(audit.filter((line) => typeof line.agent === 'string'));
  const approvedDigests = new Set(decisions.filter((d) => d.ok && d.behavior === 'allow').map((d) => d.argsSha256));
  const result = { calls: calls.length, ran: 0, answers: {}, otherTexts: [], refusedInRestartGap: 0, auditedNotRun: 0, lostAtKill: { count: 0, msBeforeKill: [] }, violations: { doubledEffects: 0, deniedRan: 0, ranWithoutApproval: 0, unauditedEffects: 0, doubledDecisions: 0, allowedRefused: 0 }, examples: [] };
  const flag = (kind, call, extra = {}) => {
    result.violations[kind] += 1;
    if (result.examples.length < 20) result.examples.push({ violation: kind, k: call.k, agent: call.agent, kind: call.kind, decision: call.decision, reason: call.reason, text: call.text, code: call.code, ...extra });
  };
  for (const call of calls) {
    if (call.decision === undefined) continue; // still running when the soak stopped: not judged
    tally(result.answers, `${call.kind} → ${call.decision}${call.reason === '' ? '' : ` (${call.reason})`}`);
    if (call.text !== undefined && result.otherTexts.length < 5) result.otherTexts.push(call.text);
    const digest = digestOf(call.toolInput);
    const own = lines.get(digest) ?? [];
    const started = own.filter((line) => line.outcome === 'started');
    const effects = markers.get(call.k) ?? 0;
    if (call.ran) result.ran += 1;
    if (effects > 1) flag('doubledEffects', call, { effects });
    if (effects > 0 && (call.kind === 'deny' || call.kind === 'ask-no')) flag('deniedRan', call);
    if (effects > 0 && call.kind === 'ask-yes' && !approvedDigests.has(digest)) flag('ranWithoutApproval', call);
    if (effects > 0 && started.length === 0) {
      const before = kills.map((at) => at - call.endedAt).filter((ms) => ms >= 0 && ms <= KILL_WINDOW_MS);
      if (own.length === 0 && before.length > 0) {
        result.lostAtKill.count += 1;
        result.lostAtKill.msBeforeKill.push(Math.round(Math.min(...before)));
      } else flag('unauditedEffects', call, { audit: own.map((line) => line.outcome), msBeforeKills: kills.map((at) => Math.round(at - call.endedAt)) });
    }
    if (started.length > 1) flag('doubledDecisions', call, { started: started.length });
    if (call.kind === 'allow' && !call.ran) {
      if (call.reason === 'unavailable') result.refusedInRestartGap += 1;
      else flag('allowedRefused', call);
    }
    if (started.length > 0 && effects === 0) result.auditedNotRun += 1;
  }
  return result;
}

/**
 * Every gateway call against the upstream's log (`<tool> <n>`: it ran) and its audit lines.
 * Violations: a call run twice, run although denied or refused to the client, answered ok but
 * never run, run without an audit line, an allowed echo refused for any reason but the daemon
 * being away, and a call with two lines saying it ran.
 */
export function judgeGateway({ calls, upstreamLog, audit, digestOf }) {
  const runs = countLines(upstreamLog, (line) => Number(line.split(' ')[1]));
  const lines = byDigest(audit.filter((line) => line.server === 'soak'));
  const result = { calls: calls.length, ran: 0, answers: {}, otherTexts: [], refusedInRestartGap: 0, unauditedRefusals: 0, clientErrors: 0, violations: { doubledEffects: 0, deniedRan: 0, lostEffects: 0, unauditedEffects: 0, doubledAudit: 0, allowedRefused: 0 }, examples: [] };
  const flag = (kind, call, extra = {}) => {
    result.violations[kind] += 1;
    if (result.examples.length < 20) result.examples.push({ violation: kind, n: call.n, tool: call.tool, answer: call.answer, code: call.code, text: call.text, ...extra });
  };
  for (const call of calls) {
    if (call.answer === undefined) continue;
    tally(result.answers, `${call.tool}${call.args.want === undefined ? '' : `(${call.args.want})`} → ${call.answer}${call.code === undefined ? '' : ` (${call.answer === 'error' ? 'client error' : call.code})`}`);
    if ((call.text !== undefined || call.answer === 'error') && result.otherTexts.length < 5) result.otherTexts.push(call.text ?? call.code);
    const own = lines.get(digestOf(call.args)) ?? [];
    const ran = runs.get(call.n) ?? 0;
    if (ran > 0) result.ran += 1;
    if (ran > 1) flag('doubledEffects', call, { ran });
    if (ran > 0 && (call.tool === 'erase' || call.args.want === 'no' || call.answer === 'refused')) flag('deniedRan', call);
    if (call.answer === 'ok' && ran === 0) flag('lostEffects', call);
    if (ran > 0 && !own.some((line) => RAN_OUTCOMES.has(line.outcome))) flag('unauditedEffects', call, { audit: own.map((line) => line.outcome) });
    if (own.filter((line) => RAN_OUTCOMES.has(line.outcome)).length > 1) flag('doubledAudit', call, { audit: own.map((line) => line.outcome) });
    if (call.answer === 'refused' && own.length === 0) result.unauditedRefusals += 1;
    if (call.answer === 'error') result.clientErrors += 1;
    if (call.tool === 'echo' && call.answer === 'refused') {
      if (call.code === 'unavailable') result.refusedInRestartGap += 1;
      else flag('allowedRefused', call);
    }
  }
  return result;
}

/**
 * Each decision the operator made against its call's audit line (by approvalId): a decision the
 * daemon accepted must show in the audit as that behaviour, on that channel.
 */
export function judgeApprovals({ decisions, audit, hookCalls, digestOf }) {
  // When the hook had its answer before the operator decided (its daemon died while it waited: it was
  // refused as unavailable), nobody waits for the approval any more: a decision on it is orphaned.
  const hookAnsweredAt = new Map();
  for (const call of hookCalls) if (call.endedAt !== undefined) hookAnsweredAt.set(digestOf(call.toolInput), call.endedAt);
  // The first line of an approval's call is its decision (a hook call's end line comes after it).
  const byApproval = new Map();
  for (const line of audit) if (typeof line.approvalId === 'string' && !byApproval.has(line.approvalId)) byApproval.set(line.approvalId, line);
  const result = { decided: decisions.length, accepted: 0, refused: 0, unexpected: 0, byChannel: {}, failures: {}, orphaned: { decided: 0, audited: 0, examples: [] }, violations: { mismatched: 0, unaudited: 0 }, examples: [] };
  for (const decision of decisions) {
    if (decision.unexpected) result.unexpected += 1;
    if (!decision.ok) {
      result.refused += 1;
      tally(result.failures, (decision.error ?? '').replace(/\b[a-km-z]{5}\b/g, 'ID').slice(0, 120));
      continue;
    }
    result.accepted += 1;
    tally(result.byChannel, `${decision.channel} ${decision.behavior}`);
    const line = byApproval.get(decision.id);
    const answeredAt = hookAnsweredAt.get(decision.argsSha256);
    if (answeredAt !== undefined && answeredAt < decision.at) {
      result.orphaned.decided += 1;
      if (line !== undefined) result.orphaned.audited += 1;
      if (result.orphaned.examples.length < 10) result.orphaned.examples.push({ ...decision, audit: line?.outcome ?? null });
      continue;
    }
    if (line === undefined) {
      result.violations.unaudited += 1;
      if (result.examples.length < 20) result.examples.push({ violation: 'unaudited', ...decision });
      continue;
    }
    const expected = decision.behavior === 'allow' ? line.outcome !== 'consent_denied' && RAN_OUTCOMES.has(line.outcome) : line.outcome === 'consent_denied';
    if (!expected || line.channel !== decision.channel) {
      result.violations.mismatched += 1;
      if (result.examples.length < 20) result.examples.push({ violation: 'mismatched', ...decision, outcome: line.outcome, auditChannel: line.channel });
    }
  }
  return result;
}

/** Every (hostId, seq) of the audit files against what the receiver took. */
export function judgeExports({ audit, receiver, hostId }) {
  const missing = [];
  for (const line of audit) if (!receiver.received.has(`${hostId}:${line.seq}`)) missing.push(line.seq);
  return { auditLines: audit.length, delivered: receiver.received.size, missing: missing.length, missingSeqs: missing.slice(0, 20), duplicates: receiver.duplicates(), batches: receiver.batches, unverified: receiver.unverified, outages: receiver.outages };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)];
};

/**
 * Growth of resident memory (or of `key`, e.g. the heap) over one process's life after its warm-up: the
 * median of the last third of its samples after the warm-up over the median of the first third, minus 1
 * (medians of many samples: a busy process's RSS swings with its garbage collections). Undefined with
 * fewer than 3 samples after the warm-up.
 */
export function rssGrowth(samples, startS, warmupS, key = 'rssMb') {
  const after = samples.filter((sample) => sample.t - startS >= warmupS && Number.isFinite(sample[key]));
  if (after.length < 3) return undefined;
  const k = Math.floor(after.length / 3);
  const first = median(after.slice(0, k).map((sample) => sample[key]));
  const last = median(after.slice(-k).map((sample) => sample[key]));
  return { afterWarmupMb: first, endMb: last, growth: Math.round((last / first - 1) * 1000) / 1000, samples: after.length };
}
