// CLI conventions that hold for every command (R-CLI-4, R-CLI-6), checked over
// the program the binary builds, so a new command cannot skip them.
import { describe, expect, it, vi } from 'vitest';
import type { Command } from 'commander';
import { buildProgram, main } from '../../../../src/heads/cli/main.js';
import { VERSION } from '../../../../src/version.js';

function leaves(command: Command, path: string[] = []): { path: string; command: Command }[] {
  const here = [...path, command.name()];
  if (command.commands.length === 0) return [{ path: here.slice(1).join(' '), command }];
  return command.commands.flatMap((child) => leaves(child, here));
}

/**
 * Commands that print a fixed format instead of --json: the action family
 * always prints exactly one JSON report (SPEC §6), `mcp`, `action mcp` and
 * `action connect` speak the MCP protocol on stdout, `hook` answers in its
 * agent's own JSON shape (R-HOOK-1), `config schema` prints the JSON Schema
 * file itself, and `help` is commander's.
 */
const NO_JSON_FLAG = new Set(['action run', 'action confirm', 'action mcp', 'action review', 'action connect', 'mcp', 'hook', 'confine', 'config schema', 'help']);

describe('CLI conventions', () => {
  it('--version and -V print the version the program declares, and exit 0', async () => {
    expect((await buildProgram()).version()).toBe(VERSION);
    const written: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      expect(await main(['--version'])).toBe(0);
      expect(await main(['-V'])).toBe(0);
    } finally {
      write.mockRestore();
    }
    expect(written).toEqual([`${VERSION}\n`, `${VERSION}\n`]);
  });

  it('R-CLI-6 every command has help text that names what it does', async () => {
    const program = await buildProgram();
    const all = leaves(program);
    expect(all.length).toBeGreaterThan(20);
    for (const { path, command } of all) {
      expect(command.description(), `${path} has no description`).not.toBe('');
      expect(command.helpInformation(), path).toContain('Usage:');
    }
  });

  it('R-CLI-4 every command that is not a protocol or a fixed-format report takes --json', async () => {
    const program = await buildProgram();
    const missing = leaves(program)
      .filter(({ path }) => !NO_JSON_FLAG.has(path))
      .filter(({ command }) => !command.options.some((option) => option.long === '--json'))
      .map(({ path }) => path);
    expect(missing).toEqual([]);
  });

  it('R-CLI-6 an unknown flag is a usage error (64) with a suggestion', async () => {
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const { main } = await import('../../../../src/heads/cli/main.js');
      expect(await main(['pending', '--jsno'])).toBe(64);
      expect(await main(['pendign'])).toBe(64);
    } finally {
      process.stderr.write = original;
    }
    const text = written.join('');
    expect(text).toContain("unknown option '--jsno'");
    expect(text).toContain('--json');
    expect(text).toContain('pending');
  });
});
