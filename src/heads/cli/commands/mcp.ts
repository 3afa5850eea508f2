import type { Command } from 'commander';

/** Registers the `mcp` commands on the program. */
export function registerMcpCommands(_program: Command): void {}
