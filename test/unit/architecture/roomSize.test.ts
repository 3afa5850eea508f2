// heads/mcp reads as its data flows (docs/architecture.md, "One allowed tools/call
// through heads/mcp"): a room whose files stay small enough to read one at a
// time in the order a call passes through them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const MAX_LINES = 400;

describe('heads/mcp keeps no file over 400 lines', () => {
  it('each file of src/heads/mcp has at most 400 lines, and docs/architecture.md names every one', () => {
    const dir = join(ROOT, 'src', 'heads', 'mcp');
    const files = readdirSync(dir).filter((name) => name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    const long = files
      .map((name) => ({ name, lines: readFileSync(join(dir, name), 'utf8').split('\n').length - 1 }))
      .filter((file) => file.lines > MAX_LINES);
    expect(long).toEqual([]);
    const architecture = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    expect(files.filter((name) => !architecture.includes(name))).toEqual([]);
  });
});
