// Proof, effect and exec-approval operations (R-D-4b, R-J-3..7), declared once
// for every head (R-OPS-1). Tokens travel only in params and results over the
// private socket; they are never put in events, logs or error messages.
import { z } from 'zod';
import { nativeDigestOf } from '../journal/nativeHash.js';
import { portableJson } from '../core/base/portableJson.js';
import { isProofShaped } from '../core/approval/proof.js';
import { AssentError } from '../core/base/errors.js';
import type { ApprovalService } from '../service/approvalService.js';
import type { ProofService } from '../service/proofService.js';
import type { HostStore, StoreInfo } from '../journal/store.js';
import { ApprovalViewSchema, decisionFrom, watchRequest } from './approvalOperations.js';
import { defineOperation, type CallContext, type Operation } from './operation.js';

const NOT_ON_MCP_HUMAN = {
  rationale: 'human-decision operations are never exposed to a model-driven head (R-OPS-3): an agent must not approve its own calls',
};
const NO_PROOFS_ON_MCP = {
  rationale: 'proofs are never accepted as tool arguments or returned in tool results (R-MCP-9); the gateway consumes handoff proofs inside the daemon',
};
const NO_EXPORT_OVER_HTTP = {
  rationale: 'a proof leaves the daemon only into a new 0600 file written by the local CLI (R-J-7); an HTTP response would put the token within a browser\u2019s reach',
};
const LOCAL_CONSUMER_ONLY = {
  rationale:
    'consumption is offered to local processes of the installation owner over the 0600 socket; HTTP callers are web sessions or bearer tokens, other principals than the owner a proof is issued to',
};
const CONSUMER_ONLY = { rationale: 'called by the CLI process that runs an approved effect, between its consumption and its outcome; not an operator command' };

const ProofViewSchema = z.object({
  id: z.string(),
  approvalId: z.string(),
  principal: z.string(),
  sessionId: z.string(),
  actionKind: z.enum(['tool', 'exec']),
  actionDigest: z.string(),
  revision: z.string(),
  decision: z.literal('allow'),
  channel: z.string(),
  audience: z.enum(['mcp', 'cli', 'http']),
  issuedAt: z.number(),
  expiresAt: z.number(),
  state: z.enum(['issued', 'consumed', 'revoked', 'expired']),
  consumedAt: z.number().optional(),
  revokedAt: z.number().optional(),
  effectId: z.string().optional(),
  /** Team mode: the host that issued it (R-TEAM-6). */
  hostId: z.string().optional(),
});

const EffectSchema = z.object({
  id: z.string(),
  proofId: z.string(),
  approvalId: z.string(),
  actionDigest: z.string(),
  state: z.enum(['intent', 'completed', 'failed', 'uncertain']),
  startedAt: z.number(),
  finishedAt: z.number().optional(),
  resultDigest: z.string().optional(),
});

/**
 * Exactly the exec action shape of SPEC §6 (the effective action, defaults included).
 * Checked as it arrived, so an env key "__proto__" or a lone surrogate is refused
 * rather than dropped from the digest (core/base/jsonLimits.ts).
 */
const ExecActionSchema = portableJson(
  z.strictObject({
    executable: z.string().min(1).max(4096),
    cwd: z.string().min(1).max(4096),
    args: z.array(z.string().max(65_536)).max(128),
    env: z.record(z.string(), z.string()),
  }),
);

/** A token in params; its shape is checked without ever echoing it back. */
const ProofParam = z.string().refine(isProofShaped, { message: 'not an assent proof (asp1_ followed by 43 base64url characters)' });

const IssuedProofSchema = z.object({ approvalId: z.string(), proof: z.string(), proofId: z.string(), expiresAt: z.number() });

export interface ProofOperationDeps {
  service: ApprovalService;
  proofs: ProofService;
  /** The store: which host this is and which hosts the team has (R-TEAM-6). */
  /** This host, whether the store is shared, and the team's hosts. */
  store: Pick<StoreInfo, 'hostId' | 'shared'> & Pick<HostStore, 'listHosts'>;
}

const TERMINAL_GATED = {
  rationale: 'declaring that a host will not come back is an operator command typed at a terminal (`assent effects reconcile --host ID`), never a browser click',
};

function audienceOf(context: CallContext): 'cli' | 'http' {
  return context.head === 'http' ? 'http' : 'cli';
}

function publicEffect(effect: { id: string; proofId: string; approvalId: string; actionDigest: string; state: string; startedAt: number; finishedAt?: number; resultDigest?: string }): z.infer<typeof EffectSchema> {
  const view: z.infer<typeof EffectSchema> = {
    id: effect.id,
    proofId: effect.proofId,
    approvalId: effect.approvalId,
    actionDigest: effect.actionDigest,
    state: effect.state as z.infer<typeof EffectSchema>['state'],
    startedAt: effect.startedAt,
  };
  if (effect.finishedAt !== undefined) view.finishedAt = effect.finishedAt;
  if (effect.resultDigest !== undefined) view.resultDigest = effect.resultDigest;
  return view;
}

export function proofOperations(deps: ProofOperationDeps): Operation[] {
  const { service, proofs } = deps;
  return [
    defineOperation({
      name: 'proofs.list',
      summary: 'Issued proofs (metadata only: never the token), newest first.',
      params: z.strictObject({ limit: z.number().int().positive().max(100_000).optional() }),
      result: z.array(ProofViewSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => proofs.list(params.limit),
    }),
    defineOperation({
      name: 'proofs.revoke',
      summary: 'Revoke an unused proof by its id or by the approval that produced it (R-J-6).',
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      result: ProofViewSchema,
      class: 'write',
      exposure: { cli: true, rpc: true, http: true, mcp: { rationale: 'proof management stays with the operator' } },
      handler: async (params) => proofs.revoke(params.id),
    }),
    defineOperation({
      name: 'proofs.issue',
      summary: 'Approve a pending approval and issue its proof for another head of the same principal (`assent approve ID --export-proof FILE`).',
      params: z.strictObject({ id: z.string().min(1).max(64), channel: z.enum(['cli', 'watch', 'tty']).optional() }),
      result: z.object({ approval: ApprovalViewSchema, proof: z.string(), proofId: z.string(), expiresAt: z.number() }),
      class: 'human-decision',
      exposure: { cli: true, rpc: true, http: NO_EXPORT_OVER_HTTP, mcp: NOT_ON_MCP_HUMAN },
      // The channel is stamped by the head; a `channel` param is only a claim (hardening 1).
      handler: async (params, context) => service.approveWithProof(await decisionFrom({ id: params.id, behavior: 'allow', channel: params.channel }, context)),
    }),
    defineOperation({
      name: 'proofs.consume',
      summary: 'Consume a proof for one exact exec action: the effect intent is recorded before the caller may start it (R-J-3); a consumed proof returns the recorded effect (R-J-4).',
      params: z.strictObject({ proof: ProofParam, action: ExecActionSchema, revision: z.string().min(1).max(200) }),
      result: z.object({ outcome: z.enum(['consumed', 'replay']), approvalId: z.string(), effect: EffectSchema }),
      class: 'write',
      exposure: { cli: CONSUMER_ONLY, rpc: true, http: LOCAL_CONSUMER_ONLY, mcp: NO_PROOFS_ON_MCP },
      handler: async (params, context) => {
        const outcome = await proofs.consume({
          proof: params.proof,
          audience: audienceOf(context),
          actionDigest: nativeDigestOf(params.action),
          revision: params.revision,
          principal: context.principal,
        });
        return { outcome: outcome.kind, approvalId: outcome.proof.approvalId, effect: publicEffect(outcome.effect) };
      },
    }),
    defineOperation({
      name: 'effects.finish',
      summary: 'Record the outcome of an effect whose intent was recorded by proofs.consume.',
      params: z.strictObject({ effectId: z.string().min(1).max(64), ok: z.boolean(), durationMs: z.number().nonnegative().optional() }),
      result: EffectSchema,
      class: 'write',
      exposure: { cli: CONSUMER_ONLY, rpc: true, http: LOCAL_CONSUMER_ONLY, mcp: CONSUMER_ONLY },
      handler: async (params) =>
        publicEffect(await proofs.finishEffect(params.effectId, { ok: params.ok, audit: params.durationMs === undefined ? {} : { durationMs: params.durationMs } })),
    }),
    defineOperation({
      name: 'effects.get',
      summary: 'One effect by id: intent, completed, failed or uncertain, with its result digest.',
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      result: EffectSchema,
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async (params) => publicEffect(await proofs.getEffect(params.id)),
    }),
    defineOperation({
      name: 'effects.reconcile',
      summary:
        'Team mode: mark every open effect intent of another host, one that will not come back, as uncertain (R-TEAM-6); a host does its own when its daemon starts. Nothing is retried.',
      params: z.strictObject({ hostId: z.string().regex(/^[0-9a-f]{32}$/, 'a host id: 32 hex digits (see `assent daemon status` on that host, or the hosts a refusal lists)') }),
      result: z.object({ hostId: z.string(), hostName: z.string(), effects: z.array(EffectSchema) }),
      class: 'write',
      exposure: { cli: true, rpc: true, http: TERMINAL_GATED, mcp: TERMINAL_GATED },
      handler: async (params) => {
        const { store } = deps;
        if (!store.shared) throw new AssentError('conflict', 'this daemon uses the embedded journal: there is no other host whose effects it could reconcile; its own open intents became uncertain when it started');
        if (params.hostId === store.hostId) {
          throw new AssentError('conflict', `${params.hostId} is this host; its open intents were marked uncertain when its daemon started, and an intent open now belongs to a call that may still be running. Nothing was changed.`);
        }
        const hosts = await store.listHosts();
        const host = hosts.find((candidate) => candidate.hostId === params.hostId);
        if (host === undefined) {
          const known = hosts.map((candidate) => `${candidate.hostId} (${candidate.name})`).join(', ');
          throw new AssentError('not_found', `no host ${params.hostId} in the team database; known hosts: ${known || 'none'}. Nothing was changed.`, { details: { hostId: params.hostId } });
        }
        const effects = await proofs.reconcile(params.hostId);
        return { hostId: host.hostId, hostName: host.name, effects: effects.map(publicEffect) };
      },
    }),
    defineOperation({
      name: 'actions.request',
      summary: 'File an exec approval and wait for a human; on allow returns the proof the waiting CLI consumes (`assent action run --via-daemon`).',
      params: z.strictObject({
        action: ExecActionSchema,
        revision: z.string().min(1).max(200),
        sessionId: z.string().min(1).max(200).optional(),
        caller: portableJson(z.record(z.string(), z.unknown())).optional(),
      }),
      result: IssuedProofSchema,
      class: 'write',
      exposure: { cli: CONSUMER_ONLY, rpc: true, http: LOCAL_CONSUMER_ONLY, mcp: NO_PROOFS_ON_MCP },
      handler: async (params, context) => {
        if (context.head === 'mcp') throw new AssentError('forbidden', 'actions.request is not available to an MCP client');
        const request: Parameters<ApprovalService['requestExecApproval']>[0] = {
          sessionId: params.sessionId ?? `cli-${context.connection?.id ?? 'direct'}`,
          action: params.action,
          revision: params.revision,
        };
        if (params.caller !== undefined) request.caller = params.caller;
        return service.requestExecApproval(request, watchRequest(context));
      },
    }),
  ];
}
