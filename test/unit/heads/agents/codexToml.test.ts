// assent's MCP server in Codex's config.toml (R-HOOK-7 --mcp): one marked table,
// appended, replaced in place, removed, and the rest of the file never rewritten.
import { describe, expect, it } from 'vitest';
import { codexHookTrust, readCodexHookStates } from '../../../../src/heads/agents/codexHookTrust.js';
import { codexMcpBlock, withCodexMcpBlock, withoutCodexMcpBlock } from '../../../../src/heads/agents/codexToml.js';

const server = { command: '/usr/bin/node', args: ['/srv/as "x"/dist/bin/assent.js', 'mcp'] };
const config = '# my settings\nmodel = "gpt-5"   # keep this comment\n\n[mcp_servers.fs]\ncommand = "npx"\nargs = ["fs"]\n';

describe('R-HOOK-7 Codex MCP entry in config.toml', () => {
  it('appends one marked [mcp_servers.assent] table, idempotently, and removes it leaving the original bytes', () => {
    const added = withCodexMcpBlock(config, server, 'config.toml');
    expect(added.startsWith(config)).toBe(true);
    expect(added).toBe(`${config}\n${codexMcpBlock(server)}`);
    expect(added).toContain('[mcp_servers.assent]\ncommand = "/usr/bin/node"\nargs = ["/srv/as \\"x\\"/dist/bin/assent.js", "mcp"]\n');
    expect(withCodexMcpBlock(added, server, 'config.toml')).toBe(added);
    expect(withoutCodexMcpBlock(added, 'config.toml')).toBe(config);
    expect(withCodexMcpBlock('', server, 'config.toml')).toBe(codexMcpBlock(server));
  });

  it('replaces its own table in place when the paths changed, and keeps what the user added after it', () => {
    const added = `${withCodexMcpBlock(config, { command: '/old/node', args: ['/old/assent.js', 'mcp'] }, 'config.toml')}\n[projects."/w"]\ntrust_level = "trusted"\n`;
    const replaced = withCodexMcpBlock(added, server, 'config.toml');
    expect(replaced).not.toContain('/old/');
    expect(replaced.endsWith('[projects."/w"]\ntrust_level = "trusted"\n')).toBe(true);
    expect(withoutCodexMcpBlock(replaced, 'config.toml')).toBe(`${config}\n\n[projects."/w"]\ntrust_level = "trusted"\n`);
  });

  it('refuses a file that defines an assent server itself or makes mcp_servers an inline table, and a lone marker', () => {
    expect(() => withCodexMcpBlock('[mcp_servers.assent]\ncommand = "assent"\n', server, 'config.toml')).toThrow(/already defines an MCP server named "assent"/);
    expect(() => withCodexMcpBlock('[mcp_servers."assent".env]\nA = "1"\n', server, 'config.toml')).toThrow(/already defines/);
    expect(() => withCodexMcpBlock('mcp_servers = { fs = { command = "npx" } }\n', server, 'config.toml')).toThrow(/inline table/);
    expect(() => withCodexMcpBlock(`${codexMcpBlock(server).split('\n')[0]}\n[x]\n`, server, 'config.toml')).toThrow(/marker comment without its partner/);
  });

  it('Codex\'s hook trust records are read as TOML: table headers, dotted keys and inline tables count, comments do not', () => {
    const key = '/h/.codex/hooks.json:pre_tool_use:0:0';
    const forms = [
      `[hooks.state.${JSON.stringify(key)}] # trusted in /hooks\ntrusted_hash = "sha256:aa"\n`,
      `[hooks]\nstate.${JSON.stringify(key)}.trusted_hash = "sha256:aa"\n`,
      `hooks = { state = { ${JSON.stringify(key)} = { trusted_hash = "sha256:aa" } } }\n`,
      `[hooks.state]\n${JSON.stringify(key)} = { trusted_hash = 'sha256:aa', enabled = true }\n`,
    ];
    for (const form of forms) expect(codexHookTrust(readCodexHookStates(form, 'config.toml'), key)).toEqual({ state: 'recorded', hash: 'sha256:aa' });
    expect(codexHookTrust(readCodexHookStates(`# [hooks.state.${JSON.stringify(key)}]\n# trusted_hash = "sha256:aa"\n`, 'config.toml'), key)).toEqual({ state: 'missing' });
    expect(codexHookTrust(readCodexHookStates(`[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "sha256:aa"\nenabled = false\n`, 'config.toml'), key)).toEqual({ state: 'disabled' });
    expect(() => readCodexHookStates('[hooks.state\n', '/h/.codex/config.toml')).toThrow(/\/h\/\.codex\/config\.toml is not valid TOML \(line 1/);
  });
});
