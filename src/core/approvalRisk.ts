// The risk line of an approval (R-REM-5): a few plain words a person reads
// before deciding — destructive, shell, write outside cwd, network. A hint for
// the reviewer, never a policy input: what runs is decided by the rules alone.
// Shell commands are judged on their parsed words (core/shellCommand.ts).
import { commandBaseName, type SimpleCommand } from './shellCommand.js';

export type RiskFlag = 'destructive' | 'shell' | 'write outside cwd' | 'network';

/** The order flags are shown in. */
export const RISK_ORDER: readonly RiskFlag[] = ['destructive', 'shell', 'write outside cwd', 'network'];

/** Commands that delete or overwrite what they are given. */
const DESTRUCTIVE_COMMANDS: ReadonlySet<string> = new Set(['rm', 'rmdir', 'unlink', 'shred', 'dd', 'truncate', 'wipefs', 'mkfs', 'fdisk', 'sfdisk', 'parted', 'mkswap']);
/** Subcommands that throw work away. */
const DESTRUCTIVE_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  git: ['clean', 'reset', 'restore', 'filter-branch', 'filter-repo'],
  docker: ['rm', 'rmi'],
  kubectl: ['delete', 'drain'],
  terraform: ['destroy'],
};
/** Commands whose work is talking to other machines. */
const NETWORK_COMMANDS: ReadonlySet<string> = new Set(['curl', 'wget', 'ssh', 'scp', 'sftp', 'rsync', 'nc', 'ncat', 'netcat', 'socat', 'telnet', 'ftp', 'http', 'https', 'xh', 'gh', 'aria2c']);
/** Subcommands that reach a remote (a registry, a git remote, a cluster). */
const NETWORK_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  git: ['push', 'pull', 'fetch', 'clone', 'ls-remote', 'submodule'],
  npm: ['install', 'i', 'ci', 'add', 'publish', 'update', 'exec'],
  npx: ['*'],
  pnpm: ['install', 'i', 'add', 'publish', 'update', 'dlx'],
  yarn: ['install', 'add', 'publish', 'dlx'],
  pip: ['install', 'download'],
  pip3: ['install', 'download'],
  cargo: ['install', 'publish', 'fetch'],
  docker: ['pull', 'push', 'login'],
  kubectl: ['*'],
};

/** The first word after the command name that is not an option. */
function subcommandOf(command: SimpleCommand): string | undefined {
  for (const word of command.words.slice(1)) {
    if (!word.static) return undefined;
    if (!word.text.startsWith('-')) return word.text;
  }
  return undefined;
}

function hasWord(command: SimpleCommand, ...texts: string[]): boolean {
  return command.words.some((word) => word.static && texts.includes(word.text));
}

/** What one simple command risks, from its parsed words. */
export function commandRisks(command: SimpleCommand): RiskFlag[] {
  const name = commandBaseName(command.words[0]);
  if (name === undefined) return [];
  const flags: RiskFlag[] = [];
  const sub = subcommandOf(command);
  const listed = (table: Readonly<Record<string, readonly string[]>>): boolean => {
    const subs = table[name];
    return subs !== undefined && (subs.includes('*') || (sub !== undefined && subs.includes(sub)));
  };
  const forcePush = name === 'git' && sub === 'push' && hasWord(command, '--force', '-f', '--force-with-lease', '--delete', '-d', '--mirror');
  if (DESTRUCTIVE_COMMANDS.has(name) || name.startsWith('mkfs.') || listed(DESTRUCTIVE_SUBCOMMANDS) || forcePush) flags.push('destructive');
  if (name === 'find' && hasWord(command, '-delete')) flags.push('destructive');
  if (NETWORK_COMMANDS.has(name) || listed(NETWORK_SUBCOMMANDS)) flags.push('network');
  return flags;
}

/** Flags in their display order, each once. */
export function orderRisks(flags: Iterable<RiskFlag>): RiskFlag[] {
  const set = new Set(flags);
  return RISK_ORDER.filter((flag) => set.has(flag));
}

/**
 * The risk of an agent action: its kind (a shell command, a fetch, an MCP tool
 * a hook sees without annotations, R-POL-3) and what its rules found (`found`:
 * the commands' own risks and writes that land outside the cwd).
 */
export function agentActionRisk(kind: string, found: readonly RiskFlag[] = []): RiskFlag[] {
  const flags: RiskFlag[] = [...found];
  if (kind === 'shell') flags.push('shell');
  if (kind === 'fetch') flags.push('network');
  if (kind === 'mcp') flags.push('destructive');
  return orderRisks(flags);
}
