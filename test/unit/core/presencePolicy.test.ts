// `policy.presence` matching (R-REM-6): exact tool ids and globs over them,
// with `*` inside one half of the id and `**` across.
import { describe, expect, it } from 'vitest';
import { compilePresence, presenceFor, presenceKeyProblem } from '../../../src/core/policy/presencePolicy.js';

describe('R-REM-6 presenceFor', () => {
  it('R-REM-6 an exact id matches only itself; globs match within the alias or tool half like the rest of policy', () => {
    const compiled = compilePresence({ 'fs/write_file': 'passkey', 'git/*': 'passkey', '*/Bash': 'passkey', 'db/drop_{table,index}': 'passkey' });
    expect(presenceFor(compiled, 'fs/write_file')).toEqual({ presence: 'passkey', key: 'fs/write_file' });
    expect(presenceFor(compiled, 'fs/write_files')).toBeUndefined();
    expect(presenceFor(compiled, 'fs/read_file')).toBeUndefined();
    expect(presenceFor(compiled, 'git/push')).toEqual({ presence: 'passkey', key: 'git/*' });
    expect(presenceFor(compiled, 'claude/Bash')).toEqual({ presence: 'passkey', key: '*/Bash' });
    expect(presenceFor(compiled, 'codex/Bash')).toEqual({ presence: 'passkey', key: '*/Bash' });
    expect(presenceFor(compiled, 'claude/Write')).toBeUndefined();
    expect(presenceFor(compiled, 'db/drop_index')).toEqual({ presence: 'passkey', key: 'db/drop_{table,index}' });
    expect(presenceFor(compilePresence({ '**': 'passkey' }), 'any/tool')).toEqual({ presence: 'passkey', key: '**' });
    expect(presenceFor(compilePresence({}), 'fs/write_file')).toBeUndefined();
  });

  it('R-REM-6 keys that can never name a tool id are problems, valid ones are not', () => {
    for (const key of ['write_file', '/write_file', 'fs/', 'fs/[']) expect(presenceKeyProblem(key), key).toBeDefined();
    for (const key of ['fs/write_file', 'fs/*', '*/*', 'claude/Bash']) expect(presenceKeyProblem(key), key).toBeUndefined();
  });
});
