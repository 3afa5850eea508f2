// Operations that let people into the HTTP head (R-WEB-2, R-WEB-4, R-REM-3):
// pairing codes for the browser, the signed-in devices and their revocation,
// and bearer tokens for scripts. Creating a credential is a human decision, so
// none of them is reachable from the MCP head (R-OPS-3).
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { AssentError } from '../core/base/errors.js';
import type { WebAuth } from '../service/webAuth.js';
import { writeFileNew } from '../state/statePaths.js';
import { parseTtl } from './ruleForms.js';
import { defineOperation, type Operation } from './operation.js';

const NOT_ON_MCP_HUMAN = {
  rationale: 'human-decision operations are never exposed to a model-driven head (R-OPS-3): an agent must not let itself into the approval page or mint credentials',
};
const PAIRING_NOT_HTTP = { rationale: 'pairing is how a browser gets in; issuing a code from an already-authenticated browser would let one stolen session mint more' };
const TOKENS_NOT_HTTP = { rationale: 'tokens are minted only from the terminal, so a stolen page session or token cannot mint more credentials' };
const TOKEN_META_NOT_MCP = { rationale: 'credential management stays with the operator; an agent has no use for token metadata' };
const DEVICES_NOT_MCP = {
  rationale: 'signed-in devices are the operator\'s approval channel; an agent has no use for their list and must not be able to sign the operator\'s phone out',
};

export const TokenInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  audience: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  revokedAt: z.number().optional(),
  state: z.enum(['active', 'expired', 'revoked']),
});

export const PairingResultSchema = z.object({
  url: z.string(),
  code: z.string(),
  expiresAt: z.number(),
  /** R-REM-7: `sha256:` + lowercase hex of the certificate's DER, when the daemon serves TLS itself. */
  fingerprint: z.string().optional(),
});
export type PairingResult = z.infer<typeof PairingResultSchema>;

export const DeviceInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  userAgent: z.string(),
  pairedAt: z.number(),
  lastSeenAt: z.number(),
  expiresAt: z.number(),
  /** Paired with "remember this device": survives a daemon restart (R-REM-3). */
  remembered: z.boolean(),
});

export interface WebOperationDeps {
  auth: WebAuth;
  /** The page's URL (and certificate fingerprint) once the HTTP head listens; rejects with `unavailable` when it could not. */
  page(): Promise<{ url: string; fingerprint?: string }>;
}

export function webOperations(deps: WebOperationDeps): Operation[] {
  return [
    defineOperation({
      name: 'web.pair',
      summary: 'A one-time 8-character pairing code (120 s, 5 wrong tries burn it) and the URL of the approval page.',
      params: z.strictObject({}),
      result: PairingResultSchema,
      class: 'human-decision',
      exposure: { cli: true, rpc: true, http: PAIRING_NOT_HTTP, mcp: NOT_ON_MCP_HUMAN },
      handler: async () => {
        const page = await deps.page();
        return { ...page, ...deps.auth.issuePairingCode() };
      },
    }),
    defineOperation({
      name: 'web.devices',
      summary: 'Browsers signed in to the approval page: name, user agent, paired-at, last-seen, expiry, and whether remembered across restarts (never a cookie).',
      params: z.strictObject({}),
      result: z.array(DeviceInfoSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: DEVICES_NOT_MCP },
      handler: async () => deps.auth.listDevices(),
    }),
    defineOperation({
      name: 'web.revoke',
      summary: 'Sign one browser out at once: its open event stream ends and its next request is refused (401). Works headless; revoking is always safe.',
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      result: DeviceInfoSchema,
      class: 'write',
      exposure: { cli: true, rpc: true, http: true, mcp: DEVICES_NOT_MCP },
      handler: async (params) => deps.auth.revokeDevice(params.id),
    }),
    defineOperation({
      name: 'tokens.create',
      summary: 'Mint a bearer token for scripts, bound to this daemon, written to a new 0600 file and never printed.',
      params: z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, '1-64 letters, digits, ".", "_" or "-"'),
        ttl: z.string().max(16),
        out: z.string().min(1).max(4096).refine((value) => isAbsolute(value), 'an absolute path'),
      }),
      result: TokenInfoSchema.extend({ file: z.string() }),
      class: 'human-decision',
      exposure: { cli: true, rpc: true, http: TOKENS_NOT_HTTP, mcp: NOT_ON_MCP_HUMAN },
      handler: async (params) => {
        const { token, info } = await deps.auth.createToken({ name: params.name, ttlMs: parseTtl(params.ttl) });
        try {
          writeFileNew(params.out, `${token}\n`);
        } catch (error) {
          // A token nobody holds must not stay valid.
          await deps.auth.revokeToken(info.id);
          throw error instanceof AssentError ? error : new AssentError('invalid_input', `cannot write the token file ${params.out}`, { cause: error });
        }
        return { ...info, file: params.out };
      },
    }),
    defineOperation({
      name: 'tokens.list',
      summary: 'Bearer tokens with their name, audience, expiry and state (never the secret).',
      params: z.strictObject({}),
      result: z.array(TokenInfoSchema),
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: TOKEN_META_NOT_MCP },
      handler: async () => deps.auth.listTokens(),
    }),
    defineOperation({
      name: 'tokens.revoke',
      summary: 'Revoke a bearer token; it is refused from the next request on.',
      params: z.strictObject({ id: z.string().min(1).max(64) }),
      result: TokenInfoSchema,
      class: 'write',
      exposure: { cli: true, rpc: true, http: true, mcp: TOKEN_META_NOT_MCP },
      handler: async (params) => deps.auth.revokeToken(params.id),
    }),
  ];
}
