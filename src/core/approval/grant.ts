// In-process grants of the one-attempt terminal confirmation (R-TTY-6, R-TTY-8).
// The owner keeps all state; grants and bindings handed out are frozen, opaque
// tokens whose only power is their object identity inside this owner.
import type { Clock } from '../base/clock.js';

/** How long an affirmative answer stays usable, on the monotonic clock. */
export const GRANT_TTL_MS = 5_000;

/** An opaque, frozen handle to a captured revision of the action files. */
export interface RevisionBinding {
  readonly kind: 'revision-binding';
}

/** An opaque, frozen handle to one affirmative answer. */
export interface Grant {
  readonly kind: 'grant';
}

type GrantState = 'issued' | 'consumed' | 'revoked';

interface GrantRecord {
  binding: RevisionBinding;
  issuedAt: number;
  state: GrantState;
}

export type LaunchOutcome<T> = { launched: true; value: T } | { launched: false; why: GrantRefusal };

export type GrantRefusal = 'unknown-grant' | 'other-binding' | 'binding-revoked' | 'expired' | 'consumed' | 'revoked';

/**
 * The confirmation owner's ledger. Nothing here is written to disk or sent
 * anywhere: a grant authorizes only a launch by this owner, in this process.
 */
export class GrantOwner {
  private readonly grants = new WeakMap<Grant, GrantRecord>();
  private readonly issued = new Set<Grant>();
  private readonly bindings = new WeakMap<RevisionBinding, { live: boolean }>();
  private readonly liveBindings = new Set<RevisionBinding>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number = GRANT_TTL_MS,
  ) {}

  /** A binding for one captured revision; it stays live until revoked, never revived. */
  bind(): RevisionBinding {
    const binding: RevisionBinding = Object.freeze({ kind: 'revision-binding' as const });
    this.bindings.set(binding, { live: true });
    this.liveBindings.add(binding);
    return binding;
  }

  isLive(binding: RevisionBinding): boolean {
    return this.bindings.get(binding)?.live === true;
  }

  /** Revoking a binding is final: a later identical revision needs a new binding and a new answer. */
  revokeBinding(binding: RevisionBinding): void {
    const entry = this.bindings.get(binding);
    if (entry) entry.live = false;
    this.liveBindings.delete(binding);
  }

  /** Only the affirmative answer calls this; the grant is bound to exactly `binding`. */
  issue(binding: RevisionBinding): Grant {
    const grant: Grant = Object.freeze({ kind: 'grant' as const });
    this.grants.set(grant, { binding, issuedAt: this.clock.monotonic(), state: 'issued' });
    this.issued.add(grant);
    return grant;
  }

  /** Why `grant` would not authorize a launch under `binding` now, or undefined when it would. */
  check(grant: Grant, binding: RevisionBinding): GrantRefusal | undefined {
    const record = this.grants.get(grant);
    if (!record) return 'unknown-grant';
    if (record.state === 'consumed') return 'consumed';
    if (record.state === 'revoked') return 'revoked';
    if (record.binding !== binding) return 'other-binding';
    if (!this.isLive(binding)) return 'binding-revoked';
    if (this.clock.monotonic() - record.issuedAt >= this.ttlMs) return 'expired';
    return undefined;
  }

  /**
   * Consumes the grant and then calls `launch` — the only way to spend it. The
   * attempt is spent before launch runs, so a launch that throws (a failed
   * spawn) has still used it; a refused check spends nothing.
   */
  launchWith<T>(grant: Grant, binding: RevisionBinding, launch: () => T): LaunchOutcome<T> {
    const why = this.check(grant, binding);
    if (why !== undefined) return { launched: false, why };
    const record = this.grants.get(grant) as GrantRecord;
    record.state = 'consumed';
    this.issued.delete(grant);
    return { launched: true, value: launch() };
  }

  revoke(grant: Grant): void {
    const record = this.grants.get(grant);
    if (record && record.state === 'issued') record.state = 'revoked';
    this.issued.delete(grant);
  }

  /** Called when the owner finishes: every grant and binding it handed out becomes useless. */
  close(): void {
    for (const grant of this.issued) this.revoke(grant);
    for (const binding of [...this.liveBindings]) this.revokeBinding(binding);
  }
}
