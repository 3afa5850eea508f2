// The agent set-up family (SPEC §17, R-HOOK-7): `assent install`, `assent
// uninstall` and `assent doctor`, which put assent's hooks into an agent's
// settings, take them out again, and check that they work.
import type { Command } from 'commander';
import { registerDoctorCommand } from './doctor.js';
import { registerInstallCommand } from './install.js';
import { registerUninstallCommand } from './uninstall.js';

export function registerAgentSetupCommands(program: Command): void {
  registerInstallCommand(program);
  registerUninstallCommand(program);
  registerDoctorCommand(program);
}
