// R-HOOK-2, R-SH-0: agent names, tool kinds and MCP tool names, per agent.
import { describe, expect, it } from 'vitest';
import { agentActionKind, agentToolId, gatewayToolCandidate, mcpToolOf, parseAgentName } from '../../../src/core/agent/agentAction.js';

describe('agent actions (R-HOOK-2)', () => {
  it('R-SH-0 hook names are claude-code, codex and gemini; claude is accepted for claude-code; tool ids use the short alias', () => {
    expect(parseAgentName('claude-code')).toBe('claude-code');
    expect(parseAgentName('claude')).toBe('claude-code');
    expect(parseAgentName('codex')).toBe('codex');
    expect(parseAgentName('gemini')).toBe('gemini');
    expect(parseAgentName('Claude')).toBeUndefined();
    expect(parseAgentName('cursor')).toBeUndefined();
    expect(agentToolId('claude-code', 'Bash')).toBe('claude/Bash');
    expect(agentToolId('codex', 'Bash')).toBe('codex/Bash');
    expect(agentToolId('gemini', 'run_shell_command')).toBe('gemini/run_shell_command');
  });

  it('R-HOOK-2 each agent tool maps to its kind: shell, read, write, fetch, mcp, other', () => {
    expect(agentActionKind('claude-code', 'Bash')).toBe('shell');
    expect(agentActionKind('codex', 'Bash')).toBe('shell');
    expect(agentActionKind('gemini', 'run_shell_command')).toBe('shell');
    for (const tool of ['Read', 'Grep', 'Glob']) expect(agentActionKind('claude-code', tool)).toBe('read');
    for (const tool of ['read_file', 'read_many_files', 'glob', 'search_file_content']) expect(agentActionKind('gemini', tool)).toBe('read');
    for (const tool of ['Edit', 'Write', 'MultiEdit', 'NotebookEdit']) expect(agentActionKind('claude-code', tool)).toBe('write');
    expect(agentActionKind('codex', 'apply_patch')).toBe('write');
    for (const tool of ['write_file', 'replace']) expect(agentActionKind('gemini', tool)).toBe('write');
    expect(agentActionKind('claude-code', 'WebFetch')).toBe('fetch');
    expect(agentActionKind('gemini', 'web_fetch')).toBe('fetch');
    expect(agentActionKind('claude-code', 'mcp__lab__echo')).toBe('mcp');
    expect(agentActionKind('codex', 'mcp__lab__echo')).toBe('mcp');
    expect(agentActionKind('gemini', 'mcp_lab_echo')).toBe('mcp');
    expect(agentActionKind('claude-code', 'ToolSearch')).toBe('other');
    // A name of another agent's tool is not this agent's: Codex has no `Read`.
    expect(agentActionKind('codex', 'Read')).toBe('other');
    expect(agentActionKind('claude-code', 'toString')).toBe('other');
    expect(agentActionKind('gemini', 'mcp_')).toBe('other');
  });

  it('R-HOOK-5 MCP tool names split into server and tool; Gemini uses the server it reported when the name fits it', () => {
    expect(mcpToolOf('claude-code', 'mcp__assent__write_file')).toEqual({ server: 'assent', tool: 'write_file' });
    expect(mcpToolOf('codex', 'mcp__lab__echo__twice')).toEqual({ server: 'lab', tool: 'echo__twice' });
    expect(mcpToolOf('gemini', 'mcp_assent_write_file')).toEqual({ server: 'assent', tool: 'write_file' });
    expect(mcpToolOf('gemini', 'mcp_my_lab_echo', 'my_lab')).toEqual({ server: 'my_lab', tool: 'echo' });
    // A reported server `assent_x` is not the gateway `assent`, though its tools start with `mcp_assent_`.
    expect(mcpToolOf('gemini', 'mcp_assent_x_echo', 'assent_x')).toEqual({ server: 'assent_x', tool: 'echo' });
    // A report that does not fit the name is ignored.
    expect(mcpToolOf('gemini', 'mcp_lab_echo', 'assent')).toEqual({ server: 'lab', tool: 'echo' });
    expect(mcpToolOf('claude-code', 'Bash')).toBeUndefined();
    expect(mcpToolOf('claude-code', 'mcp__lab')).toBeUndefined();
    expect(mcpToolOf('gemini', 'mcp_lab_')).toBeUndefined();
  });

  it('R-HOOK-13 the gateway candidate is everything after the `assent` entry, never a split at the first separator; a reported other server is never the gateway', () => {
    expect(gatewayToolCandidate('codex', 'mcp__assent__fs__write_file')).toBe('fs__write_file');
    expect(gatewayToolCandidate('claude-code', 'mcp__assent__write_file')).toBe('write_file');
    expect(gatewayToolCandidate('claude-code', 'mcp__assent__write_file', 'assent')).toBe('write_file');
    expect(gatewayToolCandidate('gemini', 'mcp_assent_x_echo')).toBe('x_echo');
    expect(gatewayToolCandidate('gemini', 'mcp_assent_x_echo', 'assent_x')).toBeUndefined();
    expect(gatewayToolCandidate('codex', 'mcp__assent__write_file', 'lab')).toBeUndefined();
    expect(gatewayToolCandidate('codex', 'mcp__assentx__write_file')).toBeUndefined();
    expect(gatewayToolCandidate('codex', 'mcp__assent__')).toBeUndefined();
    expect(gatewayToolCandidate('codex', 'mcp__lab__assent__write_file')).toBeUndefined();
    expect(gatewayToolCandidate('codex', 'Bash')).toBeUndefined();
  });
});
