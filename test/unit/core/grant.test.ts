import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../src/core/base/clock.js';
import { GRANT_TTL_MS, GrantOwner } from '../../../src/core/approval/grant.js';
import type { Grant } from '../../../src/core/approval/grant.js';

function setup() {
  const clock = new FakeClock();
  const owner = new GrantOwner(clock);
  const binding = owner.bind();
  const grant = owner.issue(binding);
  let launches = 0;
  const launch = () => owner.launchWith(grant, binding, () => (launches += 1));
  return { clock, owner, binding, grant, launch, launches: () => launches };
}

describe('R-TTY-6 grants', () => {
  it('R-TTY-6 is frozen and opaque', () => {
    const { grant } = setup();
    expect(Object.isFrozen(grant)).toBe(true);
    expect(Object.keys(grant)).toEqual(['kind']);
  });

  it('R-TTY-6 authorizes within 5 s and not at or after 5 s on the monotonic clock', () => {
    const a = setup();
    a.clock.advance(GRANT_TTL_MS - 1);
    expect(a.launch()).toEqual({ launched: true, value: 1 });
    const b = setup();
    b.clock.advance(GRANT_TTL_MS);
    expect(b.launch()).toEqual({ launched: false, why: 'expired' });
    expect(b.launches()).toBe(0);
  });

  it('R-TTY-6 the wall clock set back 1 h does not revive an expired grant; set forward 1 h, it does not end a live one', () => {
    const expired = setup();
    expired.clock.advance(GRANT_TTL_MS);
    expired.clock.jumpWall(-3_600_000);
    expect(expired.launch()).toEqual({ launched: false, why: 'expired' });
    const live = setup();
    live.clock.jumpWall(3_600_000);
    expect(live.launch()).toEqual({ launched: true, value: 1 });
  });

  it('R-TTY-6 authorizes exactly one launch attempt', () => {
    const s = setup();
    expect(s.launch().launched).toBe(true);
    expect(s.launch()).toEqual({ launched: false, why: 'consumed' });
    expect(s.launches()).toBe(1);
  });

  it('R-TTY-8 a failed spawn still consumes the attempt', () => {
    const s = setup();
    expect(() =>
      s.owner.launchWith(s.grant, s.binding, () => {
        throw new Error('spawn ENOENT');
      }),
    ).toThrow('spawn ENOENT');
    expect(s.launch()).toEqual({ launched: false, why: 'consumed' });
    expect(s.launches()).toBe(0);
  });

  it('R-TTY-8 an earlier refusal does not consume it', () => {
    const s = setup();
    const other = s.owner.bind();
    expect(s.owner.launchWith(s.grant, other, () => 0).launched).toBe(false);
    expect(s.launch().launched).toBe(true);
  });

  it('R-TTY-6 a structured copy or a spread copy authorizes nothing', () => {
    const s = setup();
    const cloned = structuredClone(s.grant) as Grant;
    const spread = { ...s.grant } as Grant;
    expect(s.owner.launchWith(cloned, s.binding, () => 1)).toEqual({ launched: false, why: 'unknown-grant' });
    expect(s.owner.launchWith(spread, s.binding, () => 1)).toEqual({ launched: false, why: 'unknown-grant' });
    const copiedBinding = { ...s.binding };
    expect(s.owner.launchWith(s.grant, copiedBinding, () => 1)).toEqual({ launched: false, why: 'other-binding' });
  });

  it('R-TTY-6 a grant bound to another binding authorizes nothing', () => {
    const s = setup();
    const other = s.owner.bind();
    expect(s.owner.launchWith(s.grant, other, () => 1)).toEqual({ launched: false, why: 'other-binding' });
  });

  it('R-TTY-6 another owner does not honour the grant', () => {
    const s = setup();
    const stranger = new GrantOwner(s.clock);
    expect(stranger.launchWith(s.grant, s.binding, () => 1)).toEqual({ launched: false, why: 'unknown-grant' });
  });

  it('R-TTY-7 a revoked binding revokes its grants for good', () => {
    const s = setup();
    s.owner.revokeBinding(s.binding);
    expect(s.owner.isLive(s.binding)).toBe(false);
    expect(s.launch()).toEqual({ launched: false, why: 'binding-revoked' });
    // A new grant on the same, revoked binding does not revive it.
    const again = s.owner.issue(s.binding);
    expect(s.owner.launchWith(again, s.binding, () => 1)).toEqual({ launched: false, why: 'binding-revoked' });
  });

  it('R-TTY-6 a revoked grant and every grant after close authorize nothing', () => {
    const s = setup();
    s.owner.revoke(s.grant);
    expect(s.launch()).toEqual({ launched: false, why: 'revoked' });
    const t = setup();
    t.owner.close();
    expect(t.launch().launched).toBe(false);
  });
});
