// Passkey-confirmed approvals (R-REM-6, R-REM-7): enrolment (a code the page
// shows, typed at the terminal, then a WebAuthn registration), the enrolled
// passkeys, and approving with an assertion whose challenge binds the approval
// id, the action digest and a fresh single-use nonce. The signature is checked
// with @simplewebauthn/server; what it depended on — the credential still
// enrolled, its counter, the digest — is checked again inside the deciding
// transaction, which marks the approval approved only if all of it holds and
// writes the new counter only when the decision commits (in team mode inside
// the PostgreSQL transaction, just before its COMMIT).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Notifier } from '../channels/notifier.js';
import type { Clock } from '../core/base/clock.js';
import { AssentError, errorText } from '../core/base/errors.js';
import { ID_ALPHABET, newApprovalId, randomString, type RandomBytes } from '../core/base/ids.js';
import { approvalChallenge, isNonceShaped, newNonce } from '../core/approval/passkeyChallenge.js';
import type { PasskeyRecord } from '../journal/journal.js';
import type { PasskeyStore } from '../journal/store.js';
import type { DecideParams } from './approvalQueue.js';
import type { ApprovalView } from './approvalViews.js';
import type { Logger } from './logger.js';

/** The part of the journal passkeys need (this host's journal satisfies it). */
export type { PasskeyStore } from '../journal/store.js';

/** The part of the approval service passkeys need. */
export interface PasskeyApprovals {
  get(id: string): Promise<ApprovalView>;
  decide(params: DecideParams): Promise<ApprovalView>;
}

/** Where WebAuthn runs: the relying-party id (a DNS name) and the page's origin, both from web.publicUrl. */
export interface RelyingParty {
  rpId: string;
  origin: string;
}

export interface PasskeyServiceOptions {
  store: PasskeyStore;
  approvals: PasskeyApprovals;
  clock: Clock;
  random: RandomBytes;
  logger: Logger;
  /** The relying party in force, or a sentence saying why there is none (no publicUrl, an IP address…). */
  relyingParty(): RelyingParty | string;
  notifier?: Notifier;
  /** Lifetime of an enrolment code, and then of the confirmed enrolment; 120 s. */
  enrolmentTtlMs?: number;
  /** Lifetime of an approval challenge (never past the approval's deadline); 120 s. */
  challengeTtlMs?: number;
  /** Wrong enrolment codes tolerated before every open enrolment is burnt; 5. */
  maxEnrolmentFailures?: number;
}

/** The public view of a passkey: never more than the journal keeps, which holds no secret either. */
export interface PasskeyInfo {
  id: string;
  credentialId: string;
  enrolledBy: string;
  rpId: string;
  createdAt: number;
  lastUsedAt?: number;
}

export interface EnrolmentCode {
  code: string;
  expiresAt: number;
}

export interface AssertionRequest {
  nonce: string;
  expiresAt: number;
  options: PublicKeyCredentialRequestOptionsJSON;
}

export const ENROLMENT_CODE_LENGTH = 8;
const DEFAULT_TTL_MS = 120_000;
/** Outstanding approval challenges kept at once; the oldest go first. */
const MAX_CHALLENGES = 1000;
const WEBAUTHN_TIMEOUT_MS = 60_000;

interface Enrolment {
  principal: string;
  codeHash: Buffer;
  expiresAt: number;
  confirmed: boolean;
  /** The registration challenge handed to the page, once confirmed. */
  challenge?: string;
}

interface IssuedChallenge {
  approvalId: string;
  actionDigest: string;
  principal: string;
  challenge: string;
  expiresAt: number;
}

type WebAuthnLibrary = typeof import('@simplewebauthn/server');
let library: Promise<WebAuthnLibrary> | undefined;
/** Loaded on first use, so a daemon that never sees a passkey never pays for it. */
function webauthn(): Promise<WebAuthnLibrary> {
  library ??= import('@simplewebauthn/server');
  return library;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A refusal that leaves the approval pending; `reason` is stable, the message says what to do. */
function refused(reason: string, message: string, approvalId?: string): AssentError {
  return new AssentError('presence_required', `${message}${approvalId === undefined ? '' : ` Approval ${approvalId} is still pending.`}`, {
    details: approvalId === undefined ? { presence: 'passkey', reason } : { presence: 'passkey', reason, approvalId },
  });
}

/** The authenticator-data flags of an assertion: user present (bit 0) and user verified (bit 2). */
function assertionFlags(response: AuthenticationResponseJSON): { up: boolean; uv: boolean } | undefined {
  const text = response.response?.authenticatorData;
  if (typeof text !== 'string') return undefined;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length < 37) return undefined;
  const flags = bytes[32] ?? 0;
  return { up: (flags & 0x01) !== 0, uv: (flags & 0x04) !== 0 };
}

/**
 * The relying party of `publicUrl` (R-REM-7): its host name is the RP id and
 * its origin the only one accepted. WebAuthn refuses IP origins, so an address
 * is no relying party; neither is plain http except on localhost.
 */
export function relyingPartyOf(publicUrl: string | undefined): RelyingParty | string {
  if (publicUrl === undefined) {
    return 'passkeys need web.publicUrl: an https:// URL with a DNS name the phone reaches (see docs/remote.md); it is not set';
  }
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return `web.publicUrl ${JSON.stringify(publicUrl)} is not a URL`;
  }
  const host = url.hostname;
  if (/^\[.*\]$/.test(host) || host.includes(':') || /^\d{1,3}(\.\d{1,3}){3}$/.test(host)) {
    return `web.publicUrl names the address ${host}; WebAuthn refuses IP origins, so passkeys need a DNS name (a reverse proxy with a real name, or a name in the phone's DNS)`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && host === 'localhost')) {
    return `web.publicUrl ${JSON.stringify(publicUrl)} is not https://; WebAuthn runs only in a secure context`;
  }
  return { rpId: host, origin: url.origin };
}

export class PasskeyService {
  private readonly enrolments = new Map<string, Enrolment>();
  private enrolmentFailures = 0;
  private readonly challenges = new Map<string, IssuedChallenge>();
  private readonly enrolmentTtlMs: number;
  private readonly challengeTtlMs: number;
  private readonly maxEnrolmentFailures: number;

  constructor(private readonly options: PasskeyServiceOptions) {
    this.enrolmentTtlMs = options.enrolmentTtlMs ?? DEFAULT_TTL_MS;
    this.challengeTtlMs = options.challengeTtlMs ?? DEFAULT_TTL_MS;
    this.maxEnrolmentFailures = options.maxEnrolmentFailures ?? 5;
  }

  private relyingParty(): RelyingParty {
    const rp = this.options.relyingParty();
    if (typeof rp === 'string') throw new AssentError('unavailable', `Passkeys are not available: ${rp}.`);
    return rp;
  }

  /** The page's "Add a passkey": a one-time code for `assent web passkeys add`; a newer one replaces this session's older one. */
  beginEnrolment(principal: string): EnrolmentCode {
    this.relyingParty();
    const code = randomString(this.options.random, ID_ALPHABET, ENROLMENT_CODE_LENGTH);
    const expiresAt = this.options.clock.now() + this.enrolmentTtlMs;
    this.enrolments.set(principal, { principal, codeHash: sha256(code), expiresAt, confirmed: false });
    return { code, expiresAt };
  }

  /**
   * The terminal's confirmation (`assent web passkeys add`): the code the page
   * shows lets that page session register one passkey within the enrolment
   * lifetime. Wrong codes count; after the last tolerated one every open
   * enrolment is burnt, so guessing costs the guesser the page's code too.
   */
  confirmEnrolment(code: string): { enrolledBy: string; expiresAt: number } {
    const now = this.options.clock.now();
    const candidate = sha256(code.trim().toLowerCase());
    let found: Enrolment | undefined;
    for (const enrolment of this.enrolments.values()) {
      if (enrolment.expiresAt <= now || enrolment.confirmed) continue;
      if (timingSafeEqual(candidate, enrolment.codeHash)) found = enrolment;
    }
    if (found === undefined) {
      this.enrolmentFailures += 1;
      if (this.enrolmentFailures >= this.maxEnrolmentFailures) {
        this.enrolments.clear();
        this.enrolmentFailures = 0;
        throw new AssentError('unauthorized', 'That code matches no open passkey enrolment, and too many wrong codes were typed: every open enrolment was cancelled. Press "Add a passkey" on the page again for a new code.');
      }
      throw new AssentError('unauthorized', 'That code matches no open passkey enrolment (wrong, expired or used). Press "Add a passkey" on the paired page and type the code it shows within 120 s.');
    }
    this.enrolmentFailures = 0;
    found.confirmed = true;
    found.expiresAt = now + this.enrolmentTtlMs;
    this.options.logger.info('passkey enrolment confirmed at the terminal', { enrolledBy: found.principal });
    return { enrolledBy: found.principal, expiresAt: found.expiresAt };
  }

  private confirmedEnrolment(principal: string): Enrolment {
    const enrolment = this.enrolments.get(principal);
    if (enrolment === undefined || enrolment.expiresAt <= this.options.clock.now()) {
      this.enrolments.delete(principal);
      throw new AssentError('forbidden', 'This page has no open passkey enrolment. Press "Add a passkey", then type the code it shows into `assent web passkeys add` in your terminal.');
    }
    if (!enrolment.confirmed) {
      throw new AssentError('forbidden', 'The enrolment is not confirmed yet: run `assent web passkeys add` in your terminal and type the code this page shows, then register again.');
    }
    return enrolment;
  }

  /** Creation options for navigator.credentials.create(), once the terminal confirmed this session's enrolment. */
  async registrationOptions(principal: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const rp = this.relyingParty();
    const enrolment = this.confirmedEnrolment(principal);
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: 'assent',
      rpID: rp.rpId,
      userName: `assent@${rp.rpId}`,
      userDisplayName: 'assent approvals',
      // One user per installation: the same authenticator cannot be enrolled twice (excludeCredentials).
      userID: new Uint8Array(sha256(`assent passkey user ${this.options.store.instanceId()}`).subarray(0, 16)),
      challenge: new Uint8Array(this.options.random(32)),
      timeout: WEBAUTHN_TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: this.options.store.listPasskeys().map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    enrolment.challenge = options.challenge;
    return options;
  }

  /** Verifies the page's registration (user verification required) and enrols the passkey; the enrolment is used up either way. */
  async register(principal: string, response: RegistrationResponseJSON): Promise<PasskeyInfo> {
    const rp = this.relyingParty();
    const enrolment = this.confirmedEnrolment(principal);
    const challenge = enrolment.challenge;
    this.enrolments.delete(principal);
    if (challenge === undefined) throw new AssentError('forbidden', 'Ask for the registration options first; this enrolment is now closed, press "Add a passkey" again.');
    const { verifyRegistrationResponse } = await webauthn();
    let verified: Awaited<ReturnType<WebAuthnLibrary['verifyRegistrationResponse']>>;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        requireUserVerification: true,
      });
    } catch (error) {
      throw new AssentError('invalid_params', `The passkey registration did not verify (${errorText(error)}); nothing was enrolled. Press "Add a passkey" to start again.`);
    }
    if (!verified.verified) throw new AssentError('invalid_params', 'The passkey registration did not verify; nothing was enrolled. Press "Add a passkey" to start again.');
    const { credential } = verified.registrationInfo;
    const record: PasskeyRecord = {
      id: `p${newApprovalId(this.options.random)}`,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      enrolledBy: principal,
      rpId: rp.rpId,
      createdAt: this.options.clock.now(),
    };
    this.options.store.insertPasskey(record);
    this.options.logger.info('passkey enrolled', { passkeyId: record.id, credentialId: record.credentialId, enrolledBy: principal });
    this.options.notifier?.notify({
      title: 'assent: a passkey was added',
      body: `Passkey ${record.id} can now approve actions that need one. If that was not you, run: assent web passkeys remove ${record.id}`,
    });
    return describe(record);
  }

  list(): PasskeyInfo[] {
    return this.options.store.listPasskeys().map(describe);
  }

  /** Removes a passkey; its next assertion fails, also one already in flight (checked in the deciding transaction). */
  remove(id: string): PasskeyInfo {
    const record = this.options.store.listPasskeys().find((passkey) => passkey.id === id);
    if (record === undefined || !this.options.store.removePasskey(id)) {
      throw new AssentError('not_found', `no passkey ${id}; list them with \`assent web passkeys\``, { details: { id } });
    }
    this.options.logger.info('passkey removed', { passkeyId: id, credentialId: record.credentialId });
    return describe(record);
  }

  /**
   * Request options for navigator.credentials.get() for one pending approval:
   * a fresh nonce, and a challenge binding it to the approval id and the exact
   * action digest. The nonce works once, for this page session, until the
   * approval's deadline or the challenge lifetime, whichever is first.
   */
  async assertionOptions(principal: string, approvalId: string): Promise<AssertionRequest> {
    const rp = this.relyingParty();
    const approval = await this.options.approvals.get(approvalId);
    if (approval.state !== 'pending') {
      throw new AssentError('conflict', `approval ${approvalId} is already ${approval.state}${approval.channel ? ` (via ${approval.channel})` : ''}`, { details: { state: approval.state } });
    }
    const passkeys = this.options.store.listPasskeys();
    if (passkeys.length === 0) {
      throw refused('no_passkey', 'No passkey is enrolled. Press "Add a passkey" on a paired page and confirm it with `assent web passkeys add` in your terminal first.', approvalId);
    }
    const now = this.options.clock.now();
    this.prune(now);
    const nonce = newNonce(this.options.random);
    const challenge = approvalChallenge({ approvalId, actionDigest: approval.argsSha256, nonce });
    const expiresAt = Math.min(approval.expiresAt, now + this.challengeTtlMs);
    this.challenges.set(nonce, { approvalId, actionDigest: approval.argsSha256, principal, challenge, expiresAt });
    const { generateAuthenticationOptions } = await webauthn();
    const options = await generateAuthenticationOptions({
      rpID: rp.rpId,
      challenge: new Uint8Array(Buffer.from(challenge, 'base64url')),
      allowCredentials: passkeys.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      userVerification: 'required',
      timeout: Math.max(1000, Math.min(WEBAUTHN_TIMEOUT_MS, expiresAt - now)),
    });
    return { nonce, expiresAt, options };
  }

  private prune(now: number): void {
    for (const [nonce, issued] of this.challenges) if (issued.expiresAt <= now) this.challenges.delete(nonce);
    while (this.challenges.size >= MAX_CHALLENGES) {
      const oldest = this.challenges.keys().next().value;
      if (oldest === undefined) break;
      this.challenges.delete(oldest);
    }
  }

  /**
   * Approves an approval with an assertion (R-REM-6). The nonce is spent the
   * moment it is presented, whatever follows. The assertion must come from an
   * enrolled passkey, with user verification, over this approval's challenge;
   * then the approval is decided with channel `web` and the credential, and the
   * deciding transaction re-checks the credential, its counter and the digest.
   */
  async approve(principal: string, params: { approvalId: string; nonce: string; response: AuthenticationResponseJSON }): Promise<ApprovalView> {
    const { approvalId, nonce, response } = params;
    const rp = this.relyingParty();
    const now = this.options.clock.now();
    const issued = isNonceShaped(nonce) ? this.challenges.get(nonce) : undefined;
    this.challenges.delete(nonce);
    if (issued === undefined || issued.expiresAt <= now) {
      throw refused('challenge_unknown', 'The passkey challenge is unknown, used or expired (an assertion is good for one try). Press Approve again for a fresh one.', approvalId);
    }
    if (issued.approvalId !== approvalId) {
      throw refused('other_approval', `The passkey assertion was made for approval ${issued.approvalId}, not this one; an assertion approves only the action it was made for.`, approvalId);
    }
    if (issued.principal !== principal) {
      throw refused('other_session', 'The passkey challenge was issued to another page session; ask for a fresh one from this page.', approvalId);
    }
    const approval = await this.options.approvals.get(approvalId);
    if (approval.argsSha256 !== issued.actionDigest) {
      throw refused('action_changed', 'The action is not the one the passkey challenge was made for.', approvalId);
    }
    const credentialId = typeof response.id === 'string' ? response.id : '';
    const passkey = credentialId === '' ? undefined : this.options.store.findPasskeyByCredentialId(credentialId);
    if (passkey === undefined) {
      throw refused('credential_unknown', 'The assertion comes from a passkey that is not enrolled (never added, or removed). Use an enrolled passkey; `assent web passkeys` lists them.', approvalId);
    }
    const flags = assertionFlags(response);
    if (flags !== undefined && !flags.uv) {
      throw refused('user_verification', 'The authenticator did not verify you (no PIN, fingerprint or face check); approving needs user verification.', approvalId);
    }
    const { verifyAuthenticationResponse } = await webauthn();
    let verification: Awaited<ReturnType<WebAuthnLibrary['verifyAuthenticationResponse']>>;
    try {
      verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: issued.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpId,
        credential: { id: passkey.credentialId, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')), counter: passkey.counter, transports: passkey.transports },
        requireUserVerification: true,
      });
    } catch (error) {
      throw refused('assertion_invalid', `The passkey assertion did not verify (${errorText(error)}).`, approvalId);
    }
    if (!verification.verified || verification.authenticationInfo.credentialID !== passkey.credentialId) {
      throw refused('signature', 'The passkey assertion\'s signature does not verify with the enrolled public key.', approvalId);
    }
    const newCounter = verification.authenticationInfo.newCounter;
    const { store, clock } = this.options;
    const counterRefusal = (): AssentError => {
      if (store.findPasskeyByCredentialId(passkey.credentialId) === undefined) {
        return refused('credential_unknown', 'The passkey was removed while its assertion was being checked.', approvalId);
      }
      return refused('counter', 'The passkey\'s signature counter did not move on: the assertion may be a copy. Approve again with the authenticator.', approvalId);
    };
    const decision: DecideParams = {
      id: approvalId,
      behavior: 'allow',
      scope: 'call',
      channel: 'web',
      // R-TEAM-3: the page session decides (`web:<device>`), not this host's own principal.
      principal,
      presence: {
        presence: 'passkey',
        credentialId: passkey.credentialId,
        // Inside the deciding transaction: check now, write the counter only if the decision commits.
        confirm: (record) => {
          if (record.argsSha256 !== issued.actionDigest) throw refused('action_changed', 'The action is not the one the passkey challenge was made for.', approvalId);
          const current = store.findPasskeyByCredentialId(passkey.credentialId);
          if (current === undefined || !counterMovesOn(current.counter, newCounter)) throw counterRefusal();
          return () => {
            if (!store.advancePasskeyCounter(passkey.credentialId, newCounter, clock.now())) throw counterRefusal();
          };
        },
      },
    };
    const decided = await this.options.approvals.decide(decision);
    this.options.logger.info('approval confirmed with a passkey', { approvalId, passkeyId: passkey.id, credentialId: passkey.credentialId });
    return decided;
  }

  status(): Record<string, unknown> {
    const rp = this.options.relyingParty();
    return {
      enrolled: this.options.store.listPasskeys().length,
      ...(typeof rp === 'string' ? { available: false, why: rp } : { available: true, rpId: rp.rpId }),
    };
  }
}

/** The counter rule the journal's compare-and-set applies: it must grow, except for authenticators that keep none (always 0). */
function counterMovesOn(stored: number, presented: number): boolean {
  return stored < presented || (stored === 0 && presented === 0);
}

function describe(record: PasskeyRecord): PasskeyInfo {
  const info: PasskeyInfo = { id: record.id, credentialId: record.credentialId, enrolledBy: record.enrolledBy, rpId: record.rpId, createdAt: record.createdAt };
  if (record.lastUsedAt !== undefined) info.lastUsedAt = record.lastUsedAt;
  return info;
}
