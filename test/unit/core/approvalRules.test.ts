// R-TEAM-3: the pure judgement of one decision under four-eyes and quorum.
import { describe, expect, it } from 'vitest';
import { countedApprovals, judgeDecision, type DecisionRules } from '../../../src/core/policy/approvalRules.js';

const plain: DecisionRules = { owner: 'me@a', fourEyes: false, quorum: 1 };
const fourEyes: DecisionRules = { owner: 'me@a', fourEyes: true, quorum: 1 };
const quorum2: DecisionRules = { owner: 'me@a', fourEyes: false, quorum: 2 };

describe('R-TEAM-3 judgeDecision', () => {
  it('R-TEAM-3 without rules the first approval resolves, by any principal, the owner included', () => {
    expect(judgeDecision({ behavior: 'allow', principal: 'me@a', rules: plain, approvedBy: [] })).toEqual({ kind: 'resolve', approvals: 1, required: 1 });
  });

  it('R-TEAM-3 four-eyes refuses the owner an approval, lets it deny, and lets another principal approve', () => {
    expect(judgeDecision({ behavior: 'allow', principal: 'me@a', rules: fourEyes, approvedBy: [] })).toMatchObject({ kind: 'refuse', reason: 'four_eyes' });
    expect(judgeDecision({ behavior: 'deny', principal: 'me@a', rules: fourEyes, approvedBy: [] }).kind).toBe('resolve');
    expect(judgeDecision({ behavior: 'allow', principal: 'token:reviewer', rules: fourEyes, approvedBy: [] }).kind).toBe('resolve');
    // The same person on another host is another principal (docs/team-identity.md).
    expect(judgeDecision({ behavior: 'allow', principal: 'me@b', rules: fourEyes, approvedBy: [] }).kind).toBe('resolve');
  });

  it('R-TEAM-3 a quorum of 2: the first approval is partial, a repeat by the same principal is a repeat, a second principal resolves', () => {
    expect(judgeDecision({ behavior: 'allow', principal: 'me@a', rules: quorum2, approvedBy: [] })).toEqual({ kind: 'partial', approvals: 1, required: 2 });
    expect(judgeDecision({ behavior: 'allow', principal: 'me@a', rules: quorum2, approvedBy: ['me@a'] })).toEqual({ kind: 'repeat', approvals: 1, required: 2 });
    expect(judgeDecision({ behavior: 'allow', principal: 'web:1a2b', rules: quorum2, approvedBy: ['me@a'] })).toEqual({ kind: 'resolve', approvals: 2, required: 2 });
  });

  it('R-TEAM-3 under a quorum any single deny resolves (denies), before or after approvals', () => {
    expect(judgeDecision({ behavior: 'deny', principal: 'x', rules: quorum2, approvedBy: [] }).kind).toBe('resolve');
    expect(judgeDecision({ behavior: 'deny', principal: 'me@a', rules: quorum2, approvedBy: ['me@a'] }).kind).toBe('resolve');
  });

  it('R-TEAM-3 with four-eyes and a quorum, an approval the owner recorded earlier does not count', () => {
    const both: DecisionRules = { owner: 'me@a', fourEyes: true, quorum: 2 };
    expect(countedApprovals(both, ['me@a', 'token:r'])).toEqual(['token:r']);
    expect(judgeDecision({ behavior: 'allow', principal: 'web:s', rules: both, approvedBy: ['me@a'] })).toEqual({ kind: 'partial', approvals: 1, required: 2 });
    expect(judgeDecision({ behavior: 'allow', principal: 'web:s', rules: both, approvedBy: ['me@a', 'token:r'] })).toEqual({ kind: 'resolve', approvals: 2, required: 2 });
  });
});
