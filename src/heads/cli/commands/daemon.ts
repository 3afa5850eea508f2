import type { Command } from 'commander';

/** Registers the `daemon` commands on the program. */
export function registerDaemonCommands(_program: Command): void {}
