// The team keys of config.json (SPEC §20, R-TEAM-3) beside the host section:
// `policy.quorum` (how many distinct principals must approve a tool) and how a
// reload shows changes of these keys and of `approvals.fourEyes`, so a change of
// who counts as a distinct approver is reviewed like any other policy change (R-CFG-4).
import { z } from 'zod';
import { checkToolIdKeys } from './toolIdKeys.js';
import { keyedChanges, shownValue } from './diffLines.js';

/** Most distinct approvers a quorum may ask for. */
export const MAX_QUORUM = 16;

const QUORUM_ALLOWED = `an integer from 1 to ${MAX_QUORUM} (the number of distinct principals that must approve)`;

/** `policy.quorum`: `{"<server alias>/<tool>": N}`; keys are checked like `policy.tools` keys (R-CFG-1). */
export const QuorumSchema = z
  .record(
    z.string(),
    z.number({ error: QUORUM_ALLOWED }).int({ error: QUORUM_ALLOWED }).min(1, { error: QUORUM_ALLOWED }).max(MAX_QUORUM, { error: QUORUM_ALLOWED }),
    { error: 'an object mapping "<server>/<tool>" to a number of distinct approvers' },
  )
  .superRefine(checkToolIdKeys);
export type Quorum = z.infer<typeof QuorumSchema>;

/** How many distinct principals must approve a call of this tool: its `policy.quorum` entry, else 1. Exec actions have no tool id. */
export function quorumFor(quorum: Quorum, server: string | undefined, tool: string | undefined): number {
  if (server === undefined || tool === undefined) return 1;
  return quorum[`${server}/${tool}`] ?? 1;
}

const show = shownValue;

/** The keys of a configuration whose change alters who counts as a distinct approver. */
export interface TeamSettings {
  approvals: { fourEyes: boolean };
  policy: { quorum: Quorum };
  host: { name?: string | undefined };
}

/** Reload diff lines for `host.name`, `approvals.fourEyes` and `policy.quorum`. */
export function diffTeamConfig(a: TeamSettings, b: TeamSettings): string[] {
  const lines: string[] = [];
  if (a.approvals.fourEyes !== b.approvals.fourEyes) lines.push(`approvals.fourEyes: ${show(a.approvals.fourEyes)} → ${show(b.approvals.fourEyes)}`);
  lines.push(...keyedChanges('policy.quorum', a.policy.quorum, b.policy.quorum));
  if (a.host.name !== b.host.name) lines.push(`host.name: ${show(a.host.name)} → ${show(b.host.name)}`);
  return lines;
}
