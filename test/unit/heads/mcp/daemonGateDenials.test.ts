// Which reason the daemon gate gives the agent when the daemon refuses a waiting
// call (R-MCP-3): a lifecycle ending (shutdown, session_ended, a lost daemon) is
// never worded as the operator's refusal (hardening 1).
import { describe, expect, it } from 'vitest';
import { AssentError } from '../../../../src/core/base/errors.js';
import type { DaemonClient } from '../../../../src/heads/daemon/rpcClient.js';
import { connectDaemonGate } from '../../../../src/heads/mcp/daemonGate.js';
import type { GateCall } from '../../../../src/heads/mcp/gate.js';
import { createLogger } from '../../../../src/service/logger.js';

/** A daemon connection whose calls.authorize fails with `error`; everything else answers as a daemon would. */
function fakeClient(error: AssentError): DaemonClient {
  const client = {
    call: (method: string) => {
      if (method === 'config.get') {
        return Promise.resolve({
          path: '/home/me/.assent/config.json',
          revision: 'v1',
          config: { servers: {}, policy: { default: 'prompt', destructive: 'prompt', tools: {}, consentTimeoutSeconds: 90 }, channels: { elicitation: false, tty: false } },
        });
      }
      if (method === 'policy.get') {
        return Promise.resolve({ path: '/home/me/.assent/config.json', revision: 'v1', rules: [], policy: { default: 'prompt', destructive: 'prompt', tools: {}, consentTimeoutSeconds: 90 } });
      }
      if (method === 'calls.authorize') return Promise.reject(error);
      return Promise.resolve({});
    },
    onNotification: () => () => undefined,
    onClose: () => () => undefined,
    close: () => undefined,
  };
  return client as unknown as DaemonClient;
}

function call(): GateCall {
  return { sessionId: 's1', server: 'fs', tool: 'write_file', args: {}, caller: {}, signal: new AbortController().signal };
}

const logger = createLogger({ write: () => undefined });

describe('daemon gate denial reasons (hardening 1)', () => {
  it.each(['shutdown', 'session_ended'] as const)('R-MCP-3 R-D-6 a %s denial keeps its own reason, not consent_denied', async (detail) => {
    const error = new AssentError('policy_denied', 'ended', { details: { reason: 'consent_denied', detail, approvalId: 'abcde' } });
    const gate = await connectDaemonGate({ client: fakeClient(error), sessionId: 's1', logger });
    const decision = await gate.authorize(call());
    expect(decision).toMatchObject({ allowed: false, reason: detail, approvalId: 'abcde' });
    expect(decision.allowed ? '' : decision.message).toContain('nobody declined');
    expect(decision.allowed ? '' : decision.message).not.toContain('declined this exact call');
  });

  it('R-MCP-3 an operator denial stays consent_denied', async () => {
    const error = new AssentError('policy_denied', 'denied', { details: { reason: 'consent_denied', detail: 'consent_denied', approvalId: 'abcde' } });
    const gate = await connectDaemonGate({ client: fakeClient(error), sessionId: 's1', logger });
    expect(await gate.authorize(call())).toMatchObject({ allowed: false, reason: 'consent_denied' });
  });

  it('R-MCP-3 a daemon that is gone (unavailable, no reconnect) is reported as unavailable', async () => {
    const gate = await connectDaemonGate({ client: fakeClient(new AssentError('unavailable', 'The daemon connection closed.')), sessionId: 's1', logger });
    const decision = await gate.authorize(call());
    expect(decision).toMatchObject({ allowed: false, reason: 'unavailable' });
    expect(decision.allowed ? '' : decision.message).toContain('nobody declined');
  });
});
