// The diff `assent install` shows before (or as) it changes a settings file (R-HOOK-7).
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../../../src/heads/agents/textDiff.js';

const labels = { fromLabel: 'a/settings.json', toLabel: 'b/settings.json' };

describe('R-HOOK-7 install diff', () => {
  it('equal texts give no diff', () => {
    expect(unifiedDiff('{}\n', '{}\n', labels)).toEqual([]);
  });

  it('shows added lines with 3 lines of context and the hunk position', () => {
    const before = ['{', '  "a": 1,', '  "b": 2,', '  "c": 3,', '  "d": 4,', '  "e": 5', '}', ''].join('\n');
    const after = ['{', '  "a": 1,', '  "b": 2,', '  "c": 3,', '  "d": 4,', '  "e": 5,', '  "hooks": {}', '}', ''].join('\n');
    expect(unifiedDiff(before, after, labels)).toEqual([
      '--- a/settings.json',
      '+++ b/settings.json',
      '@@ -3,5 +3,6 @@',
      '   "b": 2,',
      '   "c": 3,',
      '   "d": 4,',
      '-  "e": 5',
      '+  "e": 5,',
      '+  "hooks": {}',
      ' }',
    ]);
  });

  it('a new file is all additions from line 0; far-apart changes make two hunks', () => {
    expect(unifiedDiff('', 'x\ny\n', { fromLabel: '/dev/null', toLabel: 'f' })).toEqual(['--- /dev/null', '+++ f', '@@ -0,0 +1,2 @@', '+x', '+y']);
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`);
    const changed = [...lines];
    changed[1] = 'first change';
    changed[18] = 'second change';
    const diff = unifiedDiff(`${lines.join('\n')}\n`, `${changed.join('\n')}\n`, labels);
    expect(diff.filter((l) => l.startsWith('@@'))).toEqual(['@@ -1,5 +1,5 @@', '@@ -16,5 +16,5 @@']);
  });

  it('a change of the final newline alone is a difference, marked as diff(1) does', () => {
    expect(unifiedDiff('{}', '{}\n', labels)).toEqual(['--- a/settings.json', '+++ b/settings.json', '@@ -1,1 +1,1 @@', '-{}', '\\ No newline at end of file', '+{}']);
  });

  it('a change too large to show line by line is summarised, not searched to the end', () => {
    const before = `${Array.from({ length: 2500 }, (_, i) => `old ${i}`).join('\n')}\n`;
    const after = `${Array.from({ length: 2600 }, (_, i) => `new ${i}`).join('\n')}\n`;
    expect(unifiedDiff(before, after, labels)).toEqual([
      '--- a/settings.json',
      '+++ b/settings.json',
      '@@ 2500 lines replaced by 2600 lines (too many changes to show line by line) @@',
    ]);
  });

  it('a path with spaces or beyond ASCII is shown as it is, not C-quoted', () => {
    const file = '/home/José Núñez/.gemini/settings.json';
    expect(unifiedDiff('a\n', 'b\n', { fromLabel: file, toLabel: file }).slice(0, 3)).toEqual([`--- ${file}`, `+++ ${file}`, '@@ -1,1 +1,1 @@']);
  });
});
