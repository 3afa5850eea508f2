// R-SH-14 through assent's OpenCode/Kilo plugin: the hook's `confine` answer
// replaces the call's arguments with the confined form, and every other shape
// of it still blocks. The plugin is loaded as the agent loads it (an ES module
// whose factory returns the hooks) and runs a stand-in hook that prints a fixed answer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pluginText } from '../../../../src/heads/agents/pluginFile.js';
import { beforeAnswer } from '../../../../src/heads/hook/hookAnswer.js';

type Before = (input: unknown, output: { args: Record<string, unknown> }) => Promise<void>;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'assent-plugin-confine-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The plugin's before hook, wired to a stand-in hook that prints `answer` and exits 0. */
async function pluginAnswering(answer: string, name: string): Promise<Before> {
  const hook = join(dir, `${name}-hook.mjs`);
  writeFileSync(hook, `process.stdin.resume(); process.stdin.on('end', () => process.stdout.write(${JSON.stringify(answer)}));\n`);
  const file = join(dir, `${name}-plugin.mjs`);
  writeFileSync(file, pluginText({ agent: 'opencode', installation: { node: process.execPath, hookEntry: hook, cliEntry: '/unused' }, timeoutSeconds: 20 }));
  const module = (await import(pathToFileURL(file).href)) as { AssentPlugin: (context: unknown) => Promise<Record<string, unknown>> };
  const hooks = await module.AssentPlugin({ directory: dir, assentDoctor: true });
  return hooks['tool.execute.before'] as Before;
}

const call = { tool: 'bash', sessionID: 's1', callID: 'c1' };

describe('R-SH-14 the OpenCode/Kilo plugin runs the confined form', () => {
  it('the hook\'s confined answer replaces the command and keeps the other arguments; a plain allow leaves them as asked', async () => {
    const confined = "'/usr/bin/node' '/opt/assent.js' 'confine' '--profile' 'abc' '--command' 'npm test'";
    const answer = beforeAnswer('opencode', 'allow', 'runs project code: confined', { command: confined, description: 'tests' });
    expect(JSON.parse(answer)).toEqual({ decision: 'confine', reason: 'runs project code: confined', updatedInput: { command: confined, description: 'tests' } });
    const before = await pluginAnswering(answer, 'confine');
    const output = { args: { command: 'npm test', description: 'tests', workdir: dir } };
    await before(call, output);
    expect(output.args).toEqual({ command: confined, description: 'tests', workdir: dir });

    const allow = await pluginAnswering(beforeAnswer('opencode', 'allow', 'ok'), 'allow');
    const plain = { args: { command: 'git status' } };
    await allow(call, plain);
    expect(plain.args).toEqual({ command: 'git status' });
  });

  it('a confine answer without an input, with an input that is no object, or an unknown decision blocks: the command never runs as asked', async () => {
    for (const [name, answer] of [
      ['bare', JSON.stringify({ decision: 'confine', reason: 'r' })],
      ['array', JSON.stringify({ decision: 'confine', reason: 'r', updatedInput: ['npm test'] })],
      ['string', JSON.stringify({ decision: 'confine', reason: 'r', updatedInput: 'npm test' })],
      ['other', JSON.stringify({ decision: 'run', reason: 'r', updatedInput: { command: 'x' } })],
    ] as const) {
      const before = await pluginAnswering(answer, name);
      const output = { args: { command: 'npm test' } };
      await expect(before(call, output), name).rejects.toThrow();
      expect(output.args).toEqual({ command: 'npm test' });
    }
  });

  it('each rewriting agent gets the one form its CLI applies; Qwen Code, which cannot rewrite, gets a deny, so the original never runs unconfined', () => {
    const input = { command: 'confined form', description: 'd' };
    expect(JSON.parse(beforeAnswer('claude-code', 'allow', 'r', input))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'r', updatedInput: input } });
    expect(JSON.parse(beforeAnswer('codex', 'allow', 'r', input))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'r', updatedInput: input } });
    expect(JSON.parse(beforeAnswer('gemini', 'allow', 'r', input))).toEqual({ decision: 'allow', reason: 'r', hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: input } });
    expect(JSON.parse(beforeAnswer('copilot', 'allow', 'r', input))).toEqual({ permissionDecision: 'allow', permissionDecisionReason: 'r', modifiedArgs: input });
    expect(JSON.parse(beforeAnswer('kilo', 'allow', 'r', input))).toEqual({ decision: 'confine', reason: 'r', updatedInput: input });
    expect(JSON.parse(beforeAnswer('qwen', 'allow', 'r', input))).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'r' } });
    // A confined input with anything but allow is a deny in the agent's own shape.
    expect(JSON.parse(beforeAnswer('gemini', 'deny', 'r', input))).toEqual({ decision: 'deny', reason: 'r' });
  });
});
