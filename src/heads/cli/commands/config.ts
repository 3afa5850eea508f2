import type { Command } from 'commander';

/** Registers the `config` commands on the program. */
export function registerConfigCommands(_program: Command): void {}
