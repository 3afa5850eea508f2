// CLI entry: parses argv, runs one command, returns the exit code. Only this
// layer decides exit codes (STYLE.md). Commands are registered by one module
// per family under ./commands.
import type { Command } from 'commander';
import { VERSION } from '../../version.js';
import { ExitWith, reportFailure } from './output.js';

type Registrar = (program: Command) => void;

/**
 * Command families, loaded lazily: `assent pending` must start in about the
 * time of `node -e 0` (SPEC §14), so a command loads only its own family and
 * never the MCP SDK, SQLite or the schemas it does not use.
 */
const FAMILIES: Record<string, () => Promise<Registrar>> = {
  action: async () => (await import('./commands/action.js')).registerActionCommands,
  daemon: async () => (await import('./commands/daemon.js')).registerDaemonCommands,
  config: async () => (await import('./commands/config.js')).registerConfigCommands,
  approvals: async () => (await import('./commands/approvals.js')).registerApprovalCommands,
  rules: async () => (await import('./commands/rules.js')).registerRuleCommands,
  mcp: async () => (await import('./commands/mcp.js')).registerMcpCommands,
  demo: async () => (await import('./commands/demo.js')).registerDemoCommands,
  web: async () => (await import('./commands/web.js')).registerWebCommands,
  operations: async () => (await import('./commands/operations.js')).registerOperationsCommand,
  proofs: async () => (await import('./commands/proofs.js')).registerProofCommands,
  agentSetup: async () => (await import('./commands/agentSetup.js')).registerAgentSetupCommands,
  hook: async () => (await import('./commands/hook.js')).registerHookCommand,
  init: async () => (await import('./commands/init.js')).registerInitCommand,
  policy: async () => (await import('./commands/policy.js')).registerPolicyCommands,
  confine: async () => (await import('./commands/confine.js')).registerConfineCommand,
  journal: async () => (await import('./commands/repair.js')).registerJournalCommands,
};

/** Which family serves a first word; unknown words load every family (help, suggestions). */
const FAMILY_OF: Record<string, string> = {
  action: 'action',
  daemon: 'daemon',
  config: 'config',
  mcp: 'mcp',
  demo: 'demo',
  pending: 'approvals',
  approve: 'approvals',
  deny: 'approvals',
  watch: 'approvals',
  sessions: 'approvals',
  rules: 'rules',
  audit: 'approvals',
  web: 'web',
  token: 'web',
  operations: 'operations',
  proofs: 'proofs',
  effects: 'proofs',
  install: 'agentSetup',
  uninstall: 'agentSetup',
  doctor: 'agentSetup',
  hook: 'hook',
  init: 'init',
  policy: 'policy',
  confine: 'confine',
  journal: 'journal',
};

export async function buildProgram(firstWord?: string): Promise<Command> {
  const { Command } = await import('commander');
  const program = new Command('assent')
    .description('Put a person between an AI agent and the actions it wants to take.')
    .version(VERSION)
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  const family = firstWord === undefined ? undefined : FAMILY_OF[firstWord];
  const names = family === undefined ? Object.keys(FAMILIES) : [family];
  for (const name of names) {
    const load = FAMILIES[name];
    if (load !== undefined) (await load())(program);
  }
  return program;
}

/** Rewrites the compatibility spelling `--action-exec-confirm P R` to `action confirm P R`. */
function rewriteAliases(argv: string[]): string[] {
  if (argv[0] === '--action-exec-confirm') return ['action', 'confirm', ...argv.slice(1)];
  return argv;
}

export async function main(argv: string[]): Promise<number> {
  const args = rewriteAliases(argv);
  // What commander prints for the version, without loading every family to find no command in them.
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const plainPending = args[0] === 'pending' ? (await import('./commands/pending.js')).plainPendingArgs(args) : undefined;
  if (plainPending !== undefined) {
    const { runPending } = await import('./commands/pending.js');
    return runPending(plainPending.selector, { json: plainPending.json });
  }
  try {
    const program = await buildProgram(args[0]);
    await program.parseAsync(args, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof ExitWith) return error.code;
    const { CommanderError } = await import('commander');
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 64;
    return reportFailure(error, { json: argv.includes('--json') });
  }
}
