// The kind's rules of an agent action (R-POL-6), on this host: a shell action's
// command through the bash parser, a read or write action's paths, a fetch's URL.
// Runs in the daemon (and `assent policy explain` without one), never in the hook.
// The compiled policy is kept per configuration revision.
import type { ActionVerdict } from '../core/policy/actionPlan.js';
import type { AgentAction } from '../core/agent/agentAction.js';
import { atLeastPrompt, mostRestrictive } from '../core/policy/decisions.js';
import { AssentError } from '../core/base/errors.js';
import { compileAgentPolicy, type AgentPolicyConfig, type AgentPolicySnapshot } from '../core/policy/agentPolicyConfig.js';
import { actionCommand, actionPaths, actionUrl } from '../core/agent/agentTargets.js';
import { autoApprovalsFor, compileAutoRules, NO_AUTO_APPROVALS, type AutoApprovals, type CompiledAutoRules } from '../core/policy/autoApproval.js';
import type { PathVars } from '../core/policy/pathPolicy.js';
import type { Rule } from '../core/policy/toolPolicy.js';
import { judgePaths, judgeShell, judgeUrl } from './judgeAction.js';
import { hostPathVars } from './resolvePaths.js';
import { loadedShellParser, loadShellParser, type ShellParser } from './shellParser.js';

export interface AgentJudgeOptions {
  env: NodeJS.ProcessEnv;
  /** assent's state directory: `${assentHome}` in path rules. */
  assentHome: string;
}

/** What the kind's rules need of the configuration: its revision (the cache key) and its policy sections. */
export interface JudgedPolicy {
  revision: string;
  policy: AgentPolicyConfig;
}

/** The auto-approval rules to apply (R-POL-6): the `command`, `path` and `url` rules of the policy snapshot, and the time to judge them at. */
export interface JudgedRules {
  /** Compiled again only when this array changes (a rule added or revoked). */
  rules: readonly Rule[];
  nowMs: number;
}

export class AgentJudge {
  private readonly vars: PathVars;
  private cached: { revision: string; snapshot: AgentPolicySnapshot } | undefined;
  private cachedRules: { rules: readonly Rule[]; compiled: CompiledAutoRules } | undefined;

  constructor(options: AgentJudgeOptions) {
    this.vars = hostPathVars(options.env, options.assentHome);
  }

  /** Loads the bash grammar (once per process); call before `judge` for a shell action. */
  async ready(): Promise<void> {
    await loadShellParser();
  }

  /** True when `judge` can run without waiting for the grammar. */
  get loaded(): boolean {
    return loadedShellParser() !== undefined;
  }

  snapshot(config: JudgedPolicy): AgentPolicySnapshot {
    if (this.cached?.revision !== config.revision) this.cached = { revision: config.revision, snapshot: compileAgentPolicy(config.policy, this.vars) };
    return this.cached.snapshot;
  }

  /** The auto-approval rules that apply to an action of `agent` now. */
  private autoApprovals(rules: JudgedRules | undefined, agent: AgentAction['agent']): AutoApprovals {
    if (rules === undefined || rules.rules.length === 0) return NO_AUTO_APPROVALS;
    if (this.cachedRules?.rules !== rules.rules) this.cachedRules = { rules: rules.rules, compiled: compileAutoRules(rules.rules, this.vars) };
    return autoApprovalsFor(this.cachedRules.compiled, agent, rules.nowMs);
  }

  /**
   * The verdict of the kind's rules, or undefined for a kind they do not cover
   * (`mcp`, `other`). A part they leave at prompt may be allowed by one of
   * `rules` (R-POL-6). A shell action needs `ready()` first.
   */
  judge(config: JudgedPolicy, action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'cwd'>, rules?: JudgedRules): ActionVerdict | undefined {
    const snapshot = this.snapshot(config);
    const auto = this.autoApprovals(rules, action.agent);
    switch (action.kind) {
      case 'shell': {
        const command = actionCommand(action.input, action.agent);
        if (command === undefined) {
          return { decision: 'prompt', parts: [{ kind: 'error', text: '(no command)', decision: 'prompt', rule: 'policy.commands', reason: 'the input has no "command" string' }] };
        }
        const parser: ShellParser | undefined = loadedShellParser();
        if (parser === undefined) throw new AssentError('internal', 'the bash grammar is not loaded yet; retry the call');
        return judgeShell(parser, snapshot, command, action.cwd, auto);
      }
      case 'read':
      case 'write': {
        const { paths, unknown, recursive } = actionPaths(action);
        const verdict = judgePaths(snapshot, paths, action.kind, action.cwd, auto, recursive === true);
        if (unknown === undefined) return verdict;
        const decision = atLeastPrompt(snapshot.paths[action.kind]);
        verdict.parts.push({ kind: 'path', text: `${action.kind} (unknown)`, decision, rule: `policy.paths.${action.kind}`, reason: unknown });
        verdict.decision = paths.length === 0 ? decision : mostRestrictive(verdict.decision, decision);
        return verdict;
      }
      case 'fetch': {
        const url = actionUrl(action.input);
        return judgeUrl(snapshot, url ?? '', auto);
      }
      default:
        return undefined;
    }
  }
}
