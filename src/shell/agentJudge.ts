// The kind's rules of an agent action (R-POL-6), on this host: a shell action's
// command through the bash parser, a read or write action's paths, a fetch's URL.
// Runs in the daemon (and `assent policy explain` without one), never in the hook.
// The compiled policy is kept per configuration revision.
import type { ActionVerdict } from '../core/actionPlan.js';
import type { AgentAction } from '../core/agentAction.js';
import { atLeastPrompt, mostRestrictive } from '../core/decisions.js';
import { AssentError } from '../core/errors.js';
import { compileAgentPolicy, type AgentPolicyConfig, type AgentPolicySnapshot } from '../core/agentPolicyConfig.js';
import { actionCommand, actionPaths, actionUrl } from '../core/agentTargets.js';
import type { PathVars } from '../core/pathPolicy.js';
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

export class AgentJudge {
  private readonly vars: PathVars;
  private cached: { revision: string; snapshot: AgentPolicySnapshot } | undefined;

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

  /**
   * The verdict of the kind's rules, or undefined for a kind they do not cover
   * (`mcp`, `other`). A shell action needs `ready()` first.
   */
  judge(config: JudgedPolicy, action: Pick<AgentAction, 'agent' | 'tool' | 'kind' | 'input' | 'cwd'>): ActionVerdict | undefined {
    const snapshot = this.snapshot(config);
    switch (action.kind) {
      case 'shell': {
        const command = actionCommand(action.input);
        if (command === undefined) {
          return { decision: 'prompt', parts: [{ kind: 'error', text: '(no command)', decision: 'prompt', rule: 'policy.commands', reason: 'the input has no "command" string' }] };
        }
        const parser: ShellParser | undefined = loadedShellParser();
        if (parser === undefined) throw new AssentError('internal', 'the bash grammar is not loaded yet; retry the call');
        return judgeShell(parser, snapshot, command, action.cwd);
      }
      case 'read':
      case 'write': {
        const { paths, unknown } = actionPaths(action);
        const verdict = judgePaths(snapshot, paths, action.kind, action.cwd);
        if (unknown === undefined) return verdict;
        const decision = atLeastPrompt(snapshot.paths[action.kind]);
        verdict.parts.push({ kind: 'path', text: `${action.kind} (unknown)`, decision, rule: `policy.paths.${action.kind}`, reason: unknown });
        verdict.decision = paths.length === 0 ? decision : mostRestrictive(verdict.decision, decision);
        return verdict;
      }
      case 'fetch': {
        const url = actionUrl(action.input);
        return judgeUrl(snapshot, url ?? '');
      }
      default:
        return undefined;
    }
  }
}
