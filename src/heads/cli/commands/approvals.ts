import type { Command } from 'commander';

/** Registers the `approvals` commands on the program. */
export function registerApprovalCommands(_program: Command): void {}
