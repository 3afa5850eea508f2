// `assent config reload` (R-CFG-4): shows how the policy on disk differs from the
// one the daemon pinned, and applies it only after a fresh code is typed at the
// operator's terminal, so an agent that edits config.json cannot widen its own
// policy unnoticed.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import { connectForCli } from '../../daemon/clientConnection.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';
import { requireInteractiveTerminal, requireTypedCode } from '../terminal.js';

interface ConfigStatus {
  path: string;
  pinnedRevision: string;
  fileRevision: string;
  changed: boolean;
  diff: string[];
  problems: { severity: string; path: string; message: string }[];
  confirmedInvalid?: { message: string };
}

const RELOAD_DEADLINE_MS = 60_000;

/**
 * A diff line made safe for the terminal. diffPolicy already escapes every
 * value it takes from the file, so its own `→` is the only non-ASCII text it
 * writes; that arrow is shown as is, everything else is escaped once more in
 * case a line came from anywhere else (R-TTY-3).
 */
export function diffLineForTerminal(line: string): string {
  return line.split(' → ').map(escapeText).join(' → ');
}

export function registerConfigReload(config: Command): void {
  config
    .command('reload')
    .description('Review the changes in config.json and apply them after typing a fresh code (needs your terminal)')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => {
      const client = await connectForCli().catch((error: unknown) => {
        throw new ExitWith(reportFailure(error, options));
      });
      try {
        const status = await client.call<ConfigStatus>('config.status', {});
        if (!status.changed) {
          if (options.json) printJsonOk({ applied: false, revision: status.pinnedRevision });
          else process.stdout.write(`Nothing to reload: the daemon already runs ${status.path} as it is on disk.\n`);
          return;
        }
        const errors = status.problems.filter((p) => p.severity === 'error');
        // Said first, also when the file itself still has errors: it is why every call is denied.
        if (status.confirmedInvalid !== undefined && !options.json) process.stderr.write(`Note: ${escapeText(status.confirmedInvalid.message)}.\n`);
        if (errors.length > 0) {
          throw new AssentError('config_invalid', `${status.path} has ${errors.length} error(s); run \`assent config check\` and fix them first`, {
            details: { problems: status.problems },
          });
        }
        requireInteractiveTerminal('`assent config reload`');
        const code = newApprovalCode((n) => randomBytes(n));
        const lines = status.diff.length > 0 ? status.diff : ['(no policy change; other settings differ)'];
        const since = status.confirmedInvalid === undefined ? 'since the daemon pinned it' : 'compared with the fail-closed configuration the daemon runs now';
        process.stderr.write(`Changes in ${escapeText(status.path)} ${since}:\n${lines.map((l) => `  ${diffLineForTerminal(l)}`).join('\n')}\n`);
        await requireTypedCode(code, {
          deadlineMs: RELOAD_DEADLINE_MS,
          consequence: 'the daemon keeps its current policy',
          prompt: `Type ${code} to apply these changes (60 s), anything else keeps the current policy: `,
        });
        const result = await client.call<{ revision: string; applied: boolean }>('config.apply', { revision: status.fileRevision });
        if (options.json) printJsonOk(result);
        else process.stderr.write(`Applied revision ${result.revision}.\n`);
      } catch (error) {
        if (error instanceof ExitWith) throw error;
        throw new ExitWith(reportFailure(error, options));
      } finally {
        client.close();
      }
    });
}
