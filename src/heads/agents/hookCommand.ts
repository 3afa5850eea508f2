// The command line an agent runs as assent's hook, and how to tell assent's
// entries from everyone else's. Hooks run through a shell, so every path is
// double-quoted with the shell's special characters escaped; the node binary
// and the entry are absolute, so the hook never depends on the agent's PATH.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentId } from './agentTargets.js';

/** The absolute paths of this assent: the node that runs it and its two entry files. */
export interface AssentInstallation {
  node: string;
  /** dist/bin/assent-hook.js: the thin hook entry (R-HOOK-8). */
  hookEntry: string;
  /** dist/bin/assent.js: the CLI, for `assent mcp`. */
  cliEntry: string;
}

function realpathOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/** The installation this code runs from: dist/heads/agents/ → dist/bin/. Symlinks (npm link) are resolved. */
export function thisInstallation(): AssentInstallation {
  const binDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin');
  return {
    node: realpathOr(process.execPath),
    hookEntry: realpathOr(path.resolve(binDir, 'assent-hook.js')),
    cliEntry: realpathOr(path.resolve(binDir, 'assent.js')),
  };
}

/** A double-quoted shell word: inside double quotes only `"`, `\`, `$` and backtick are special. */
export function doubleQuote(value: string): string {
  return `"${value.replace(/["\\$`]/g, (c) => `\\${c}`)}"`;
}

/**
 * `"<node>" "<hook entry>" <agent> [--after] --timeout <seconds>`, the command
 * written into the agent's settings: the timeout is the agent's own for this
 * entry, so the hook answers before the agent gives up on it (R-HOOK-11).
 */
export function hookCommand(installation: AssentInstallation, agent: AgentId, after: boolean, timeoutSeconds: number): string {
  return `${doubleQuote(installation.node)} ${doubleQuote(installation.hookEntry)} ${agent}${after ? ' --after' : ''} --timeout ${timeoutSeconds}`;
}

/** The MCP server entry for the gateway: no shell is involved, so plain arguments. */
export function mcpServerCommand(installation: AssentInstallation): { command: string; args: string[] } {
  return { command: installation.node, args: [installation.cliEntry, 'mcp'] };
}

/**
 * Splits a command line into words the way a POSIX shell would for the forms a
 * hook command takes: bare words, '…' and "…" (with \-escapes); undefined when
 * it uses anything else (expansions, operators, redirections), since then
 * nobody can say statically what it runs.
 */
export function splitCommandWords(command: string): string[] | undefined {
  const words: string[] = [];
  let i = 0;
  while (i < command.length) {
    while (command[i] === ' ' || command[i] === '\t') i += 1;
    if (i >= command.length) break;
    let word = '';
    while (i < command.length && command[i] !== ' ' && command[i] !== '\t') {
      const c = command[i] as string;
      if (c === "'") {
        const end = command.indexOf("'", i + 1);
        if (end < 0) return undefined;
        word += command.slice(i + 1, end);
        i = end + 1;
      } else if (c === '"') {
        i += 1;
        for (;;) {
          if (i >= command.length) return undefined;
          const d = command[i] as string;
          if (d === '"') break;
          if (d === '$' || d === '`') return undefined;
          if (d === '\\' && i + 1 < command.length && '"\\$`\n'.includes(command[i + 1] as string)) {
            word += command[i + 1];
            i += 2;
          } else {
            word += d;
            i += 1;
          }
        }
        i += 1;
      } else if (c === '\\' && i + 1 < command.length) {
        word += command[i + 1];
        i += 2;
      } else if (/[|&;<>()$`*?[\]{}~#\n]/.test(c)) {
        return undefined;
      } else {
        word += c;
        i += 1;
      }
    }
    words.push(word);
  }
  return words;
}

/** What an assent hook command runs, as read back from a settings file. */
export interface ParsedHookCommand {
  node: string;
  hookEntry: string;
  agent: string;
  after: boolean;
  /** The `--timeout` the command carries, in seconds; undefined when it has none (an older install). */
  timeoutSeconds?: number;
}

/** Reads `<node> <…/assent-hook.js> <agent> [--after] [--timeout N]`; undefined for any other shape. */
export function parseHookCommand(command: string): ParsedHookCommand | undefined {
  const words = splitCommandWords(command);
  if (words === undefined || words.length < 3) return undefined;
  const [node, hookEntry, agent, ...rest] = words as [string, string, string, ...string[]];
  if (path.basename(hookEntry) !== 'assent-hook.js') return undefined;
  let after = false;
  let timeoutSeconds: number | undefined;
  for (let i = 0; i < rest.length; i += 1) {
    const word = rest[i] as string;
    if (word === '--after' && !after) after = true;
    else if (word === '--timeout' && timeoutSeconds === undefined && /^[1-9][0-9]{0,5}$/.test(rest[i + 1] ?? '')) {
      timeoutSeconds = Number(rest[i + 1]);
      i += 1;
    } else return undefined;
  }
  return timeoutSeconds === undefined ? { node, hookEntry, agent, after } : { node, hookEntry, agent, after, timeoutSeconds };
}

/**
 * Whether a hook command is assent's: it runs an `assent-hook.js` entry or
 * `assent hook …`. Only such entries are ever changed or removed.
 */
export function isAssentHookCommand(command: string): boolean {
  return /assent-hook\.js\b/.test(command) || /(?:^|[\s/"'])assent(?:\.js)?["']?\s+hook(?:\s|$)/.test(command);
}
