// The hook command `assent install` writes (hooks-common interface): absolute,
// double-quoted paths that a shell gives back exactly, whatever they contain.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { doubleQuote, hookCommand, isAssentHookCommand, parseHookCommand, splitCommandWords } from '../../../../src/heads/agents/hookCommand.js';

const tricky = '/tmp/we ird/$HOME/`id`/"q"/back\\slash/it\'s/assent-hook.js';

describe('R-HOOK-7 hook command', () => {
  it('double-quotes each path so sh -c passes it through unchanged, $ and backticks included', () => {
    const run = spawnSync('/bin/sh', ['-c', `printf '%s\\n' ${doubleQuote(tricky)} ${doubleQuote('/usr/bin/no de')}`], { encoding: 'utf8' });
    expect(run.stdout).toBe(`${tricky}\n/usr/bin/no de\n`);
  });

  it('R-HOOK-11 is "<node>" "<hook entry>" <agent> [--after] --timeout N, and reads back to the same parts; an older command without --timeout still reads', () => {
    const installation = { node: '/opt/node v20/bin/node', hookEntry: tricky, cliEntry: '/x/assent.js' };
    const before = hookCommand(installation, 'claude-code', false, 136);
    const after = hookCommand(installation, 'gemini', true, 136);
    expect(before).toBe(`${doubleQuote(installation.node)} ${doubleQuote(tricky)} claude-code --timeout 136`);
    expect(after.endsWith(' gemini --after --timeout 136')).toBe(true);
    expect(parseHookCommand(before)).toEqual({ node: installation.node, hookEntry: tricky, agent: 'claude-code', after: false, timeoutSeconds: 136 });
    expect(parseHookCommand(after)).toEqual({ node: installation.node, hookEntry: tricky, agent: 'gemini', after: true, timeoutSeconds: 136 });
    expect(parseHookCommand(`"/n" "/x/assent-hook.js" codex`)).toEqual({ node: '/n', hookEntry: '/x/assent-hook.js', agent: 'codex', after: false });
    expect(parseHookCommand(`"/n" "/x/assent-hook.js" codex --timeout`)).toBeUndefined();
    expect(parseHookCommand(`"/n" "/x/assent-hook.js" codex --timeout 0`)).toBeUndefined();
    expect(parseHookCommand(`"/n" "/x/assent-hook.js" codex --after --after`)).toBeUndefined();
  });

  it('does not read commands whose effect is not static, and tells assent\'s entries from others', () => {
    expect(splitCommandWords('"/a b" c')).toEqual(['/a b', 'c']);
    expect(splitCommandWords('node "$X/assent-hook.js" codex')).toBeUndefined();
    expect(splitCommandWords('node x.js; rm -rf y')).toBeUndefined();
    expect(parseHookCommand('node /x/other.js codex')).toBeUndefined();
    expect(isAssentHookCommand('"/usr/bin/node" "/srv/assent/dist/bin/assent-hook.js" codex')).toBe(true);
    expect(isAssentHookCommand('assent hook claude-code --after')).toBe(true);
    expect(isAssentHookCommand('/usr/local/bin/assent hook gemini')).toBe(true);
    expect(isAssentHookCommand('echo hi')).toBe(false);
    expect(isAssentHookCommand('my-assent-checker hook')).toBe(false);
  });
});
