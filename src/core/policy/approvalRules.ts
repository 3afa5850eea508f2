// Who may decide an approval (SPEC §20, R-TEAM-3), as a pure judgement the
// service makes inside the deciding transaction: four-eyes (the principal that
// owns the agent session may deny but not approve) and quorum (N distinct
// principals must approve; any single deny denies; a repeat changes nothing).

/** The rules an approval is decided under. */
export interface DecisionRules {
  /** The principal that owns the agent session which asked; undefined for approvals filed before principals were kept. */
  owner: string | undefined;
  fourEyes: boolean;
  /** Distinct principals that must approve; 1 means the first approval decides. */
  quorum: number;
}

export interface DecisionInput {
  behavior: 'allow' | 'deny';
  /** Who decides now, as the head set it (never a parameter). */
  principal: string;
  rules: DecisionRules;
  /** Principals whose approval is recorded already, oldest first. */
  approvedBy: readonly string[];
}

/**
 * What a decision does: `refuse` records nothing (four-eyes); `repeat` records
 * nothing (that principal approved already); `partial` records the approval and
 * leaves the approval pending; `resolve` records it (for allow) and resolves the
 * approval. `approvals` counts the approvals that count after this decision.
 */
export type DecisionVerdict =
  | { kind: 'refuse'; reason: 'four_eyes'; approvals: number; required: number }
  | { kind: 'repeat'; approvals: number; required: number }
  | { kind: 'partial'; approvals: number; required: number }
  | { kind: 'resolve'; approvals: number; required: number };

/** Approvals that count toward the quorum: one per principal, never the owner's when four-eyes applies. */
export function countedApprovals(rules: DecisionRules, approvedBy: readonly string[]): string[] {
  const counted: string[] = [];
  for (const principal of approvedBy) {
    if (rules.fourEyes && principal === rules.owner) continue;
    if (!counted.includes(principal)) counted.push(principal);
  }
  return counted;
}

/** Judges one decision against the approval's rules and the approvals recorded so far. */
export function judgeDecision(input: DecisionInput): DecisionVerdict {
  const required = Math.max(1, Math.floor(input.rules.quorum));
  const counted = countedApprovals(input.rules, input.approvedBy);
  // Refusing is always safe: any principal, the owner included, may deny, and one deny denies.
  if (input.behavior === 'deny') return { kind: 'resolve', approvals: counted.length, required };
  if (input.rules.fourEyes && input.rules.owner !== undefined && input.principal === input.rules.owner) {
    return { kind: 'refuse', reason: 'four_eyes', approvals: counted.length, required };
  }
  if (input.approvedBy.includes(input.principal)) return { kind: 'repeat', approvals: counted.length, required };
  const approvals = counted.length + 1;
  return approvals < required ? { kind: 'partial', approvals, required } : { kind: 'resolve', approvals, required };
}
