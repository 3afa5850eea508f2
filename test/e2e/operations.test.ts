// `assent operations --json` (R-OPS-2) from the built binary, without a daemon:
// it prints the committed docs/operations.json.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, CLI_ENTRY, REPO_ROOT, requireBuiltCli } from '../helpers/daemon.js';

describe('assent operations', () => {
  it('R-OPS-2 `assent operations --json` equals the committed docs/operations.json and needs no daemon', () => {
    requireBuiltCli();
    const stdout = execFileSync(process.execPath, [CLI_ENTRY, 'operations', '--json'], {
      encoding: 'utf8',
      env: cleanEnv({ ASSENT_HOME: '/nonexistent/assent-home', ASSENT_NO_AUTOSPAWN: '1' }),
    });
    const printed = JSON.parse(stdout) as { ok: boolean; data: unknown; meta: { count: number } };
    expect(printed.ok).toBe(true);
    const committed = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'operations.json'), 'utf8')) as unknown[];
    expect(printed.data).toEqual(committed);
    expect(printed.meta.count).toBe(committed.length);
  });
});
