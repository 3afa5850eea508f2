// Properties of assent's block in Codex's config.toml (R-HOOK-7 --mcp) over
// generated files: comments, odd spacing, tables and arrays of tables, other
// servers, CRLF, with and without a final newline. The installed file parses
// (smol-toml) to the original plus mcp_servers.assent, and uninstall gives
// the original bytes back; a file that is not TOML is refused by line.
import fc from 'fast-check';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { codexMcpBlock, withCodexMcpBlock, withoutCodexMcpBlock } from '../../../../src/heads/agents/codexToml.js';

const server = { command: '/usr/bin/node', args: ['/srv/assent/dist/bin/assent.js', 'mcp'] };

const value = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.constantFrom("'C:\\literal'", '"tab\\there"', '"ünï \\u00e9"', '"""\nmulti\n# not a comment\n[not.a.table]\n"""', "'''\nraw [x]\n'''"),
  fc.integer().map(String),
  fc.constantFrom('1_000', '0x1F', '3.5e2', '-0.0', 'inf', 'nan', '9007199254740993'),
  fc.boolean().map(String),
  fc.constantFrom('1979-05-27', '1979-05-27T07:32:00Z', '07:32:00'),
  fc.constantFrom('[1, 2, 3]', '[ "a", \n  "b", # inside\n]', '{ a = 1, b = "x" }', '[]', '[[1], ["x"]]'),
);
const spacing = fc.constantFrom(' = ', '=', '   =\t', ' =  ');
const trailing = fc.constantFrom('', '', '  # a remark', '\t#x', ' # [mcp_servers.assent] in a comment');
const filler = fc.constantFrom('', '# a comment line', '   # indented comment', '#', '');

/** Lines of one section: unique keys (k0, k1, … in this section), comments and blank lines between them. */
const section = fc.array(fc.tuple(value, spacing, trailing, filler), { maxLength: 4 }).map((pairs) => pairs.flatMap(([v, eq, tail, fill], i) => [`k${i}${eq}${v}${tail}`, ...(fill === '' ? [] : [fill])]));

const header = fc.constantFrom('[model_providers.local]', '[ profiles . "fast one" ]', '[[skills]]', '[mcp_servers.fs]', '[mcp_servers."git server"]', '[projects."/w"]', '[features]');

const configArb = fc
  .record({
    lead: fc.array(filler, { maxLength: 2 }),
    root: section,
    tables: fc.uniqueArray(fc.tuple(header, section, trailing), { maxLength: 4, selector: ([h, body]) => (h === '[[skills]]' ? `${h}${body.join()}` : h) }),
    eol: fc.constantFrom('\n', '\r\n'),
    finalNewline: fc.constantFrom('', 'eol', 'eol eol'),
  })
  .map(({ lead, root, tables, eol, finalNewline }) => {
    const lines = [...lead, ...root, ...tables.flatMap(([h, body, tail]) => [`${h}${tail}`, ...body])];
    const text = lines.join(eol);
    if (text === '') return '';
    return finalNewline === '' ? text : finalNewline === 'eol' ? `${text}${eol}` : `${text}${eol}${eol}`;
  })
  .filter((text) => {
    try {
      parse(text, { integersAsBigInt: 'asNeeded' });
      return true;
    } catch {
      return false; // e.g. a comment line that swallowed no key, or [[skills]] repeated with the same key: rare, and not TOML.
    }
  });

/** A parsed file as plain objects, to compare contents. */
const plain = (text: string): unknown => JSON.parse(JSON.stringify(parse(text, { integersAsBigInt: 'asNeeded' }), (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)));

describe('R-HOOK-7 assent\'s block on generated config.toml files', () => {
  it('install adds exactly mcp_servers.assent, a second install changes nothing, uninstall gives back the bytes', () => {
    fc.assert(
      fc.property(configArb, (text) => {
        const installed = withCodexMcpBlock(text, server, 'config.toml');
        const before = plain(text) as Record<string, unknown>;
        const after = plain(installed) as { mcp_servers?: Record<string, unknown> };
        expect(after.mcp_servers?.['assent']).toEqual(server);
        const servers = { ...(before['mcp_servers'] as Record<string, unknown> | undefined), assent: server };
        expect(after).toEqual({ ...before, mcp_servers: servers });
        expect(installed.startsWith(text.replace(/\r?\n$/, ''))).toBe(true);
        if (text.includes('\r\n')) expect(installed.slice(text.length)).not.toMatch(/(^|[^\r])\n/);
        expect(withCodexMcpBlock(installed, server, 'config.toml')).toBe(installed);
        expect(withoutCodexMcpBlock(installed, 'config.toml')).toBe(text);
      }),
      { numRuns: Number(process.env.PROP_RUNS ?? 200) },
    );
  });

  it('any path, in any script, is written so that the file reads it back exactly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), fc.array(fc.string({ unit: 'binary', maxLength: 6 }), { maxLength: 3 }), (command, args) => {
        const installed = withCodexMcpBlock('model = "x"\n', { command, args }, 'config.toml');
        expect(plain(installed)).toEqual({ model: 'x', mcp_servers: { assent: { command, args } } });
      }),
      { numRuns: 300 },
    );
  });

  it('a path TOML cannot hold (a lone surrogate) is refused, not written', () => {
    expect(() => withCodexMcpBlock('', { command: '/usr/bin/node\ud800', args: [] }, 'config.toml')).toThrow(/config\.toml would not be valid TOML with assent's table added/);
  });

  it('a file that is not TOML is refused, naming the file and the line, before and after install', () => {
    const broken = 'model = "x"\n[tui]\nnotifications = \n';
    expect(() => withCodexMcpBlock(broken, server, '/home/u/.codex/config.toml')).toThrow(/\/home\/u\/\.codex\/config\.toml is not valid TOML \(line 3, column \d+: .+\); Codex cannot read it either/);
    const installed = withCodexMcpBlock('model = "x"\n', server, 'config.toml');
    expect(() => withoutCodexMcpBlock(`${installed}[tui\n`, 'config.toml')).toThrow(/config\.toml is not valid TOML \(line 8, column \d+: .*\)/);
    // A key the user wrote after the block belongs to assent's table; without the block it would repeat one of the root's.
    expect(() => withoutCodexMcpBlock(`${installed}model = "again"\n`, 'config.toml')).toThrow(/config\.toml would not be valid TOML with assent's table removed/);
    // A table defined twice, once by the user after assent's block: the edit that would leave it is refused too.
    expect(() => withCodexMcpBlock(`${installed}[mcp_servers.assent.env]\nA = "1"\n`, server, 'config.toml')).toThrow(/already defines an MCP server named "assent"/);
  });

  it('a file without a final newline keeps having none, and gets its bytes back', () => {
    const text = '# mine\nmodel = "gpt-5"';
    const installed = withCodexMcpBlock(text, server, 'config.toml');
    expect(installed).toBe(`${text}\n\n${codexMcpBlock(server).replace(/\n$/, '')}`);
    expect(withoutCodexMcpBlock(installed, 'config.toml')).toBe(text);
    expect(withCodexMcpBlock(installed, { ...server, command: '/opt/node' }, 'config.toml').endsWith('# <<< assent')).toBe(true);
  });
});
