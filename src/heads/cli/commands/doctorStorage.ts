// `assent doctor`'s look at the state directory's device (issue 35): whether it
// has room for the journal and the audit log, measured here, and, when a daemon
// runs, whether its writes there fail (an I/O error, a full disk it met first).
// While either holds, the daemon refuses every call; this says why and the fix.
import { existsSync } from 'node:fs';
import { DISK_RESERVE_BYTES, describeStorageFault, freeSpaceFault } from '../../../state/diskSpace.js';
import type { StatePaths } from '../../../state/statePaths.js';
import { DaemonClient } from '../../daemon/rpcClient.js';

export interface StorageReport {
  ok: boolean;
  home: string;
  /** The cause and the fix when not ok. */
  problem?: string;
  /** Who saw it: doctor measuring the device, or the daemon whose writes failed. */
  seenBy?: 'doctor' | 'daemon';
}

/** What a running daemon says of its writes; undefined when none answers quickly. */
async function daemonStorage(paths: StatePaths): Promise<{ ok?: unknown; cause?: unknown } | undefined> {
  let client: DaemonClient | undefined;
  try {
    client = await DaemonClient.connect({ socketPath: paths.socket, autoSpawn: false, timeoutMs: 1000 });
    const status = await client.call<Record<string, unknown>>('daemon.status', {});
    return status['storage'] as { ok?: unknown; cause?: unknown } | undefined;
  } catch {
    return undefined;
  } finally {
    client?.close();
  }
}

export async function checkStorage(paths: StatePaths): Promise<StorageReport> {
  if (!existsSync(paths.home)) return { ok: true, home: paths.home };
  const measured = freeSpaceFault(paths.home, DISK_RESERVE_BYTES);
  if (measured !== undefined) return { ok: false, home: paths.home, problem: describeStorageFault(measured), seenBy: 'doctor' };
  const daemon = await daemonStorage(paths);
  if (daemon?.ok === false && typeof daemon.cause === 'string') return { ok: false, home: paths.home, problem: daemon.cause, seenBy: 'daemon' };
  return { ok: true, home: paths.home };
}

/** The human line: fine, or the problem and that every call is refused until it is fixed. */
export function storageLine(report: StorageReport): string {
  if (report.ok) return `State directory ${report.home}: its device takes the journal and audit writes.`;
  return `State directory ${report.home}: the daemon refuses every call${report.seenBy === 'daemon' ? ' (its writes fail)' : ''}. ${report.problem ?? ''}`;
}
