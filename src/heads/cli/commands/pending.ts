// `assent pending [selector] [--json]` (R-CLI-1). Kept in its own small module
// because it is the command operators and scripts run most: main.ts calls it
// without loading the argument parser, so it starts about as fast as
// `node -e 0` (SPEC §14).
import type { ApprovalView } from '../../../service/approvalService.js';
import { connectForCli } from '../../daemon/clientConnection.js';
import { printJsonOk, reportFailure } from '../output.js';

/** Lists pending approvals; returns the exit code. */
export async function runPending(selector: string | undefined, options: { json?: boolean }): Promise<number> {
  let client: Awaited<ReturnType<typeof connectForCli>> | undefined;
  try {
    client = await connectForCli();
    const list = await client.call<ApprovalView[]>('approvals.list', selector === undefined ? {} : { selector });
    if (options.json) {
      printJsonOk(list, { count: list.length });
    } else if (list.length === 0) {
      process.stdout.write('No pending approvals.\n');
    } else {
      // The preview (and the policy code it names risks with) only for a person reading it; --json never loads it.
      const { renderApprovalPreview } = await import('../../../core/approval/approvalPreview.js');
      const now = Date.now();
      process.stdout.write(list.map((approval) => renderApprovalPreview(approval, now)).join('\n'));
    }
    return 0;
  } catch (error) {
    return reportFailure(error, options);
  } finally {
    client?.close();
  }
}

/** Recognises the plain forms `pending`, `pending SELECTOR`, with or without `--json`; anything else goes to the full parser. */
export function plainPendingArgs(args: readonly string[]): { selector: string | undefined; json: boolean } | undefined {
  if (args[0] !== 'pending') return undefined;
  const rest = args.slice(1);
  const json = rest.includes('--json');
  const positional = rest.filter((a) => a !== '--json');
  if (positional.length > 1 || positional.some((a) => a.startsWith('-')) || rest.filter((a) => a === '--json').length > 1) return undefined;
  return { selector: positional[0], json };
}
