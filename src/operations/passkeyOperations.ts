// Passkey operations (R-REM-6, R-REM-7), declared once for every head. The
// page enrols and asserts (HTTP, paired session only); the terminal confirms
// an enrolment, lists and removes passkeys (CLI). Nothing here reaches MCP.
import { z } from 'zod';
import { AssentError } from '../core/base/errors.js';
import { portableJson } from '../core/base/portableJson.js';
import type { PasskeyService } from '../service/passkeys.js';
import { ApprovalViewSchema } from './approvalOperations.js';
import { defineOperation, type CallContext, type Operation } from './operation.js';

const NOT_ON_MCP_HUMAN = {
  rationale: 'human-decision operations are never exposed to a model-driven head (R-OPS-3): an agent must not enrol a passkey or approve with one',
};
const NOT_ON_MCP_META = { rationale: 'credential management stays with the operator; an agent has no use for passkey metadata' };
const PAGE_ONLY = {
  rationale: 'WebAuthn runs in the paired page: only a browser session holds an authenticator, and the challenge is bound to that session',
};
const TERMINAL_ONLY = {
  rationale: 'the terminal confirms what the page started; a page session confirming its own enrolment would skip the typed terminal code (R-REM-6)',
};

/** Free-form parts of a WebAuthn response, bounded; the library checks their meaning. */
const WebAuthnPart = portableJson(z.record(z.string().max(64), z.unknown()));
const Base64Url = z.string().min(1).max(2048).regex(/^[A-Za-z0-9_-]+$/, 'base64url');

const RegistrationResponseSchema = z.looseObject({
  id: Base64Url,
  rawId: Base64Url,
  type: z.literal('public-key'),
  response: z.looseObject({ clientDataJSON: z.string().max(8192), attestationObject: z.string().max(65_536), transports: z.array(z.string().max(32)).max(16).optional() }),
  clientExtensionResults: WebAuthnPart.optional(),
  authenticatorAttachment: z.string().max(32).optional(),
});

const AuthenticationResponseSchema = z.looseObject({
  id: Base64Url,
  rawId: Base64Url,
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: z.string().max(8192),
    authenticatorData: z.string().max(8192),
    signature: z.string().max(8192),
    userHandle: z.string().max(1024).optional(),
  }),
  clientExtensionResults: WebAuthnPart.optional(),
  authenticatorAttachment: z.string().max(32).optional(),
});

export const PasskeyInfoSchema = z.object({
  id: z.string(),
  credentialId: z.string(),
  enrolledBy: z.string(),
  rpId: z.string(),
  createdAt: z.number(),
  lastUsedAt: z.number().optional(),
});

export const EnrolmentConfirmationSchema = z.object({ enrolledBy: z.string(), expiresAt: z.number() });
export type EnrolmentConfirmation = z.infer<typeof EnrolmentConfirmationSchema>;

const JsonObject = z.record(z.string(), z.unknown());

/**
 * The paired page session a passkey operation comes from: enrolment and
 * assertions are bound to it, and a bearer token is no page.
 */
function pageSession(context: CallContext): string {
  if (context.head !== 'http' || !context.principal.startsWith('web:')) {
    throw new AssentError('forbidden', 'Passkeys are enrolled and used from a paired approval page (a browser session); a bearer token or another head cannot. Pair a page with `assent web`.');
  }
  return context.principal;
}

export interface PasskeyOperationDeps {
  passkeys: PasskeyService;
}

export function passkeyOperations(deps: PasskeyOperationDeps): Operation[] {
  const { passkeys } = deps;
  return [
    defineOperation({
      name: 'passkeys.enrol',
      summary: 'The page\'s "Add a passkey": a one-time code (120 s) that `assent web passkeys add` asks for at the terminal before this page session may register a passkey.',
      params: z.strictObject({}),
      result: z.object({ code: z.string(), expiresAt: z.number() }),
      class: 'write',
      exposure: { cli: PAGE_ONLY, rpc: PAGE_ONLY, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (_params, context) => passkeys.beginEnrolment(pageSession(context)),
    }),
    defineOperation({
      name: 'passkeys.confirm',
      summary: 'Confirm, at the terminal, the enrolment whose code the page shows; that page session may then register one passkey within 120 s.',
      params: z.strictObject({ code: z.string().min(1).max(64) }),
      result: EnrolmentConfirmationSchema,
      class: 'human-decision',
      exposure: { cli: true, rpc: true, http: TERMINAL_ONLY, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params) => passkeys.confirmEnrolment(params.code),
    }),
    defineOperation({
      name: 'passkeys.registrationOptions',
      summary: 'WebAuthn creation options (user verification required) for the page session whose enrolment the terminal confirmed.',
      params: z.strictObject({}),
      result: JsonObject,
      class: 'write',
      exposure: { cli: PAGE_ONLY, rpc: PAGE_ONLY, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (_params, context) => (await passkeys.registrationOptions(pageSession(context))) as unknown as Record<string, unknown>,
    }),
    defineOperation({
      name: 'passkeys.register',
      summary: 'Verify the page\'s WebAuthn registration and enrol the passkey (its public key, counter and the session that enrolled it).',
      params: z.strictObject({ response: RegistrationResponseSchema }),
      result: PasskeyInfoSchema,
      class: 'human-decision',
      exposure: { cli: PAGE_ONLY, rpc: PAGE_ONLY, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params, context) => passkeys.register(pageSession(context), params.response as never),
    }),
    defineOperation({
      name: 'passkeys.list',
      summary: 'Enrolled passkeys: id, credential id, the session that enrolled it, when, and when it last approved.',
      params: z.strictObject({}),
      result: z.array(PasskeyInfoSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: NOT_ON_MCP_META },
      handler: async () => passkeys.list(),
    }),
    defineOperation({
      name: 'passkeys.remove',
      summary: 'Remove a passkey at once: its next assertion is refused, even one already being checked. Works anywhere; removing is always safe.',
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      result: PasskeyInfoSchema,
      class: 'write',
      exposure: { cli: true, rpc: true, http: true, mcp: NOT_ON_MCP_META },
      handler: async (params) => passkeys.remove(params.id),
    }),
    defineOperation({
      name: 'passkeys.challenge',
      summary: 'WebAuthn request options for one pending approval: a challenge binding the approval id, the action digest and a fresh single-use nonce.',
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      result: z.object({ nonce: z.string(), expiresAt: z.number(), options: JsonObject }),
      class: 'write',
      exposure: { cli: PAGE_ONLY, rpc: PAGE_ONLY, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params, context) => {
        const request = await passkeys.assertionOptions(pageSession(context), params.id);
        return { nonce: request.nonce, expiresAt: request.expiresAt, options: request.options as unknown as Record<string, unknown> };
      },
    }),
    defineOperation({
      name: 'passkeys.approve',
      summary:
        'Approve a pending approval with a passkey assertion over its challenge (once, this exact action); recorded as channel web with presence passkey and the credential id.',
      params: z.strictObject({ id: z.string().min(1).max(64), nonce: z.string().min(1).max(64), response: AuthenticationResponseSchema }),
      result: ApprovalViewSchema,
      class: 'human-decision',
      exposure: { cli: PAGE_ONLY, rpc: PAGE_ONLY, http: true, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params, context) =>
        passkeys.approve(pageSession(context), { approvalId: params.id, nonce: params.nonce, response: params.response as never }),
    }),
  ];
}
