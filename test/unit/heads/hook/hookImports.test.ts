// R-HOOK-8: the hook is a thin client. What its entry loads statically (what
// every agent tool call pays for) is a handful of small modules: no CLI, no
// commander, no zod, no policy evaluation, no service, no SQLite. Auto-spawn is
// loaded only on demand, when no daemon answers.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEventFromFd } from '../../../../src/heads/hook/hookProcess.js';
import { staticGraph, staticImportsOf as staticImports } from '../../../helpers/imports.js';

const srcDir = join(import.meta.dirname, '../../../../src');

describe('the hook is a thin client (R-HOOK-8)', () => {
  it('R-HOOK-8 the hook entry loads no CLI, commander, zod, policy, service, operation or journal store module', () => {
    // The entry imports nothing statically; it loads hookProcess with import(), so a failure to load still answers deny.
    const entry = readFileSync(join(srcDir, 'bin', 'assent-hook.ts'), 'utf8');
    expect(staticImports(entry)).toEqual([]);
    expect([...entry.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((match) => match[1])).toEqual(['../heads/hook/hookProcess.js']);
    const graph = [...staticGraph(srcDir, join(srcDir, 'heads', 'hook', 'hookProcess.ts'))].sort();
    expect(graph).toEqual([
      'core/agent/agentAction.ts',
      'core/agent/hookDeadline.ts',
      'core/base/errors.ts',
      'heads/daemon/framing.ts',
      'heads/hook/hookAnswer.ts',
      'heads/hook/hookClient.ts',
      'heads/hook/hookEvent.ts',
      'heads/hook/hookProcess.ts',
      'heads/hook/hookRun.ts',
      'heads/hook/nodePipe.ts',
      'state/statePaths.ts',
      'version.ts',
    ]);
  });

  it('R-HOOK-8 `assent hook` goes to the hook before the CLI is loaded', () => {
    const entry = readFileSync(join(srcDir, 'bin', 'assent.ts'), 'utf8');
    expect(staticImports(entry)).toEqual([]);
    expect(entry.indexOf("import('../heads/hook/hookProcess.js')")).toBeLessThan(entry.indexOf("import('../heads/cli/main.js')"));
  });

  it('R-HOOK-4 stdin read from its descriptor: up to 1 MiB whole, one byte more is oversized, invalid UTF-8 refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'as-hookfd-'));
    try {
      const readFile = async (content: Buffer): Promise<unknown> => {
        const file = join(dir, 'event');
        writeFileSync(file, content);
        const fd = openSync(file, 'r');
        try {
          return await readEventFromFd(fd, () => Promise.reject(new Error('no fallback expected')));
        } finally {
          closeSync(fd);
        }
      };
      const exact = `{${' '.repeat(1_048_574)}}`;
      expect(await readFile(Buffer.from(exact))).toEqual({ text: exact, oversized: false });
      expect(await readFile(Buffer.from(`${exact} `))).toEqual({ text: '', oversized: true });
      await expect(readFile(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]))).rejects.toThrow(/not valid UTF-8/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
