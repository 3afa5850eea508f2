// Cline CLI through assent's plugin (issue 36): the plugin is loaded as Cline
// loads it (an ES module whose default export carries hooks.beforeTool) and
// runs a stand-in hook. Only the hook's allow lets a call run; every other
// answer, a crash, a hang past the deadline and a hook that cannot start are a
// skip, which refuses that one call and gives the model the reason.
import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { actionCommand, actionPaths, actionUrl } from '../../../../src/core/agent/agentTargets.js';
import { agentActionKind } from '../../../../src/core/agent/agentAction.js';
import { LOAD_MARKER_NAME, pluginText, readPluginSettings } from '../../../../src/heads/agents/pluginFile.js';
import { beforeAnswer } from '../../../../src/heads/hook/hookAnswer.js';
import { parseHookEvent } from '../../../../src/heads/hook/hookEvent.js';

type BeforeTool = (context: unknown) => Promise<{ skip?: boolean; reason?: string } | undefined>;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-cline-plugin-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The plugin's beforeTool, wired to a stand-in hook whose body is `script` (it reads the event on stdin first). */
async function pluginWith(script: string, name: string, hookEntry?: string, timeoutSeconds = 20): Promise<{ beforeTool: BeforeTool; log: string; file: string }> {
  const log = join(dir, `${name}.log`);
  const hook = hookEntry ?? join(dir, `${name}-hook.mjs`);
  if (hookEntry === undefined) {
    writeFileSync(hook, `import { writeFileSync } from 'node:fs';\nlet input = '';\nprocess.stdin.on('data', (c) => (input += c)).on('end', () => {\n  writeFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), event: JSON.parse(input) }));\n  ${script}\n});\n`);
  }
  const file = join(dir, `${name}-plugin.mjs`);
  writeFileSync(file, pluginText({ agent: 'cline', installation: { node: process.execPath, hookEntry: hook, cliEntry: '/unused' }, timeoutSeconds }));
  const module = (await import(pathToFileURL(file).href)) as { default: { name: string; manifest: { capabilities: string[] }; hooks: { beforeTool: BeforeTool } } };
  expect(module.default.manifest.capabilities).toEqual(['hooks']);
  return { beforeTool: module.default.hooks.beforeTool, log, file };
}

const context = {
  snapshot: { agentId: 'agent_1', conversationId: 'conv_1' },
  tool: { name: 'run_commands' },
  toolCall: { toolCallId: 'call_1', toolName: 'run_commands', input: { commands: ['touch x'] } },
  input: { commands: ['touch x'] },
};

describe('assent\'s Cline plugin', () => {
  it('hands the call to the hook as a beforeTool event; the hook\'s allow runs it, its deny is a skip with the reason', async () => {
    const allow = await pluginWith(`process.stdout.write(${JSON.stringify(beforeAnswer('cline', 'allow', 'fine'))});`, 'allow');
    expect(await allow.beforeTool(context)).toBeUndefined();
    const seen = JSON.parse(readFileSync(allow.log, 'utf8')) as { argv: string[]; event: Record<string, unknown> };
    expect(seen.argv).toEqual(['cline', '--timeout', '20']);
    expect(seen.event).toEqual({ hook_event_name: 'beforeTool', session_id: 'conv_1', cwd: process.cwd(), tool_name: 'run_commands', tool_input: { commands: ['touch x'] }, tool_use_id: 'call_1' });
    const parsed = parseHookEvent('cline', 'before', JSON.stringify(seen.event), '/');
    expect(parsed).toMatchObject({ ok: true, mode: 'before', action: { agent: 'cline', sessionId: 'conv_1', tool: 'run_commands', kind: 'shell', toolUseId: 'call_1' } });

    const deny = await pluginWith(`process.stdout.write(${JSON.stringify(beforeAnswer('cline', 'deny', 'assent refused cline/run_commands: policy'))});`, 'deny');
    expect(await deny.beforeTool(context)).toEqual({ skip: true, reason: 'assent refused cline/run_commands: policy' });
  });

  it('an answer that is not an allow, a crash, a hook that cannot start and a passed deadline are all skips', async () => {
    const cases: Array<[string, string]> = [
      ['garbage', "process.stdout.write('not json');"],
      ['empty', ''],
      ['allow-exit1', `process.stdout.write(${JSON.stringify(JSON.stringify({ decision: 'allow' }))}); process.exit(1);`],
      ['ask', `process.stdout.write(${JSON.stringify(JSON.stringify({ decision: 'ask' }))});`],
      ['confine', `process.stdout.write(${JSON.stringify(JSON.stringify({ decision: 'confine', updatedInput: { commands: ['x'] } }))});`],
      ['crash', "process.stderr.write('boom'); process.exit(3);"],
    ];
    for (const [name, script] of cases) {
      const { beforeTool } = await pluginWith(script, name);
      const answer = await beforeTool(context);
      expect(answer?.skip, name).toBe(true);
      expect(answer?.reason, name).toMatch(/\S/);
    }
    const missing = await pluginWith('', 'missing', join(dir, 'no-such-hook.mjs'));
    expect(await missing.beforeTool(context)).toMatchObject({ skip: true, reason: expect.stringContaining('no-such-hook.mjs') });
    const noNode = join(dir, 'no-node-plugin.mjs');
    writeFileSync(noNode, pluginText({ agent: 'cline', installation: { node: join(dir, 'no-such-node'), hookEntry: join(dir, 'x.mjs'), cliEntry: '/unused' }, timeoutSeconds: 20 }));
    const { default: plugin } = (await import(pathToFileURL(noNode).href)) as { default: { hooks: { beforeTool: BeforeTool } } };
    expect(await plugin.hooks.beforeTool(context)).toMatchObject({ skip: true, reason: expect.stringContaining('assent blocked cline/run_commands: spawn') });
    const hang = await pluginWith('setTimeout(() => {}, 60000);', 'hang', undefined, 1);
    expect(await hang.beforeTool(context)).toMatchObject({ skip: true, reason: expect.stringContaining("did not answer within 1 s") });
  }, 30_000);

  it('writes its load marker beside itself when loaded, and carries the settings doctor reads back', async () => {
    const { file } = await pluginWith('', 'marker');
    expect(existsSync(join(dir, LOAD_MARKER_NAME))).toBe(true);
    expect(readPluginSettings(readFileSync(file, 'utf8'))).toEqual({ node: process.execPath, hookEntry: join(dir, 'marker-hook.mjs'), agent: 'cline', timeoutSeconds: 20 });
  });
});

describe('what a Cline call touches', () => {
  it('run_commands is judged only as one command string alone in the input: several commands, an argv entry or another key have no command (it asks)', () => {
    expect(actionCommand({ commands: ['git status'] }, 'cline')).toBe('git status');
    expect(actionCommand({ commands: 'git status' }, 'cline')).toBe('git status');
    expect(actionCommand({ command: 'git status' }, 'cline')).toBe('git status');
    expect(actionCommand({ commands: ['git status', 'rm -rf /'] }, 'cline')).toBeUndefined();
    expect(actionCommand({ commands: [{ command: 'cat', args: ['/etc/shadow'] }] }, 'cline')).toBeUndefined();
    expect(actionCommand({ command: 'cat', args: ['/etc/shadow'] }, 'cline')).toBeUndefined();
    expect(actionCommand({ commands: ['ls'], cwd: '/' }, 'cline')).toBeUndefined();
    // Whatever the input, a command is named only when it is exactly the one string Cline runs.
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('commands', 'command', 'cmd', 'args', 'cwd'), fc.oneof(fc.string(), fc.array(fc.oneof(fc.string(), fc.record({ command: fc.string() }))))), (input) => {
        const command = actionCommand(input, 'cline');
        if (command === undefined) return;
        const keys = Object.keys(input);
        expect(keys.length).toBe(1);
        const value = input[keys[0] as string];
        expect(Array.isArray(value) ? value : [value]).toEqual([command]);
      }),
      { numRuns: 500 },
    );
    expect(agentActionKind('cline', 'run_commands')).toBe('shell');
  });

  it('read_files names its files in any of the forms Cline reads; an unknown field or entry makes the paths unknown', () => {
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { files: [{ path: '/a', start_line: 1 }, 'b'] } })).toEqual({ paths: ['/a', 'b'] });
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { file_paths: ['/a'], paths: '/b' } })).toEqual({ paths: ['/a', '/b'] });
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { files: [{ path: '/a', encoding: 'x' }] } }).unknown).toMatch(/not a path/);
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: { files: ['/a'], root: '/' } }).unknown).toMatch(/field "root"/);
    expect(actionPaths({ agent: 'cline', tool: 'read_files', input: {} }).unknown).toMatch(/names no file/);
    expect(actionPaths({ agent: 'cline', tool: 'editor', input: { path: '/w/x.ts', new_text: 'y' } })).toEqual({ paths: ['/w/x.ts'] });
    expect(actionPaths({ agent: 'cline', tool: 'search_codebase', input: { queries: ['TODO'] } })).toEqual({ paths: ['.'], recursive: true });
    expect(actionPaths({ agent: 'cline', tool: 'apply_patch', input: { input: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch' } })).toEqual({ paths: ['src/a.ts'] });
  });

  it('fetch_web_content names its URL when it makes one request; several are judged as no URL', () => {
    expect(actionUrl({ requests: [{ url: 'https://example.com/a', prompt: 'p' }] })).toBe('https://example.com/a');
    expect(actionUrl({ requests: [{ url: 'https://a.example' }, { url: 'https://b.example' }] })).toBeUndefined();
    expect(agentActionKind('cline', 'fetch_web_content')).toBe('fetch');
    expect(agentActionKind('cline', 'ask_question')).toBe('other');
  });
});
