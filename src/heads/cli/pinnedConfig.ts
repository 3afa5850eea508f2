// What the CLI says when it reads the configuration the daemon pinned while
// config.json on disk says something else (R-CFG-4): a newcomer who edits the
// file after the first start must learn that `assent config reload` applies it.
import { connectForCli } from '../daemon/clientConnection.js';

/** The `config` section of `daemon.status`. */
export interface PinnedConfigStatus {
  path: string;
  pinnedRevision: string;
  fileRevision?: string;
  changedOnDisk: boolean;
  /** Set while the daemon runs fail-closed: the configuration confirmed before no longer validates. */
  confirmedInvalid?: { message: string };
  /** Settings confirmed by a reload that the daemon uses only from its next start. */
  fromNextStart?: string[];
}

/** Reads the `config` section of a `daemon.status` result; undefined when it is missing or malformed. */
export function pinnedConfigStatus(status: Record<string, unknown>): PinnedConfigStatus | undefined {
  const section = status['config'];
  if (section === null || typeof section !== 'object') return undefined;
  const config = section as Record<string, unknown>;
  if (typeof config['path'] !== 'string' || typeof config['pinnedRevision'] !== 'string' || typeof config['changedOnDisk'] !== 'boolean') return undefined;
  const result: PinnedConfigStatus = { path: config['path'], pinnedRevision: config['pinnedRevision'], changedOnDisk: config['changedOnDisk'] };
  if (typeof config['fileRevision'] === 'string') result.fileRevision = config['fileRevision'];
  const next = config['fromNextStart'];
  if (Array.isArray(next) && next.every((key) => typeof key === 'string')) result.fromNextStart = next;
  const invalid = config['confirmedInvalid'];
  if (invalid !== null && typeof invalid === 'object' && typeof (invalid as Record<string, unknown>)['message'] === 'string') {
    result.confirmedInvalid = { message: (invalid as Record<string, string>)['message'] ?? '' };
  }
  return result;
}

/**
 * The sentence every message that reads the pinned configuration appends when
 * the file differs from it: what differs and the one command that applies it.
 */
export function unconfirmedChangeNote(status: PinnedConfigStatus): string {
  if (status.confirmedInvalid !== undefined) {
    return `${status.confirmedInvalid.message}. \`assent config reload\` shows what applying ${status.path} changes (then restart your MCP client so it starts \`assent mcp\` again).`;
  }
  const missing = status.fileRevision === undefined ? ' (the file cannot be read now)' : '';
  return (
    `${status.path} has changed since the daemon pinned it${missing}; the daemon and \`assent mcp\` keep running the pinned version ` +
    'until you review and apply the change with `assent config reload` in your own terminal (then restart your MCP client so it starts `assent mcp` again).'
  );
}

/**
 * Asks the running daemon whether config.json differs from what it pinned.
 * Never starts a daemon and never fails: no answer means nothing to add.
 */
export async function fetchUnconfirmedChange(env: NodeJS.ProcessEnv = process.env): Promise<PinnedConfigStatus | undefined> {
  let client: Awaited<ReturnType<typeof connectForCli>> | undefined;
  try {
    client = await connectForCli({ env, autoSpawn: false, timeoutMs: 2000 });
    const status = pinnedConfigStatus(await client.call<Record<string, unknown>>('daemon.status', {}));
    return status?.changedOnDisk === true ? status : undefined;
  } catch {
    return undefined;
  } finally {
    client?.close();
  }
}
