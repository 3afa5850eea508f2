// Policy keys that name a tool no upstream lists (hardening 5): each warned once on
// stderr, and the current set reported to the daemon whenever it or the connection changes.
import { errorText } from '../../core/errors.js';
import type { Logger } from '../../service/logger.js';
import type { DaemonClient } from '../daemon/rpcClient.js';
import type { Attachment } from './daemonAttachment.js';
import { describeUnlistedPolicyTool, policyToolsNotListed, type UnlistedPolicyTool } from './gate.js';

export interface UnlistedToolsCheckOptions {
  sessionId: string;
  logger: Logger;
  /** The attachment whose snapshot's `policy.tools` is checked; nothing is checked without one. */
  current: () => Attachment | undefined;
}

export interface UnlistedToolsCheck {
  /** An upstream listed its tools: remembers them and checks again. */
  toolsListed(server: string, tools: readonly string[]): void;
  /** Checks again (a new snapshot or a new connection); never throws. */
  check(): void;
}

export function createUnlistedToolsCheck(options: UnlistedToolsCheckOptions): UnlistedToolsCheck {
  const { sessionId, logger } = options;
  const listedTools = new Map<string, readonly string[]>();
  const warned = new Set<string>();
  let reportedText = '';
  let reportedTo: DaemonClient | undefined;
  const checkUnlistedTools = (): void => {
    try {
      const attached = options.current();
      if (attached === undefined) return;
      const entries: UnlistedPolicyTool[] = [];
      for (const [server, tools] of listedTools) entries.push(...policyToolsNotListed(attached.snapshot.tools.keys(), server, tools));
      for (const entry of entries) {
        const id = `${entry.key}\u0000${entry.listed.join('\u0000')}`;
        if (warned.has(id)) continue;
        warned.add(id);
        logger.warn(describeUnlistedPolicyTool(entry, attached.configPath), { key: entry.key, server: entry.server });
      }
      const text = JSON.stringify(entries);
      if (text === reportedText && (reportedTo === attached.client || entries.length === 0)) return;
      reportedText = text;
      reportedTo = attached.client;
      attached.client
        .call('sessions.report', { sessionId, policyToolsNotListed: entries })
        .catch((error: unknown) => logger.debug('could not report unlisted policy tools to the daemon', { error: errorText(error) }));
    } catch (error) {
      logger.warn('could not check policy.tools against the upstream tools', { error: errorText(error) });
    }
  };

  return {
    toolsListed(server, tools) {
      listedTools.set(server, [...tools]);
      checkUnlistedTools();
    },
    check: checkUnlistedTools,
  };
}
