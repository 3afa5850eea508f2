import type { Command } from 'commander';

/** Registers the `action` commands on the program. */
export function registerActionCommands(_program: Command): void {}
