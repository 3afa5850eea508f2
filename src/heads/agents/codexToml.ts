// assent's MCP server in Codex's config.toml, edited as text: one table between
// two marker comments, appended at the end, replaced or removed in place. The
// rest of the file is never parsed or rewritten, so its comments and layout
// stay exactly as they were.
import { AssentError } from '../../core/base/errors.js';
import { MCP_SERVER_NAME } from './assentEntries.js';

export const TOML_BEGIN = '# >>> assent: MCP gateway (written by `assent install codex --mcp`; `assent uninstall codex --mcp` removes it)';
export const TOML_END = '# <<< assent';

/** A TOML basic string: JSON's escapes are a subset TOML accepts (non-ASCII kept as \u escapes). */
function tomlString(value: string): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
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

/** Whether text outside assent's block defines an `assent` MCP server itself, which a second table would collide with. */
function definesAssentElsewhere(text: string): boolean {
  const name = `(?:${MCP_SERVER_NAME}|"${MCP_SERVER_NAME}"|'${MCP_SERVER_NAME}')`;
  return new RegExp(`^\\s*\\[\\s*mcp_servers\\s*\\.\\s*${name}\\s*[\\].]|^\\s*mcp_servers\\s*\\.\\s*${name}\\s*[.=]|^\\s*${name}\\s*=\\s*\\{`, 'm').test(text);
}

/**
 * The config.toml text with assent's block: unchanged when the block is there
 * as it should be, replaced in place when it differs, appended otherwise (after
 * a blank line). Refuses a file that defines an `assent` server of its own.
 */
export function withCodexMcpBlock(text: string, server: { command: string; args: string[] }, file: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const block = codexMcpBlock(server, eol);
  const span = findCodexMcpBlock(text, file);
  const outside = span === undefined ? text : text.slice(0, span.start) + text.slice(span.end);
  if (definesAssentElsewhere(outside)) {
    throw new AssentError('conflict', `${file} already defines an MCP server named "${MCP_SERVER_NAME}"; remove or rename that table, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  if (/^\s*mcp_servers\s*=/m.test(outside)) {
    throw new AssentError('conflict', `${file} sets mcp_servers as an inline table, which TOML does not let another table extend; write each server as its own [mcp_servers.NAME] table, then run this again. Nothing was changed`, {
      details: { path: file },
    });
  }
  if (span !== undefined) return text.slice(0, span.start) + block + text.slice(span.end);
  if (text === '') return block;
  const separator = text.endsWith('\n') ? eol : `${eol}${eol}`;
  return `${text}${separator}${block}`;
}

/** The config.toml text without assent's block (and the blank line install put before it). */
export function withoutCodexMcpBlock(text: string, file: string): string {
  const span = findCodexMcpBlock(text, file);
  if (span === undefined) return text;
  let start = span.start;
  const before = text.slice(0, start);
  const blank = /(?:\r?\n)(\r?\n)$/.exec(before);
  if (blank !== null && span.end === text.length) start -= (blank[1] as string).length;
  return text.slice(0, start) + text.slice(span.end);
}
