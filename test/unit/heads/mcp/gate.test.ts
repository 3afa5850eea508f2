// The local policy gate (R-MCP-5) and the denial texts every gate shares (R-MCP-3).
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../../src/core/config/config.js';
import { compilePolicy } from '../../../../src/core/policy/toolPolicy.js';
import { describeDenial, localPolicyGate, type GateCall } from '../../../../src/heads/mcp/gate.js';

function call(overrides: Partial<GateCall> = {}): GateCall {
  return { sessionId: 's1', server: 'fs', tool: 'write_file', args: { path: '/srv/x' }, caller: {}, signal: new AbortController().signal, ...overrides };
}

const gate = localPolicyGate(
  compilePolicy({ ...DEFAULT_CONFIG.policy, default: 'allow', destructive: 'prompt', tools: { 'fs/move_file': 'deny' } }, []),
  { configPath: '/home/me/.assent/config.json', noChannelHint: 'no assent daemon at /home/me/.assent/daemon.sock', now: () => 0 },
);

describe('localPolicyGate', () => {
  it('R-POL-3 allows a read-only tool under default allow', async () => {
    expect(await gate.authorize(call({ tool: 'read_file', annotations: { readOnlyHint: true } }))).toEqual({ allowed: true });
  });

  it('R-MCP-3 refuses a deny with reason policy, naming the config key and file', async () => {
    const decision = await gate.authorize(call({ tool: 'move_file', annotations: { readOnlyHint: true } }));
    expect(decision).toMatchObject({ allowed: false, reason: 'policy' });
    expect(decision.allowed ? '' : decision.message).toContain('policy.tools.fs/move_file in /home/me/.assent/config.json');
  });

  it('R-MCP-5 refuses prompt with no_consent_channel (fail closed), saying how to get a channel', async () => {
    const decision = await gate.authorize(call({ annotations: { destructiveHint: true } }));
    expect(decision).toMatchObject({ allowed: false, reason: 'no_consent_channel' });
    const message = decision.allowed ? '' : decision.message;
    expect(message).toContain('policy.destructive');
    expect(message).toContain('no assent daemon at /home/me/.assent/daemon.sock');
    expect(message).toContain('assent daemon run');
  });

  it('R-POL-3 treats a tool without annotations as destructive', async () => {
    expect(await gate.authorize(call())).toMatchObject({ allowed: false, reason: 'no_consent_channel' });
  });
});

describe('describeDenial', () => {
  it.each([
    ['policy', 'config reload'],
    ['consent_denied', 'declined'],
    ['consent_timeout', 'assent approve ID'],
    ['no_consent_channel', 'assent pending'],
    ['cancelled', 'never received'],
  ] as const)('R-MCP-3 %s names the reason and what to do', (reason, hint) => {
    const text = describeDenial(reason, { server: 'fs', tool: 'write_file', approvalId: 'abcde' });
    expect(text).toContain(reason);
    expect(text).toContain('fs/write_file');
    expect(text).toContain(hint);
  });
});

describe('describeDenial for lifecycle endings (hardening 1)', () => {
  it.each(['shutdown', 'session_ended', 'unavailable'] as const)('R-MCP-3 %s says nobody declined the call and that retrying is fine', (reason) => {
    const text = describeDenial(reason, { server: 'fs', tool: 'write_file', approvalId: 'abcde' });
    expect(text).toContain(reason);
    expect(text).toContain('fs/write_file');
    expect(text).toContain('nobody declined');
    expect(text).toMatch(/retry/i);
    expect(text).not.toMatch(/operator declined|Do not retry/);
  });
});
