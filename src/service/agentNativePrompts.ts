// Approvals shown in the agent's own dialog as well (R-HOOK-9, Claude Code with
// `hooks.claudeNativePrompt`): the before-tool hook answers `ask`, so Claude Code
// shows its dialog, while the approval stays filed in assent. Whichever answers
// first decides: assent's channels reach the dialog through the PermissionRequest
// hook, which waits here; the dialog reaches assent through that hook's end (a
// "no" stops it) or the after-event (a "yes" runs the call). This file only keeps
// the books: which filed approval belongs to which call, bounded in count and age.
import type { AgentName } from '../core/agent/agentAction.js';
import type { CallBase } from './toolCallTypes.js';

/** What one call's decision settles to, as the agent-action service answers it. */
export interface NativeOutcome {
  decision: 'allow' | 'deny';
  callId?: string;
}

export interface NativePrompt {
  approvalId: string;
  agent: AgentName;
  sessionId: string;
  tool: string;
  argsSha256: string;
  toolUseId?: string;
  /** What an audit line of the call carries (for a call the dialog let run after assent's approval had ended). */
  base: CallBase;
  filedAt: number;
  /** Settles once the approval is resolved, by whichever channel. */
  outcome: Promise<NativeOutcome>;
  /** Set when `outcome` settled. */
  settled?: NativeOutcome;
  /** A PermissionRequest hook waits on it (the dialog is open). */
  claimed: boolean;
  /** Ends the approval as withdrawn, when nothing can answer it any more. */
  withdraw(): void;
}

/** At most this many calls shown in an agent's dialog are remembered; the oldest is dropped (its approval withdrawn). */
export const MAX_NATIVE_PROMPTS = 1_000;

export class NativePrompts {
  /** Oldest first. */
  private readonly prompts = new Map<string, NativePrompt>();

  constructor(private readonly max = MAX_NATIVE_PROMPTS) {}

  get size(): number {
    return this.prompts.size;
  }

  add(prompt: NativePrompt): void {
    this.prompts.set(prompt.approvalId, prompt);
    void prompt.outcome.then((outcome) => {
      prompt.settled = outcome;
    });
    while (this.prompts.size > this.max) {
      const oldest = this.prompts.values().next().value as NativePrompt;
      this.prompts.delete(oldest.approvalId);
      if (oldest.settled === undefined) oldest.withdraw();
    }
  }

  delete(prompt: NativePrompt): void {
    this.prompts.delete(prompt.approvalId);
  }

  /** Forgets every prompt filed before `before` (epoch ms): its approval has expired, and its after-event is overdue. */
  dropOlderThan(before: number): void {
    for (const prompt of [...this.prompts.values()]) {
      if (prompt.filedAt >= before) break;
      this.prompts.delete(prompt.approvalId);
      if (prompt.settled === undefined) prompt.withdraw();
    }
  }

  /**
   * The prompt a PermissionRequest event is about: same agent, session, tool
   * and exact input (the event has no tool-use id), not yet claimed by another
   * dialog, oldest first.
   */
  claim(agent: AgentName, sessionId: string, tool: string, argsSha256: string): NativePrompt | undefined {
    for (const prompt of this.prompts.values()) {
      if (prompt.claimed || prompt.agent !== agent || prompt.sessionId !== sessionId || prompt.tool !== tool || prompt.argsSha256 !== argsSha256) continue;
      prompt.claimed = true;
      return prompt;
    }
    return undefined;
  }

  /** The prompt an after-event ends: by tool-use id where the agent sends one, else by session, tool and input digest. */
  forEnd(agent: AgentName, sessionId: string, tool: string, argsSha256: string, toolUseId: string | undefined): NativePrompt | undefined {
    for (const prompt of this.prompts.values()) {
      if (prompt.agent !== agent || prompt.sessionId !== sessionId || prompt.tool !== tool) continue;
      if (toolUseId !== undefined && prompt.toolUseId !== undefined ? prompt.toolUseId === toolUseId : prompt.argsSha256 === argsSha256) return prompt;
    }
    return undefined;
  }
}
