// What operations get from the daemon process they run in. The daemon head
// (heads/daemon/daemonMain.ts) builds it; operations only read it, so they need
// no import of any head.
import type { StatePaths } from '../state/statePaths.js';
import type { Logger } from '../service/logger.js';

/** What operations and services get from the daemon they run in. */
export interface DaemonContext {
  paths: StatePaths;
  logger: Logger;
  /** Wall-clock ms when the daemon started. */
  startedAt: number;
  /**
   * The principal of local socket calls (CLI, watch) and the owner of this host's
   * agent sessions: `<os user>@<host name>` (R-TEAM-3). The daemon's composition
   * root sets it once, when the configuration (and so `host.name`) is pinned,
   * before any connection is accepted.
   */
  principal: string;
  /** Runs on SIGINT/SIGTERM/daemon.shutdown before the socket closes (e.g. deny pending approvals, flush audit). */
  onShutdown(hook: () => Promise<void> | void): void;
  requestShutdown(reason?: string): void;
  /** Sections merged into `daemon.status`, each computed when asked. */
  status: Record<string, () => unknown>;
  /** Open socket connections right now. */
  connections(): number;
}
