// The soak's operator: watches the queue (approvals.list over the daemon socket)
// and decides each pending approval the way its call's arguments ask, from the
// CLI and from the web API in turn: `assent approve ID` in a real terminal with
// the typed code, or `assent deny ID`; or POST /api/v1/approvals.decide with a
// bearer token. A decision that fails (the call was withdrawn, the daemon was
// restarting) is recorded as such, and tried again while the approval is still
// pending. At most CONCURRENT decisions at once.
/* global fetch, AbortSignal */
import { join } from 'node:path';
import { runCli, runInTerminal, sleep } from './home.mjs';

const POLL_MS = 250;
const CONCURRENT = 2;
const MAX_ATTEMPTS = 5;

/** allow or deny, as the call's arguments ask; unexpected for a call the soak never asks about. */
export function wantedBehavior(approval) {
  if (approval.server === 'soak' && approval.tool === 'deploy') return approval.args?.want === 'yes' ? 'allow' : 'deny';
  const command = String(approval.args?.command ?? '');
  if (command.startsWith('echo soak-ask-yes-')) return 'allow';
  if (command.startsWith('echo soak-ask-no-')) return 'deny';
  return 'unexpected';
}

/**
 * Decides until `signal` aborts and nothing is pending or being decided. `daemonClient()` gives a
 * connected client (or throws while no daemon runs); `webUrl()` the page's URL. Returns the decisions.
 */
export function runApprover({ env, dir, token, daemonClient, webUrl, signal }) {
  const decisions = [];
  const handled = new Set();
  const attempts = new Map();
  let busy = 0;
  let turn = 0;
  const decide = async (approval) => {
    const behavior = wantedBehavior(approval);
    const channel = turn++ % 2 === 0 ? 'cli' : 'web';
    const record = { id: approval.id, server: approval.server, tool: approval.tool, argsSha256: approval.argsSha256, behavior: behavior === 'unexpected' ? 'deny' : behavior, unexpected: behavior === 'unexpected', channel, at: performance.now() };
    decisions.push(record);
    try {
      if (channel === 'cli') {
        const run =
          record.behavior === 'allow'
            ? await runInTerminal(['approve', approval.id], { env, dir, typeCode: true, timeoutMs: 60_000 })
            : await runCli(['deny', approval.id, '--reason', 'soak says no'], env, 60_000);
        record.ok = run.code === 0;
        if (!record.ok) record.error = `exit ${String(run.code)}: ${(run.stderr ?? run.screen ?? '').replace(/\s+/g, ' ').slice(-300)}`;
      } else {
        const response = await fetch(new URL('api/v1/approvals.decide', await webUrl()), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(record.behavior === 'allow' ? { id: approval.id, behavior: 'allow' } : { id: approval.id, behavior: 'deny', reason: 'soak says no' }),
          signal: AbortSignal.timeout(30_000),
        });
        record.ok = response.status === 200;
        if (!record.ok) record.error = `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`;
      }
    } catch (error) {
      record.ok = false;
      record.error = error instanceof Error ? error.message : String(error);
    }
    record.ms = Math.round(performance.now() - record.at);
    // A decision that failed (the daemon restarting under it) is tried again while the approval is pending, at most MAX_ATTEMPTS times.
    attempts.set(approval.id, (attempts.get(approval.id) ?? 0) + 1);
    if (!record.ok && (attempts.get(approval.id) ?? 0) < MAX_ATTEMPTS) setTimeout(() => handled.delete(approval.id), 1000);
  };
  const done = (async () => {
    for (;;) {
      let pending = [];
      try {
        const client = await daemonClient();
        pending = (await client.call('approvals.list', {})).filter((approval) => approval.state === 'pending');
      } catch {
        // No daemon right now (a restart): try again.
      }
      const fresh = pending.filter((approval) => !handled.has(approval.id));
      if (signal.aborted && fresh.length === 0 && busy === 0) return decisions;
      for (const approval of fresh) {
        if (busy >= CONCURRENT) break;
        handled.add(approval.id);
        busy += 1;
        void decide(approval).finally(() => (busy -= 1));
      }
      await sleep(POLL_MS);
    }
  })();
  return { decisions, done };
}

/** Mints the soak's bearer token with `assent token create` (which needs a terminal); returns its text. */
export async function mintToken(env, dir) {
  const { readFileSync } = await import('node:fs');
  const file = join(dir, 'soak.token');
  const run = await runInTerminal(['token', 'create', '--name', 'soak', '--ttl', '1d', '--out', file], { env, dir, timeoutMs: 30_000 });
  if (run.code !== 0) throw new Error(`assent token create failed (exit ${run.code}): ${run.screen}`);
  return readFileSync(file, 'utf8').trim();
}
