// Who this host is (SPEC §20, R-TEAM-3): the random hostId of its state
// directory (identity.json), its label `host.name` (config; default the OS host
// name) and the principal of decisions made on it, `<os user>@<host name>`.
import { hostname, userInfo } from 'node:os';
import type { Config } from '../core/config/config.js';
import { localPrincipal } from '../core/config/hostConfig.js';
import { readIdentity, type StatePaths } from '../state/statePaths.js';

export interface HostIdentity {
  hostId: string;
  /** `host.name`, or the OS host name when the config leaves it out. */
  name: string;
  /** The OS user the daemon runs as: the only user that can reach its 0600 socket (besides root). */
  osUser: string;
  /** `<os user>@<host name>`: the principal of CLI and watch decisions and the owner of this host's agent sessions. */
  principal: string;
}

/** The label of this host: `host.name` from the configuration in force, else the operating system's host name. */
export function hostNameOf(config: Pick<Config, 'host'>, osHostname: () => string = hostname): string {
  if (config.host.name !== undefined) return config.host.name;
  const name = osHostname().trim();
  return name === '' ? 'localhost' : name;
}

/** The name of the OS user this process runs as; its uid when the user database has no name for it. */
export function osUserName(): string {
  try {
    const name = userInfo().username;
    if (name !== '') return name;
  } catch {
    // No passwd entry (e.g. a container with an arbitrary uid).
  }
  return typeof process.getuid === 'function' ? `uid${process.getuid()}` : 'user';
}

/** This host's identity for the configuration in force; identity.json must exist (ensureStateDir writes it). */
export function hostIdentityOf(paths: StatePaths, config: Pick<Config, 'host'>, osUser: string = osUserName()): HostIdentity {
  const name = hostNameOf(config);
  return { hostId: readIdentity(paths).hostId, name, osUser, principal: localPrincipal(osUser, name) };
}
