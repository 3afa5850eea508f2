// R-J-3 ordering of `action run --via-daemon` with an injected daemon and spawn:
// the proof is consumed (intent durable) before the spawn, the outcome recorded
// after; a refusal or a replay never spawns.
import { spawn as nodeSpawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssentError } from '../../../src/core/base/errors.js';
import { runActionViaDaemon, type DaemonCaller } from '../../../src/exec/daemonActionFlow.js';
import type { SpawnFn } from '../../../src/exec/runChild.js';

const PROOF = `asp1_${'C'.repeat(43)}`;
const noSignals = { on: () => undefined, off: () => undefined } as never;

describe('runActionViaDaemon', () => {
  let dir: string;
  let paths: { policy: string; request: string };
  let log: string[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'assent-via-'));
    paths = { policy: join(dir, 'policy.json'), request: join(dir, 'request.json') };
    writeFileSync(paths.policy, JSON.stringify({ schemaVersion: 2, defaultDecision: 'ask', rules: [] }));
    writeFileSync(paths.request, JSON.stringify({ schemaVersion: 1, action: { executable: '/bin/true', cwd: dir, args: [], env: {} } }));
    log = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const spawn: SpawnFn = (command, args, options) => {
    log.push('spawn');
    return nodeSpawn(command, args, options);
  };

  function daemon(consume: () => unknown): () => Promise<DaemonCaller> {
    return async () => ({
      call: async <T>(method: string, params?: unknown): Promise<T> => {
        log.push(method);
        if (method === 'actions.request') return { approvalId: 'abcde', proof: PROOF } as T;
        if (method === 'proofs.consume') {
          expect((params as { proof: string }).proof).toBe(PROOF);
          return consume() as T;
        }
        if (method === 'effects.finish') {
          log.push(`ok=${String((params as { ok: boolean }).ok)}`);
          return {} as T;
        }
        throw new AssentError('method_not_found', method);
      },
      close: () => log.push('close'),
    });
  }

  it('R-J-3 files the approval, consumes the proof before the spawn, records the outcome after', async () => {
    const report = await runActionViaDaemon(paths, {
      connect: daemon(() => ({ outcome: 'consumed', approvalId: 'abcde', effect: { id: 'e1', state: 'intent' } })),
      signals: noSignals,
      spawn,
    });
    expect(report).toMatchObject({ decision: 'allow', authorization: 'operator-confirmed', policyDecision: 'ask', execution: { state: 'exited', exitCode: 0 } });
    expect(log).toEqual(['actions.request', 'proofs.consume', 'spawn', 'effects.finish', 'ok=true', 'close']);
  });

  it('R-J-4 a replayed proof spawns nothing', async () => {
    const report = await runActionViaDaemon(paths, {
      connect: daemon(() => ({ outcome: 'replay', approvalId: 'abcde', effect: { id: 'e1', state: 'completed' } })),
      signals: noSignals,
      spawn,
      proof: PROOF,
    });
    expect(report.execution.state).toBe('not-started');
    expect(log).not.toContain('spawn');
    expect(log).not.toContain('actions.request');
  });

  it('R-J-4 a refused proof spawns nothing and reports the revision change as configuration-changed', async () => {
    const report = await runActionViaDaemon(paths, {
      connect: daemon(() => {
        throw new AssentError('proof_invalid', 'refused (revision-changed)', { details: { reason: 'revision-changed' } });
      }),
      signals: noSignals,
      spawn,
      proof: PROOF,
    });
    expect(report).toMatchObject({ decision: 'deny', reason: 'configuration-changed', execution: { state: 'not-started' } });
    expect(log).not.toContain('spawn');
  });
});
