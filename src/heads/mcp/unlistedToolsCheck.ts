// What a gateway session reports to the daemon, whenever it or the connection
// changes: policy keys that name a tool no upstream lists (hardening 5; each also
// warned once on stderr), and the tool names the gateway lists to its client, by
// which the daemon knows a hook call to this gateway from any other MCP call (R-HOOK-13).
import { errorText } from '../../core/base/errors.js';
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
  /** The names the client is offered changed: remembers them and reports again. */
  toolsOffered(tools: readonly string[]): void;
  /** Checks again (a new snapshot or a new connection); never throws. */
  check(): void;
}

export function createUnlistedToolsCheck(options: UnlistedToolsCheckOptions): UnlistedToolsCheck {
  const { sessionId, logger } = options;
  const listedTools = new Map<string, readonly string[]>();
  let offered: string[] = [];
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
      const report = { sessionId, policyToolsNotListed: entries, tools: offered };
      const text = JSON.stringify(report);
      // A new daemon connection knows nothing of this session: it hears the report again, unless there is nothing to say.
      if (text === reportedText && (reportedTo === attached.client || (entries.length === 0 && offered.length === 0))) return;
      reportedText = text;
      reportedTo = attached.client;
      attached.client
        .call('sessions.report', report)
        .catch((error: unknown) => logger.debug('could not report this session to the daemon', { error: errorText(error) }));
    } catch (error) {
      logger.warn('could not check policy.tools against the upstream tools', { error: errorText(error) });
    }
  };

  // An upstream's list and the names it adds usually arrive together: one report for both.
  let scheduled = false;
  const scheduleCheck = (): void => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      checkUnlistedTools();
    });
  };

  return {
    toolsListed(server, tools) {
      listedTools.set(server, [...tools]);
      scheduleCheck();
    },
    toolsOffered(tools) {
      offered = [...new Set(tools)].sort();
      scheduleCheck();
    },
    check: checkUnlistedTools,
  };
}
