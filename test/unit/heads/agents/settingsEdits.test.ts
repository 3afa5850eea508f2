// assent's entries in an agent's settings (R-HOOK-7): added beside everything
// else, found, and removed again leaving every other byte of the file as it was.
import { describe, expect, it } from 'vitest';
import { agentTarget } from '../../../../src/heads/agents/agentTargets.js';
import { findAssentHooks, withAssentHooks, withAssentMcpServer, withoutAssentHooks, withoutAssentMcpServer } from '../../../../src/heads/agents/assentEntries.js';
import { desiredHooks, editedJsonText } from '../../../../src/heads/agents/installPlan.js';
import { addAssentHooksText, removeAssentHooksText, removeAssentMcpServerText, setAssentMcpServerText } from '../../../../src/heads/agents/settingsTextEdits.js';
import { parseSettings } from '../../../../src/heads/agents/settingsFiles.js';

const where = { env: {}, homedir: '/home/u', cwd: '/home/u/project' };
const installation = { node: '/usr/bin/node', hookEntry: '/srv/assent/dist/bin/assent-hook.js', cliEntry: '/srv/assent/dist/bin/assent.js' };
const server = { command: installation.node, args: [installation.cliEntry, 'mcp'] };

const install = (text: string, agent: 'claude-code' | 'gemini' = 'claude-code', mcp = false): string => {
  const target = agentTarget(agent, 'user', where);
  const hooks = desiredHooks(target, installation, 110);
  return editedJsonText(
    'settings.json',
    text,
    (s) => {
      const h = withAssentHooks(s, target, hooks, 'settings.json');
      return mcp ? withAssentMcpServer(h, server, 'settings.json') : h;
    },
    (t, format) => {
      const h = addAssentHooksText(removeAssentHooksText(t), target, hooks, format);
      return mcp ? setAssentMcpServerText(h, server, format) : h;
    },
  );
};
const uninstall = (text: string, mcp = false): string =>
  editedJsonText(
    'settings.json',
    text,
    (s) => (mcp ? withoutAssentMcpServer(withoutAssentHooks(s)) : withoutAssentHooks(s)),
    (t) => (mcp ? removeAssentMcpServerText(removeAssentHooksText(t)) : removeAssentHooksText(t)),
  );

/** Hand-formatted files: odd indentation, tabs, CRLF, one line, no final newline, inline arrays, an unrelated hook. */
const FILES: Record<string, string> = {
  'odd indentation and an unrelated hook': '{\n   "model":   "opus",\n   "hooks": {\n      "PreToolUse": [ { "matcher": "Bash", "hooks": [ { "type": "command", "command": "echo hi" } ] } ]\n   },\n   "env": {"A": "1"}\n}\n',
  tabs: '{\n\t"permissions": {\n\t\t"allow": ["Bash(ls)"]\n\t}\n}\n',
  'CRLF, no final newline': '{\r\n  "theme": "dark",\r\n  "hooks": {\r\n    "Stop": [\r\n      {"hooks": [{"type": "command", "command": "notify"}]}\r\n    ]\r\n  }\r\n}',
  'one line': '{"a":1,"hooks":{"Stop":[]}}',
  empty: '{}\n',
  'existing mcp servers': '{\n  "mcpServers": {\n    "fs": { "command": "npx", "args": ["fs"] }\n  }\n}\n',
};

describe('R-HOOK-7 settings edits keep the rest of the file', () => {
  for (const [name, text] of Object.entries(FILES)) {
    it(`${name}: install adds exactly assent's entries, a second install changes nothing, uninstall gives back the original bytes`, () => {
      const installed = install(text, 'claude-code', true);
      const before = parseSettings('f', text);
      const after = parseSettings('f', installed);
      expect(after).toEqual(withAssentMcpServer(withAssentHooks(before, agentTarget('claude-code', 'user', where), desiredHooks(agentTarget('claude-code', 'user', where), installation, 110), 'f'), server, 'f'));
      expect(findAssentHooks(after).map((h) => h.event)).toEqual(['PreToolUse', 'PostToolUse']);
      // Every line of the original is still there, in order (only insertions).
      const kept = text.split(/\r?\n/).filter((line) => !/^\s*[}\]],?\s*$|^\s*$/.test(line));
      for (const line of kept) expect(installed).toContain(line.replace(/[}\]]+,?\s*$/, '').trimEnd() || line);
      expect(install(installed, 'claude-code', true)).toBe(installed);
      expect(uninstall(installed, true)).toBe(text);
    });
  }

  it('what a structural removal cannot know: an event list or object left empty goes, whitespace inside an emptied {} is not kept (installs.json restores those bytes exactly)', () => {
    expect(uninstall(install('{"hooks":{"PostToolUse":[]}}'))).toBe('{}');
    expect(uninstall(install('{ }'))).toBe('{}');
  });

  it('keeps the file indentation for what it adds (3 spaces stay 3 spaces, tabs stay tabs)', () => {
    const odd = install(FILES['odd indentation and an unrelated hook'] as string);
    expect(odd).toContain('\n      "PostToolUse": [\n         {\n            "matcher": "*",');
    const tabs = install(FILES['tabs'] as string);
    expect(tabs).toContain('\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{');
    expect(install(FILES['CRLF, no final newline'] as string)).not.toMatch(/[^\r]\n/);
  });

  it('a stale assent entry (another path, another timeout) is replaced, not duplicated; unrelated hooks stay in place', () => {
    const target = agentTarget('claude-code', 'user', where);
    const old = install(FILES['odd indentation and an unrelated hook'] as string).replace(/\/srv\/assent/g, '/old/assent').replace(/"timeout": 136/g, '"timeout": 30');
    const again = install(old);
    const hooks = findAssentHooks(parseSettings('f', again));
    expect(hooks.map((h) => [h.event, h.command.includes('/srv/assent'), h.timeout])).toEqual([
      ['PreToolUse', true, 136],
      ['PostToolUse', true, 136],
    ]);
    expect(JSON.stringify(parseSettings('f', again))).toContain('"command":"echo hi"');
    expect(target.matcher).toBe('*');
  });

  it('Gemini gets BeforeTool/AfterTool with matcher ".*" and the timeout in milliseconds', () => {
    const settings = parseSettings('f', install('{}', 'gemini'));
    expect(settings).toEqual({
      hooks: {
        BeforeTool: [{ matcher: '.*', hooks: [{ type: 'command', command: `"${installation.node}" "${installation.hookEntry}" gemini --timeout 136`, timeout: 136_000 }] }],
        AfterTool: [{ matcher: '.*', hooks: [{ type: 'command', command: `"${installation.node}" "${installation.hookEntry}" gemini --after --timeout 136`, timeout: 136_000 }] }],
      },
    });
  });

  it('uninstall removes only assent\'s entries: a group shared with another hook keeps that hook', () => {
    const shared = '{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "*",\n        "hooks": [\n          { "type": "command", "command": "echo mine" },\n          { "type": "command", "command": "\\"/usr/bin/node\\" \\"/srv/assent/dist/bin/assent-hook.js\\" claude-code", "timeout": 125 }\n        ]\n      }\n    ]\n  }\n}\n';
    expect(parseSettings('f', uninstall(shared))).toEqual({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'echo mine' }] }] } });
    expect(uninstall(shared)).toBe('{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "*",\n        "hooks": [\n          { "type": "command", "command": "echo mine" }\n        ]\n      }\n    ]\n  }\n}\n');
  });

  it('if a text edit would not mean exactly the merged settings, the merged object is written instead, in the file\'s indentation', () => {
    const text = '{\n    "a": 1\n}\n';
    const wrong = editedJsonText('f', text, (s) => ({ ...s, hooks: {} }), (t) => t.replace('"a": 1', '"a": 2, "hooks": {}'));
    expect(wrong).toBe('{\n    "a": 1,\n    "hooks": {}\n}\n');
    expect(editedJsonText('f', text, (s) => ({ ...s, hooks: {} }), () => 'not json')).toBe('{\n    "a": 1,\n    "hooks": {}\n}\n');
  });

  it('refuses settings it cannot merge into, naming the file: invalid JSON, "hooks" not an object, an event that is not a list', () => {
    expect(() => install('{"hooks": ')).toThrow(/settings\.json is not valid JSON/);
    expect(() => install('[1]')).toThrow(/not an object/);
    expect(() => install('{"hooks": []}')).toThrow(/"hooks" is not an object/);
    expect(() => install('{"hooks": {"PreToolUse": {}}}')).toThrow(/"hooks\.PreToolUse" is not a list/);
  });
});
