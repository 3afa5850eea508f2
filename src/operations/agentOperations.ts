// The agent hook's operations (SPEC §17): one question per tool call before it
// runs (R-HOOK-3) and one report after it ran (R-HOOK-6). Thin: validate by
// schema, hand the action to the agent-action service.
import { z } from 'zod';
import { AGENT_ACTION_KINDS, AGENT_NAMES } from '../core/agent/agentAction.js';
import { portableJson } from '../core/base/portableJson.js';
import type { AgentActionService } from '../service/agentActions.js';
import { watchRequest } from './approvalOperations.js';
import { defineOperation, type Operation } from './operation.js';

const HOOK_ONLY = {
  rationale: "called by the agent hook (`assent hook`) over the daemon socket on behalf of one of the agent's own tool calls; not an operator action",
};
const NOT_ON_MCP = {
  rationale: "an agent's hook reports the agent's own calls; a model-driven head must not file, decide or end them",
};

/** The notification that tells the waiting hook an approval was filed and when it expires (so it can answer before the agent's own hook timeout). */
export const AGENT_PENDING_NOTIFICATION = 'agents.pending';

const ActionFields = {
  agent: z.enum(AGENT_NAMES),
  sessionId: z.string().min(1).max(200),
  tool: z.string().min(1).max(200),
  /** The exact tool_input; the approval is bound to its digest (R-HOOK-2). */
  input: portableJson(z.record(z.string(), z.unknown())),
  toolUseId: z.string().min(1).max(200).optional(),
  mcpServer: z.string().min(1).max(200).optional(),
};

export const AgentDecisionSchema = z.object({
  /** `ask` (R-HOOK-9, Claude Code with hooks.claudeNativePrompt): the agent shows its own dialog; the approval is filed in assent too. */
  decision: z.enum(['allow', 'deny', 'ask']),
  reason: z.string(),
  /** What the model reads (a denial says what happened and what it may do instead, R-HOOK-1). */
  message: z.string(),
  callId: z.string().optional(),
  approvalId: z.string().optional(),
  channel: z.string().optional(),
  waitedForConsentMs: z.number().optional(),
  /** R-SH-14: allowed to run confined; the agent runs `command` (the original wrapped in `assent confine`) instead. */
  confined: z.object({ command: z.string(), digest: z.string() }).optional(),
});

export const ExplainedPartSchema = z.object({
  kind: z.string(),
  text: z.string(),
  decision: z.enum(['allow', 'deny', 'prompt']),
  rule: z.string().optional(),
  reason: z.string().optional(),
  /** The auto-approval rule (`assent rules add --command|--path|--url`) that allowed this part (R-POL-6). */
  ruleId: z.string().optional(),
});

export const PolicyExplanationSchema = z.object({
  decision: z.enum(['allow', 'deny', 'prompt']),
  /** R-SH-14: allowed to run in the sandbox (the hook rewrites the command). */
  confined: z.literal(true).optional(),
  parts: z.array(ExplainedPartSchema),
});

export interface AgentOperationDeps {
  agents: AgentActionService;
}

export function agentOperations(deps: AgentOperationDeps): Operation[] {
  return [
    defineOperation({
      name: 'agents.authorize',
      summary:
        "Decide one agent action (an agent's own tool call, seen by its hook) by the agent-action policy, rules, session grants and, for prompt, a human (R-HOOK-3); a denial is an answer, not an error.",
      params: z.strictObject({
        ...ActionFields,
        cwd: z.string().max(4096),
        kind: z.enum(AGENT_ACTION_KINDS),
        /** Epoch ms by which the hook must answer its agent (R-HOOK-11): an approval filed for it expires no later. */
        answerBy: z.number().int().positive().optional(),
        /** Claude Code's permission_mode: whether its own dialog would show for an `ask` (R-HOOK-9). */
        permissionMode: z.string().min(1).max(40).optional(),
      }),
      result: AgentDecisionSchema,
      class: 'write',
      exposure: { cli: HOOK_ONLY, rpc: true, http: HOOK_ONLY, mcp: NOT_ON_MCP },
      handler: async (params, context) => {
        const action: Parameters<AgentActionService['authorize']>[0] = {
          agent: params.agent,
          sessionId: params.sessionId,
          cwd: params.cwd,
          tool: params.tool,
          kind: params.kind,
          input: params.input,
        };
        if (params.toolUseId !== undefined) action.toolUseId = params.toolUseId;
        if (params.mcpServer !== undefined) action.mcpServer = params.mcpServer;
        if (params.permissionMode !== undefined) action.permissionMode = params.permissionMode;
        const watch = watchRequest(context);
        return deps.agents.authorize(action, {
          ...(watch === undefined ? {} : { watch }),
          ...(params.answerBy === undefined ? {} : { answerBy: params.answerBy }),
          onApprovalFiled: (approval) => {
            if (context.connection !== undefined && !context.connection.closed) {
              context.connection.notify(AGENT_PENDING_NOTIFICATION, { approvalId: approval.id, expiresAt: approval.expiresAt });
            }
          },
        });
      },
    }),
    defineOperation({
      name: 'agents.dialog',
      summary:
        "Answer an agent's own permission dialog (R-HOOK-9, Claude Code's PermissionRequest hook) with the decision of the approval its call filed, whoever gives it; the request ending first records the dialog's \"no\" as a deny with channel agent.",
      params: z.strictObject({
        agent: z.enum(AGENT_NAMES),
        sessionId: z.string().min(1).max(200),
        tool: z.string().min(1).max(200),
        /** The exact tool_input shown in the dialog: the approval it waits for is bound to its digest. */
        input: portableJson(z.record(z.string(), z.unknown())),
      }),
      result: AgentDecisionSchema,
      class: 'write',
      exposure: { cli: HOOK_ONLY, rpc: true, http: HOOK_ONLY, mcp: NOT_ON_MCP },
      handler: async (params, context) => {
        const watch = watchRequest(context);
        return deps.agents.dialog({ agent: params.agent, sessionId: params.sessionId, tool: params.tool, input: params.input }, watch);
      },
    }),
    defineOperation({
      name: 'policy.explain',
      summary:
        "Explain the decision the daemon's pinned policy gives one agent action (R-POL-9): the final decision and each simple command, path or URL with the rule or default that decided it. Runs nothing and files nothing.",
      params: z.strictObject({
        agent: z.enum(AGENT_NAMES),
        tool: z.string().min(1).max(200),
        input: portableJson(z.record(z.string(), z.unknown())),
        cwd: z.string().min(1).max(4096),
        mcpServer: z.string().min(1).max(200).optional(),
      }),
      result: PolicyExplanationSchema,
      class: 'read',
      exposure: {
        cli: true,
        rpc: true,
        http: { rationale: 'an operator question asked from a terminal (`assent policy explain`); the web page shows the same parts in each approval' },
        mcp: { rationale: 'an agent must not probe the policy for a form that passes; the operator asks in a terminal' },
      },
      handler: async (params) => {
        const action: Parameters<AgentActionService['explain']>[0] = { agent: params.agent, tool: params.tool, input: params.input, cwd: params.cwd };
        if (params.mcpServer !== undefined) action.mcpServer = params.mcpServer;
        return deps.agents.explain(action);
      },
    }),
    defineOperation({
      name: 'agents.finish',
      summary:
        'Record the end of an allowed agent action from its after-event (R-HOOK-6): matched by tool-use id, or (Gemini CLI) by session, tool and input digest; audited with its outcome and duration.',
      params: z.strictObject({
        ...ActionFields,
        outcome: z.enum(['ok', 'error']),
        durationMs: z.number().nonnegative().max(86_400_000).optional(),
      }),
      result: z.object({ recorded: z.boolean(), callId: z.string().optional() }),
      class: 'write',
      exposure: { cli: HOOK_ONLY, rpc: true, http: HOOK_ONLY, mcp: NOT_ON_MCP },
      handler: async (params) => {
        const end: Parameters<AgentActionService['finish']>[0] = {
          agent: params.agent,
          sessionId: params.sessionId,
          tool: params.tool,
          input: params.input,
          outcome: params.outcome,
        };
        if (params.toolUseId !== undefined) end.toolUseId = params.toolUseId;
        if (params.mcpServer !== undefined) end.mcpServer = params.mcpServer;
        if (params.durationMs !== undefined) end.durationMs = params.durationMs;
        return deps.agents.finishReported(end);
      },
    }),
  ];
}
