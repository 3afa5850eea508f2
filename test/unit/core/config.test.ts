import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig, type Config } from '../../../src/core/config/config.js';
import { diffPolicy } from '../../../src/core/config/configDiff.js';
import { defaultAgentPolicyDocument } from '../../../src/core/policy/agentPolicyConfig.js';

/** A valid config to start from; each case breaks one key. */
function base(): Record<string, unknown> {
  return {
    servers: { fs: { command: 'npx', args: ['-y', 'server'], env: {} }, remote: { url: 'https://example.invalid/mcp' } },
    policy: { default: 'allow', destructive: 'prompt', tools: { 'fs/write_file': 'prompt' }, consentTimeoutSeconds: 90 },
    channels: { elicitation: false, tty: false },
    approvals: { handoff: false, proofTtlSeconds: 300 },
    notifications: true,
    web: { listen: '127.0.0.1:7788' },
    auditRetentionDays: 30,
  };
}

function withValue(path: string[], value: unknown): Record<string, unknown> {
  const root = base();
  let node: Record<string, unknown> = root;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1] ?? ''] = value;
  return root;
}

const invalid: Array<[string, Record<string, unknown>, string, RegExp]> = [
  ['policy.default not a decision', withValue(['policy', 'default'], 'maybe'), 'policy.default', /string \("maybe"\).*"allow", "deny" or "prompt"/],
  ['policy.destructive a number', withValue(['policy', 'destructive'], 1), 'policy.destructive', /integer 1.*"allow", "deny" or "prompt"/],
  ['policy.tools value invalid', withValue(['policy', 'tools'], { 'fs/write_file': 'ask' }), 'policy.tools.fs/write_file', /string \("ask"\)/],
  ['policy.tools key without slash', withValue(['policy', 'tools'], { write_file: 'deny' }), 'policy.tools.write_file', /"<server alias>\/<tool name>"/],
  ['policy.tools an array', withValue(['policy', 'tools'], []), 'policy.tools', /an array of 0 items/],
  ['consentTimeoutSeconds a string', withValue(['policy', 'consentTimeoutSeconds'], '90'), 'policy.consentTimeoutSeconds', /string \("90"\).*integer from 1 to 1500/],
  ['consentTimeoutSeconds above 1500', withValue(['policy', 'consentTimeoutSeconds'], 1501), 'policy.consentTimeoutSeconds', /integer 1501.*1 to 1500/],
  ['consentTimeoutSeconds zero', withValue(['policy', 'consentTimeoutSeconds'], 0), 'policy.consentTimeoutSeconds', /integer 0/],
  ['consentTimeoutSeconds fractional', withValue(['policy', 'consentTimeoutSeconds'], 1.5), 'policy.consentTimeoutSeconds', /number 1.5/],
  ['server with neither command nor url', withValue(['servers', 'fs'], {}), 'servers.fs', /neither "command" nor "url"/],
  ['server with both command and url', withValue(['servers', 'fs'], { command: 'x', url: 'https://a.b/' }), 'servers.fs', /both "command" and "url"/],
  ['server command empty', withValue(['servers', 'fs'], { command: '' }), 'servers.fs.command', /non-empty command/],
  ['server args not strings', withValue(['servers', 'fs'], { command: 'x', args: ['a', 2] }), 'servers.fs.args.1', /integer 2.*a string/],
  ['server env value not string', withValue(['servers', 'fs'], { command: 'x', env: { A: 1 } }), 'servers.fs.env.A', /integer 1/],
  ['server url not http', withValue(['servers', 'remote'], { url: 'ftp://x' }), 'servers.remote.url', /http:\/\/ or https:\/\//],
  ['server alias with slash', withValue(['servers'], { 'a/b': { command: 'x' } }), 'servers.a/b', /no "\/"/],
  ['channels.tty a string', withValue(['channels', 'tty'], 'yes'), 'channels.tty', /string \("yes"\).*true or false/],
  ['channels.elicitation null', withValue(['channels', 'elicitation'], null), 'channels.elicitation', /null.*true or false/],
  ['approvals.handoff number', withValue(['approvals', 'handoff'], 1), 'approvals.handoff', /true or false/],
  ['approvals.proofTtlSeconds negative', withValue(['approvals', 'proofTtlSeconds'], -5), 'approvals.proofTtlSeconds', /integer -5/],
  ['notifications a string', withValue(['notifications'], 'false'), 'notifications', /string \("false"\)/],
  ['web.listen without port', withValue(['web', 'listen'], 'localhost'), 'web.listen', /"host:port"/],
  ['web.listen port too large', withValue(['web', 'listen'], '127.0.0.1:70000'), 'web.listen', /port from 0 to 65535/],
  ['auditRetentionDays zero', withValue(['auditRetentionDays'], 0), 'auditRetentionDays', /integer from 1 to 3650/],
  ['policy an array', withValue(['policy'], ['allow']), 'policy', /an array of 1 item;/],
  ['host.name with an @ (R-TEAM-3)', withValue(['host'], { name: 'me@box' }), 'host.name', /string \("me@box"\).*letters, digits/],
  ['host.name with a space (R-TEAM-3)', withValue(['host'], { name: 'my box' }), 'host.name', /string \("my box"\)/],
  ['host.name empty (R-TEAM-3)', withValue(['host'], { name: '' }), 'host.name', /1-64 letters/],
  ['host.name a number (R-TEAM-3)', withValue(['host'], { name: 7 }), 'host.name', /integer 7/],
  ['host a string (R-TEAM-3)', withValue(['host'], 'box'), 'host', /an object with "name"/],
  ['approvals.fourEyes a string (R-TEAM-3)', withValue(['approvals', 'fourEyes'], 'yes'), 'approvals.fourEyes', /string \("yes"\).*true or false/],
  ['policy.quorum zero (R-TEAM-3)', withValue(['policy', 'quorum'], { 'fs/write_file': 0 }), 'policy.quorum.fs/write_file', /integer 0.*integer from 1 to 16/],
  ['policy.quorum above 16 (R-TEAM-3)', withValue(['policy', 'quorum'], { 'fs/write_file': 17 }), 'policy.quorum.fs/write_file', /integer 17/],
  ['policy.quorum fractional (R-TEAM-3)', withValue(['policy', 'quorum'], { 'fs/write_file': 1.5 }), 'policy.quorum.fs/write_file', /number 1.5/],
  ['policy.quorum a string count (R-TEAM-3)', withValue(['policy', 'quorum'], { 'fs/write_file': '2' }), 'policy.quorum.fs/write_file', /string \("2"\)/],
  ['policy.quorum key without slash (R-TEAM-3)', withValue(['policy', 'quorum'], { write_file: 2 }), 'policy.quorum.write_file', /"<server alias>\/<tool name>"/],
  ['policy.toolRisk an unknown level (R-POL-10)', withValue(['policy', 'toolRisk'], { 'fs/write_file': 'extreme' }), 'policy.toolRisk.fs/write_file', /"low", "elevated" or "high"/],
  ['policy.toolRisk key without slash (R-POL-10)', withValue(['policy', 'toolRisk'], { write_file: 'high' }), 'policy.toolRisk.write_file', /"<server alias>\/<tool name>"/],
  ['policy.toolRisk an alias of no server (R-POL-10)', withValue(['policy', 'toolRisk'], { 'fss/write_file': 'high' }), 'policy.toolRisk.fss/write_file', /"fss" is not a server alias/],
  ['policy.quorum an array (R-TEAM-3)', withValue(['policy', 'quorum'], [2]), 'policy.quorum', /an array of 1 item/],
];

describe('R-CFG-1..3 config validation', () => {
  it('accepts the documented example and fills defaults for a partial file', () => {
    const { config, problems } = validateConfig(base());
    expect(problems).toEqual([]);
    expect(config?.policy.tools['fs/write_file']).toBe('prompt');
    const partial = validateConfig({ policy: { default: 'deny' } });
    expect(partial.problems).toEqual([]);
    expect(partial.config?.policy).toEqual({ ...DEFAULT_CONFIG.policy, default: 'deny' });
    expect(partial.config?.policy.commands).toEqual(defaultAgentPolicyDocument().commands);
    expect(partial.config?.approvals.proofTtlSeconds).toBe(300);
  });

  it('R-CFG-3 defaults consentTimeoutSeconds to 90 and the rest to the documented values', () => {
    expect(DEFAULT_CONFIG).toEqual({
      servers: {},
      policy: { default: 'allow', destructive: 'prompt', tools: {}, consentTimeoutSeconds: 90, quorum: {}, toolRisk: {}, agents: { default: 'prompt', bookkeeping: 'allow' }, ...defaultAgentPolicyDocument(), presence: {} },
      channels: { elicitation: false, tty: false },
      approvals: { handoff: false, proofTtlSeconds: 300, fourEyes: false },
      hooks: { timeoutSeconds: 110, claudeNativePrompt: false },
      notifications: { os: true },
      web: { listen: '127.0.0.1:7788', allowedHosts: [], deviceTtlDays: 30 },
      host: {},
      journal: { kind: 'sqlite' },
      auditRetentionDays: 30,
      audit: { export: [] },
    });
    expect(validateConfig({ policy: { consentTimeoutSeconds: 1500 } }).config?.policy.consentTimeoutSeconds).toBe(1500);
  });

  it.each(invalid)('R-CFG-1 %s is an error naming the key path, the type and what is allowed', (_name, value, path, message) => {
    const { config, problems } = validateConfig(value);
    expect(config).toBeUndefined();
    const errors = problems.filter((p) => p.severity === 'error');
    const hit = errors.find((p) => p.path === path);
    expect(hit, JSON.stringify(errors)).toBeDefined();
    expect(hit?.message).toMatch(message);
  });

  it('R-CFG-2 every policy value is allow, deny or prompt, and nothing else (not even "ask" or a different case)', () => {
    const servers = { fs: { command: 'x' } };
    for (const value of ['allow', 'deny', 'prompt']) {
      const { problems } = validateConfig({ servers, policy: { default: value, destructive: value, tools: { 'fs/x': value } } });
      expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    }
    for (const value of ['ask', 'Allow', 'PROMPT', '', true, null]) {
      const { config, problems } = validateConfig({ servers, policy: { tools: { 'fs/x': value } } });
      expect(config).toBeUndefined();
      expect(problems.map((p) => p.path)).toContain('policy.tools.fs/x');
    }
  });

  it('R-CFG-1 collects every problem, not only the first', () => {
    const value = base();
    (value['policy'] as Record<string, unknown>)['default'] = 'x';
    (value['policy'] as Record<string, unknown>)['consentTimeoutSeconds'] = 9999;
    value['notifications'] = 'no';
    const paths = validateConfig(value).problems.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['policy.default', 'policy.consentTimeoutSeconds', 'notifications']));
  });

  it('R-CFG-1 unknown keys outside policy are warnings and the config still loads', () => {
    const value = base();
    value['futureSection'] = {};
    (value['channels'] as Record<string, unknown>)['ttty'] = true;
    const { config, problems } = validateConfig(value);
    expect(config).toBeDefined();
    expect(problems).toEqual([
      expect.objectContaining({ severity: 'warning', path: 'channels.ttty', message: expect.stringContaining('did you mean "tty"') }),
      expect.objectContaining({ severity: 'warning', path: 'futureSection', message: expect.stringContaining('unknown key, ignored') }),
    ]);
  });

  it.each([
    ['polcy', 'policy'],
    ['audt', 'audit'],
    ['jornal', 'journal'],
    ['Servers', 'servers'],
  ])('R-CFG-1 a top-level %s (a section misspelt) is an error: it would silently drop all of %s', (typo, section) => {
    const value = base();
    value[typo] = {};
    const { config, problems } = validateConfig(value);
    expect(config).toBeUndefined();
    expect(problems).toEqual([
      expect.objectContaining({ severity: 'error', path: typo, message: expect.stringContaining(`did you mean "${section}"?); a misspelt section would silently drop all of "${section}"`) }),
    ]);
  });

  it('R-CFG-1 (hardening 1) an unknown key inside policy is an error, since the typo loosens policy', () => {
    const value = base();
    (value['policy'] as Record<string, unknown>)['defualt'] = 'deny';
    const { config, problems } = validateConfig(value);
    expect(config).toBeUndefined();
    expect(problems).toEqual([
      expect.objectContaining({ severity: 'error', path: 'policy.defualt', message: expect.stringMatching(/unknown key \(did you mean "default"\?\)/) }),
    ]);
  });

  it('R-CFG-1 R-POL-6 policy.agents.default (allow, deny, prompt; default prompt) is supported; a typo inside it or a bad value is an error', () => {
    expect(validateConfig({}).config?.policy.agents).toEqual({ default: 'prompt', bookkeeping: 'allow' });
    for (const value of ['allow', 'deny', 'prompt'] as const) {
      const config = base();
      (config['policy'] as Record<string, unknown>)['agents'] = { default: value };
      expect(validateConfig(config).config?.policy.agents.default).toBe(value);
    }
    const bad = base();
    (bad['policy'] as Record<string, unknown>)['agents'] = { default: 'ask' };
    expect(validateConfig(bad).problems).toEqual([expect.objectContaining({ severity: 'error', path: 'policy.agents.default', message: expect.stringContaining('got a string ("ask")') })]);
    const typo = base();
    (typo['policy'] as Record<string, unknown>)['agents'] = { defualt: 'allow' };
    expect(validateConfig(typo)).toMatchObject({ config: undefined, problems: [expect.objectContaining({ severity: 'error', path: 'policy.agents.defualt' })] });
  });

  it('R-CFG-1 R-HOOK-3 hooks.timeoutSeconds (1..1500, default 110) and hooks.claudeNativePrompt (boolean, default false) are validated', () => {
    expect(validateConfig({}).config?.hooks).toEqual({ timeoutSeconds: 110, claudeNativePrompt: false });
    expect(validateConfig({ hooks: { timeoutSeconds: 1500, claudeNativePrompt: true } }).config?.hooks).toEqual({ timeoutSeconds: 1500, claudeNativePrompt: true });
    for (const timeoutSeconds of [0, 1501, 2.5, '60']) {
      expect(validateConfig({ hooks: { timeoutSeconds } }).problems, String(timeoutSeconds)).toEqual([
        expect.objectContaining({ severity: 'error', path: 'hooks.timeoutSeconds', message: expect.stringContaining('an integer from 1 to 1500') }),
      ]);
    }
    expect(validateConfig({ hooks: { claudeNativePrompt: 'yes' } }).problems).toEqual([expect.objectContaining({ severity: 'error', path: 'hooks.claudeNativePrompt' })]);
    expect(validateConfig({ hooks: { timeout: 5 } }).problems).toEqual([expect.objectContaining({ severity: 'warning', path: 'hooks.timeout' })]);
  });

  it('R-TEAM-3 host.name is optional (the OS host name is the default) and its change shows in the reload diff', () => {
    expect(validateConfig({}).config?.host).toEqual({});
    expect(validateConfig({ host: { name: 'build-01.example' } }).config?.host.name).toBe('build-01.example');
    expect(validateConfig({ host: { nmae: 'x' } }).problems).toEqual([expect.objectContaining({ severity: 'warning', path: 'host.nmae' })]);
    const before = validateConfig({}).config as Config;
    const after = validateConfig({ host: { name: 'laptop' } }).config as Config;
    expect(diffPolicy(before, after)).toEqual(['host.name: (unset) → "laptop" (from the next daemon start)']);
  });

  it('R-TEAM-3 approvals.fourEyes (default false) and policy.quorum (default {}) load; a quorum key naming an unknown alias is an error', () => {
    const loaded = validateConfig({ ...base(), approvals: { fourEyes: true }, policy: { quorum: { 'fs/write_file': 2, 'claude/Bash': 3 } } });
    expect(loaded.problems).toEqual([]);
    expect(loaded.config?.approvals.fourEyes).toBe(true);
    expect(loaded.config?.policy.quorum).toEqual({ 'fs/write_file': 2, 'claude/Bash': 3 });
    const typo = validateConfig({ ...base(), policy: { quorum: { 'fss/write_file': 2 } } });
    expect(typo.config).toBeUndefined();
    expect(typo.problems).toEqual([
      expect.objectContaining({ severity: 'error', path: 'policy.quorum.fss/write_file', message: expect.stringMatching(/"fss" is not a server alias.*did you mean "fs"/) }),
    ]);
  });

  it('R-TEAM-3 R-CFG-4 the reload diff shows approvals.fourEyes and each policy.quorum entry', () => {
    const servers = { fs: { command: 'x' } };
    const before = validateConfig({ servers, approvals: { fourEyes: true }, policy: { quorum: { 'fs/write_file': 2, 'fs/move_file': 3 } } }).config as Config;
    const after = validateConfig({ servers, policy: { quorum: { 'fs/write_file': 1, 'fs/delete': 2 } } }).config as Config;
    expect(diffPolicy(before, after)).toEqual([
      'approvals.fourEyes: true → false',
      'policy.quorum.fs/delete: added 2',
      'policy.quorum.fs/move_file: removed (was 3)',
      'policy.quorum.fs/write_file: 2 → 1',
    ]);
  });

  it('R-CFG-4 the reload diff shows policy.agents.default and the hooks keys', () => {
    const before = validateConfig({}).config as Config;
    const after = validateConfig({ policy: { agents: { default: 'allow' } }, hooks: { timeoutSeconds: 30, claudeNativePrompt: true } }).config as Config;
    expect(diffPolicy(before, after)).toEqual(['policy.agents.default: "prompt" → "allow"', 'hooks.timeoutSeconds: 110 → 30', 'hooks.claudeNativePrompt: false → true']);
  });

  it('R-CFG-1 (hardening 1) a policy.tools key naming an unknown server alias is an error naming the configured aliases', () => {
    const value = base();
    (value['policy'] as Record<string, unknown>)['tools'] = { 'fss/write_file': 'deny', 'fs/move_file': 'deny' };
    const { config, problems } = validateConfig(value);
    expect(config).toBeUndefined();
    expect(problems).toEqual([
      expect.objectContaining({
        severity: 'error',
        path: 'policy.tools.fss/write_file',
        message: expect.stringMatching(/"fss" is not a server alias.*did you mean "fs".*"fs", "remote"/),
      }),
    ]);
    // With no servers at all, every server-scoped key is unknown.
    const bare = validateConfig({ policy: { tools: { 'fs/write_file': 'deny' } } });
    expect(bare.config).toBeUndefined();
    expect(bare.problems[0]).toMatchObject({ severity: 'error', path: 'policy.tools.fs/write_file' });
    expect(bare.problems[0]?.message).toContain('no servers are configured');
  });

  it('R-CFG-1 (hardening 1) agent tool ids (claude/…, codex/…, gemini/…) are known prefixes of policy.tools', () => {
    const { config, problems } = validateConfig({ policy: { tools: { 'claude/Bash': 'prompt', 'codex/apply_patch': 'deny', 'gemini/run_shell_command': 'prompt' } } });
    expect(problems).toEqual([]);
    expect(config?.policy.tools['claude/Bash']).toBe('prompt');
  });

  it('R-CFG-1 a non-object document is an error at the root, never a throw', () => {
    for (const value of [5, 'x', null, [], undefined]) {
      const { config, problems } = validateConfig(value);
      expect(config).toBeUndefined();
      expect(problems[0]).toMatchObject({ severity: 'error', path: '' });
    }
  });
});

describe('R-CFG-4 diffPolicy', () => {
  function parsed(value: Record<string, unknown>): Config {
    const { config } = validateConfig(value);
    if (config === undefined) throw new TypeError('test config invalid');
    return config;
  }

  it('lists policy widening, tool entries and server changes without env values', () => {
    const before = parsed(base());
    const after = parsed({
      ...base(),
      servers: { fs: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: 'secret-value' } }, extra: { url: 'https://x.invalid/' } },
      policy: { default: 'allow', destructive: 'allow', tools: { 'fs/move_file': 'deny' }, consentTimeoutSeconds: 90 },
    });
    const lines = diffPolicy(before, after);
    expect(lines).toEqual([
      'policy.destructive: "prompt" → "allow"',
      'policy.tools.fs/move_file: added "deny"',
      'policy.tools.fs/write_file: removed (was "prompt")',
      'servers.extra: added (url https://x.invalid/)',
      'servers.fs: env values changed for TOKEN',
      'servers.remote: removed (was url https://example.invalid/mcp)',
    ]);
    expect(lines.join('\n')).not.toContain('secret-value');
    expect(diffPolicy(before, parsed(base()))).toEqual([]);
  });

  it('R-TTY-3 (hardening 1) values taken from the file are escaped in the diff; the arrow is the only raw non-ASCII', () => {
    const before = parsed(base());
    const after = parsed({
      ...base(),
      servers: { fs: { command: 'npx', args: ['-y', 'server'], env: { 'T\u202e': 'v' } }, remote: { url: 'https://example.invalid/mcp' }, extra: { command: 'x\u202e' } },
      policy: { default: 'allow', destructive: 'prompt', tools: { 'fs/write_file': 'prompt', 'fs/\u202ewrite': 'allow' }, consentTimeoutSeconds: 90 },
    });
    const lines = diffPolicy(before, after);
    expect(lines).toEqual([
      'policy.tools.fs/\\u202ewrite: added "allow"',
      'servers.extra: added (command "x\\u202e")',
      'servers.fs: env values changed for T\\u202e',
    ]);
    const changed = diffPolicy(before, parsed({ ...base(), policy: { default: 'deny' } }));
    expect(changed[0]).toBe('policy.default: "allow" → "deny"');
    for (const line of [...lines, ...changed]) expect(line.replace(/→/g, '')).toMatch(/^[\x20-\x7e]*$/);
  });
});

describe('R-CFG-1 policy.commands, policy.paths, policy.urls (agent actions 7)', () => {
  const cases: [string, unknown, string, RegExp][] = [
    ['an unknown decision in a command rule', { commands: { rules: [{ match: 'git *', decision: 'maybe' }] } }, 'policy.commands.rules.0.decision', /"allow", "deny" or "prompt"/],
    ['an empty command match', { commands: { rules: [{ match: '', decision: 'allow' }] } }, 'policy.commands.rules.0.match', /empty one matches nothing/],
    ['a blank command match', { commands: { rules: [{ match: '   ', decision: 'allow' }] } }, 'policy.commands.rules.0.match', /blank/],
    ['a command pattern that does not compile', { commands: { rules: [{ match: 'git [push', decision: 'deny' }] } }, 'policy.commands.rules.0.match', /unclosed "\["/],
    ['an unless glob that does not compile', { commands: { rules: [{ match: 'sort *', decision: 'allow', unless: ['-o['] }] } }, 'policy.commands.rules.0.unless.0', /unclosed "\["/],
    ['an unknown decision in a path rule', { paths: { rules: [{ glob: '~/.ssh/**', decision: 'block' }] } }, 'policy.paths.rules.0.decision', /"allow", "deny" or "prompt"/],
    ['an empty path glob', { paths: { rules: [{ glob: '', decision: 'deny' }] } }, 'policy.paths.rules.0.glob', /empty one matches nothing/],
    ['a path glob that does not compile', { paths: { rules: [{ glob: '~/.ssh/{a,b', decision: 'deny' }] } }, 'policy.paths.rules.0.glob', /does not compile.*Missing closing/],
    ['a relative path glob', { paths: { rules: [{ glob: 'secrets/*', decision: 'deny' }] } }, 'policy.paths.rules.0.glob', /is relative/],
    ['an unknown variable in a path glob', { paths: { rules: [{ glob: '${repo}/**', decision: 'deny' }] } }, 'policy.paths.rules.0.glob', /unknown variable/],
    ['an unknown access', { paths: { rules: [{ glob: '/x', access: 'exec', decision: 'deny' }] } }, 'policy.paths.rules.0.access', /"read", "write" or "any"/],
    ['a URL pattern without a scheme', { urls: { rules: [{ match: 'docs.example.com/*', decision: 'allow' }] } }, 'policy.urls.rules.0.match', /scheme:\/\/host\/path/],
    ['a URL glob that does not compile', { urls: { rules: [{ match: 'https://docs.example.com/[a', decision: 'allow' }] } }, 'policy.urls.rules.0.match', /does not compile/],
    ['an unknown key in a rule', { commands: { rules: [{ match: 'ls', decision: 'allow', desicion: 'deny' }] } }, 'policy.commands.rules.0.desicion', /unknown key/],
  ];

  it.each(cases)('%s is an error naming the key path', (_name, policy, path, message) => {
    const { config, problems } = validateConfig({ policy });
    expect(config).toBeUndefined();
    const hit = problems.find((p) => p.severity === 'error' && p.path === path);
    expect(hit, JSON.stringify(problems)).toBeDefined();
    expect(hit?.message).toMatch(message);
  });

  it('a valid section is accepted, and a section left out keeps the default policy', () => {
    const { config, problems } = validateConfig({ policy: { urls: { rules: [{ match: 'https://docs.example.com/*', decision: 'allow' }] } } });
    expect(problems).toEqual([]);
    expect(config?.policy.urls.rules).toHaveLength(1);
    expect(config?.policy.paths).toEqual(defaultAgentPolicyDocument().paths);
  });

  it('R-CFG-4 a reload diff names added and removed agent rules', () => {
    const before = validateConfig({}).config as Config;
    const after = validateConfig({ policy: { commands: { default: 'allow', rules: [{ match: 'npm test *', decision: 'allow' }] } } }).config as Config;
    const lines = diffPolicy(before, after);
    expect(lines).toContain('policy.commands.default: prompt → allow');
    expect(lines).toContain('policy.commands.rules: added {"match":"npm test *","decision":"allow"}');
    expect(lines.some((line) => line.startsWith('policy.commands.rules: removed {"match":"ls *"'))).toBe(true);
  });
});

describe('R-REM-6 policy.presence', () => {
  const withPresence = (presence: unknown): Record<string, unknown> => withValue(['policy', 'presence'], presence);

  it('R-REM-6 R-CFG-5 tool ids and globs mapped to "passkey" are valid; the default is none', () => {
    expect(validateConfig({}).config?.policy.presence).toEqual({});
    const { config, problems } = validateConfig(withPresence({ 'fs/write_file': 'passkey', 'fs/*': 'passkey', 'claude/Bash': 'passkey', '*/delete_*': 'passkey' }));
    expect(problems).toEqual([]);
    expect(config?.policy.presence).toEqual({ 'fs/write_file': 'passkey', 'fs/*': 'passkey', 'claude/Bash': 'passkey', '*/delete_*': 'passkey' });
  });

  it('R-REM-6 R-CFG-1 config check names each bad presence entry by its key path: a wrong value, a key that is no tool id, a glob that does not compile, an unknown alias', () => {
    const { config, problems } = validateConfig(
      withPresence({ 'fs/write_file': 'pin', write_file: 'passkey', 'fs/[': 'passkey', 'fss/write_file': 'passkey' }),
    );
    expect(config).toBeUndefined();
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: 'error', path: 'policy.presence.fs/write_file', message: expect.stringMatching(/got a string \("pin"\); expected "passkey"/) }),
        expect.objectContaining({ severity: 'error', path: 'policy.presence.write_file', message: expect.stringContaining('not a tool id or glob') }),
        expect.objectContaining({ severity: 'error', path: 'policy.presence.fs/[', message: expect.stringContaining('does not compile') }),
        expect.objectContaining({ severity: 'error', path: 'policy.presence.fss/write_file', message: expect.stringContaining('would never require a passkey') }),
      ]),
    );
    expect(problems).toHaveLength(4);
    expect(validateConfig(withPresence(['fs/write_file'])).problems).toEqual([expect.objectContaining({ severity: 'error', path: 'policy.presence' })]);
  });

  it('R-REM-6 R-CFG-4 a reload that drops or adds a passkey requirement shows it in the policy diff', () => {
    const before = validateConfig(withPresence({ 'fs/write_file': 'passkey' })).config as Config;
    const after = validateConfig(withPresence({ 'fs/*': 'passkey' })).config as Config;
    expect(diffPolicy(before, after)).toEqual(['policy.presence.fs/*: added "passkey"', 'policy.presence.fs/write_file: removed (was "passkey")']);
  });
});
