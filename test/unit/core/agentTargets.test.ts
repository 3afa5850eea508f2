// What an agent action touches, read from its tool_input (R-PATH-1, R-POL-6),
// and what "approve for session" remembers of it (R-POL-7).
import { describe, expect, it } from 'vitest';
import { actionPaths, patchPaths, sessionGrantSubject } from '../../../src/core/agent/agentTargets.js';

describe('agent action targets', () => {
  it('R-PATH-1 paths per tool: Claude file_path/notebook_path/path, Gemini absolute_path and paths, every file a Codex patch names; none → unknown', () => {
    expect(actionPaths({ agent: 'claude-code', tool: 'Edit', input: { file_path: '/a', old_string: 'x' } })).toEqual({ paths: ['/a'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'NotebookEdit', input: { notebook_path: 'n.ipynb' } })).toEqual({ paths: ['n.ipynb'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'Grep', input: { pattern: 'x' } })).toEqual({ paths: ['.'], recursive: true });
    expect(actionPaths({ agent: 'gemini', tool: 'read_file', input: { absolute_path: '/b' } })).toEqual({ paths: ['/b'] });
    expect(actionPaths({ agent: 'gemini', tool: 'read_many_files', input: { paths: ['a', 'b'] } })).toEqual({ paths: ['a', 'b'] });
    expect(patchPaths('*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n*** Delete File: c.ts\n*** Add File: d.ts\n+x\n*** End Patch')).toEqual(['a.ts', 'b.ts', 'c.ts', 'd.ts']);
    expect(actionPaths({ agent: 'codex', tool: 'apply_patch', input: { command: 'not a patch' } })).toMatchObject({ paths: [], unknown: 'the patch names no file' });
    expect(actionPaths({ agent: 'claude-code', tool: 'Write', input: { content: 'x' } }).unknown).toMatch(/names no path/);
  });

  it('R-PATH-1 (issue 12 item 5) Claude Glob `pattern` and Grep `glob` are read paths too, by the directory their literal leading segments name', () => {
    expect(actionPaths({ agent: 'claude-code', tool: 'Glob', input: { pattern: '**/*.ts' } })).toEqual({ paths: ['.'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'Glob', input: { pattern: '~/.ssh/*' } })).toEqual({ paths: ['.', '~/.ssh'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'Glob', input: { pattern: '/home/u/.aws/**/cred*', path: '/w' } })).toEqual({ paths: ['/w', '/home/u/.aws'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'Glob', input: { pattern: '../../home/u/.ssh/id_*', path: 'src' } })).toEqual({ paths: ['src', 'src/../../home/u/.ssh'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'Glob', input: { pattern: '/*' } })).toEqual({ paths: ['.', '/'] });
    expect(actionPaths({ agent: 'claude-code', tool: 'Grep', input: { pattern: 'key', glob: '.env' } })).toEqual({ paths: ['.', './.env'], recursive: true });
    expect(actionPaths({ agent: 'claude-code', tool: 'Grep', input: { pattern: 'key', glob: '*.{js,ts}', path: 'lib' } })).toEqual({ paths: ['lib'], recursive: true });
    // Gemini's glob keeps its own fields; a non-string pattern adds nothing.
    expect(actionPaths({ agent: 'claude-code', tool: 'Glob', input: { pattern: 3 } })).toEqual({ paths: ['.'] });
  });

  it('R-POL-7 a shell grant is the command text (not the description); a path grant is the paths, relative ones against the cwd', () => {
    const a = sessionGrantSubject({ agent: 'claude-code', tool: 'Bash', kind: 'shell', cwd: '/w', input: { command: 'npm test', description: 'a' } });
    const b = sessionGrantSubject({ agent: 'claude-code', tool: 'Bash', kind: 'shell', cwd: '/w', input: { command: 'npm test', description: 'b' } });
    expect(a?.subject).toEqual(b?.subject);
    expect(a?.label).toBe('the exact command text "npm test", for this agent session');
    const write = sessionGrantSubject({ agent: 'claude-code', tool: 'Write', kind: 'write', cwd: '/w', input: { file_path: 'x.txt', content: '1' } });
    expect(write?.subject).toEqual({ access: 'write', paths: ['/w/x.txt'] });
    expect(sessionGrantSubject({ agent: 'claude-code', tool: 'Write', kind: 'write', cwd: '/v', input: { file_path: 'x.txt', content: '2' } })?.subject).not.toEqual(write?.subject);
    expect(sessionGrantSubject({ agent: 'claude-code', tool: 'WebFetch', kind: 'fetch', cwd: '/w', input: { url: 'https://x' } })).toBeUndefined();
  });
});
