// assent's MCP server in Codex's config.toml, edited as text: one table between
// two marker comments, appended at the end, replaced or removed in place. The
// rest of the file is never rewritten, so its comments and layout stay exactly
// as they were; smol-toml reads the file before and after each edit, so a file
// Codex could not read is refused and an edit that would change the meaning of
// anything but assent's table is never written.
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml, TomlError, type TomlTable } from 'smol-toml';
import { AssentError } from '../../core/base/errors.js';
import { MCP_SERVER_NAME } from './assentEntries.js';

export const TOML_BEGIN = '# >>> assent: MCP gateway (written by `assent install codex --mcp`; `assent uninstall codex --mcp` removes it)';
export const TOML_END = '# <<< assent';

/**
 * A TOML basic string: JSON's escapes are a subset TOML accepts; every
 * character past ASCII is written as a \u or \U escape of its code point.
 * A lone surrogate, which TOML cannot hold, comes out as JSON's \uD800 escape
 * and makes the block fail the parse that checks every edit.
 */
function tomlString(value: string): string {
  let text = '';
  for (const char of JSON.stringify(value)) {
    const code = char.codePointAt(0) as number;
    text += code < 0x7f ? char : code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return text;
}

/** The marked block, lines joined with `eol`, ending with one. */
export function codexMcpBlock(server: { command: string; args: string[] }, eol = '\n'): string {
  return [TOML_BEGIN, `[mcp_servers.${MCP_SERVER_NAME}]`, `command = ${tomlString(server.command)}`, `args = [${server.args.map(tomlString).join(', ')}]`, TOML_END, ''].join(eol);
}

interface BlockSpan {
  /** Offset of the first character of the begin marker line. */
  start: number;
  /** Offset just after the end marker line's line ending. */
  end: number;
}

/** Where assent's block is; undefined when there is none. Throws when a marker is there without its partner. */
export function findCodexMcpBlock(text: string, file: string): BlockSpan | undefined {
  const lines = text.split(/(?<=\n)/);
  let offset = 0;
  let start: number | undefined;
  for (const line of lines) {
    const bare = line.replace(/\r?\n$/, '');
    if (bare === TOML_BEGIN) {
      if (start !== undefined) break;
      start = offset;
    } else if (bare === TOML_END && start !== undefined) {
      return { start, end: offset + line.length };
    }
    offset += line.length;
  }
  if (start !== undefined || lines.some((line) => line.replace(/\r?\n$/, '') === TOML_END)) {
    throw new AssentError('invalid_input', `${file} has an assent marker comment without its partner; restore or remove the lines between "${TOML_BEGIN.slice(0, 20)}…" and "${TOML_END}", then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  return undefined;
}

/** How smol-toml reads config.toml here: integers beyond 2^53 as BigInt, so a valid file is never refused for one. */
const TOML_OPTIONS = { integersAsBigInt: 'asNeeded' } as const;

/**
 * The parsed config.toml. A file that is not TOML is refused, naming it and
 * the line: Codex cannot read it either, and assent does not append to a
 * file whose meaning it cannot check.
 */
export function parseCodexConfig(text: string, file: string): TomlTable {
  try {
    return parseToml(text, TOML_OPTIONS);
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]?.replace(/^Invalid TOML document:\s*/, '') ?? 'not TOML';
    const line = error instanceof TomlError ? error.line : undefined;
    throw new AssentError('invalid_input', `${file} is not valid TOML (${line === undefined ? '' : `line ${line}, column ${(error as TomlError).column}: `}${reason}); Codex cannot read it either. Fix it, then run this again. Nothing was changed`, {
      details: { path: file, ...(line === undefined ? {} : { line }) },
    });
  }
}

/** A parsed value as plain objects (smol-toml's tables have no prototype), so that isDeepStrictEqual compares contents only. */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
}

/** The parsed file without `mcp_servers.assent`, and without `mcp_servers` when nothing else is in it. */
function withoutAssentServer(config: TomlTable): TomlTable {
  const servers = config['mcp_servers'];
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers) || servers instanceof Date) return config;
  const { [MCP_SERVER_NAME]: _assent, ...others } = servers as TomlTable;
  const { mcp_servers: _servers, ...rest } = config;
  return Object.keys(others).length === 0 ? rest : { ...rest, mcp_servers: others };
}

/** The `mcp_servers.assent` table of a parsed file; undefined when there is none. */
function assentServer(config: TomlTable): unknown {
  const servers = config['mcp_servers'];
  return servers !== null && typeof servers === 'object' && !Array.isArray(servers) ? (servers as TomlTable)[MCP_SERVER_NAME] : undefined;
}

/**
 * Checks, with smol-toml, that an edit of config.toml means what it should:
 * the edited text parses, holds `server` as `mcp_servers.assent` (or no such
 * table, for a removal), and everything else in it means what `rest` does.
 */
function checkEdit(edited: string, file: string, rest: TomlTable, server: { command: string; args: string[] } | undefined): void {
  let after: TomlTable;
  try {
    after = parseToml(edited, TOML_OPTIONS);
  } catch (error) {
    throw new AssentError('conflict', `${file} would not be valid TOML with assent's table ${server === undefined ? 'removed' : 'added'} (${(error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''}); fix the file by hand (docs/agents.md shows the table), then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  const found = assentServer(after);
  const same = (server === undefined ? found === undefined : isDeepStrictEqual(plain(found), { ...server })) && isDeepStrictEqual(plain(withoutAssentServer(after)), plain(withoutAssentServer(rest)));
  if (!same) {
    throw new AssentError('conflict', `${file} would not mean what it should with assent's table ${server === undefined ? 'removed' : 'added'} (the rest of the file changes meaning); fix the file by hand (docs/agents.md shows the table), then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
}

/**
 * The config.toml text with assent's block: unchanged when the block is there
 * as it should be, replaced in place when it differs, appended otherwise (after
 * a blank line; a file without a final newline keeps having none, so that
 * removing the block gives its bytes back). Refuses a file that is not TOML or
 * defines an `assent` server of its own, and checks what the edit leaves.
 */
export function withCodexMcpBlock(text: string, server: { command: string; args: string[] }, file: string): string {
  parseCodexConfig(text, file);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const span = findCodexMcpBlock(text, file);
  const outside = span === undefined ? text : text.slice(0, span.start) + text.slice(span.end);
  const rest = parseCodexConfig(outside, file);
  if (assentServer(rest) !== undefined) {
    throw new AssentError('conflict', `${file} already defines an MCP server named "${MCP_SERVER_NAME}"; remove or rename that table, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  if (/^\s*mcp_servers\s*=/m.test(outside)) {
    throw new AssentError('conflict', `${file} sets mcp_servers as an inline table, which TOML does not let another table extend; write each server as its own [mcp_servers.NAME] table, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  const block = codexMcpBlock(server, eol);
  let edited: string;
  if (span !== undefined) {
    const atEnd = span.end === text.length && !text.endsWith('\n');
    edited = text.slice(0, span.start) + (atEnd ? block.slice(0, -eol.length) : block) + text.slice(span.end);
  } else if (text === '') edited = block;
  else if (text.endsWith('\n')) edited = `${text}${eol}${block}`;
  else edited = `${text}${eol}${eol}${block.slice(0, -eol.length)}`;
  checkEdit(edited, file, rest, server);
  return edited;
}

/** The config.toml text without assent's block (and the blank line install put before it); the file must parse before and after. */
export function withoutCodexMcpBlock(text: string, file: string): string {
  const span = findCodexMcpBlock(text, file);
  if (span === undefined) return text;
  const before = parseCodexConfig(text, file);
  let start = span.start;
  const blank = /(\r?\n)(\r?\n)$/.exec(text.slice(0, start));
  if (blank !== null && span.end === text.length) {
    // The blank line install put before a block at the end goes; both line endings, when the block ends the file
    // without one: install appended it so to a file that had no final newline.
    start -= text.endsWith('\n') ? (blank[2] as string).length : blank[0].length;
  }
  const edited = text.slice(0, start) + text.slice(span.end);
  checkEdit(edited, file, before, undefined);
  return edited;
}
