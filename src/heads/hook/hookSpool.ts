// A hook call refused because no daemon decided it (R-AUD-1: one line per gated
// call, even then): the hook appends its record to a spool file of its own under
// <ASSENT_HOME>/spool, as a gateway does (heads/mcp/auditSpool.ts), and the next
// daemon reads it into the audit chain with the time it was refused
// (operations/auditSpool.ts: at start, and every half minute while it runs).
// Only into a state directory already checked private, into a spool folder
// private to this user, as a new file (never through a link); anything else and
// the refusal stays unaudited, said on stderr, and the call is refused all the same.
// Loaded only on that path: the hook's allow path never reads this file.
import { randomBytes } from 'node:crypto';
import { digestOf } from '../../core/base/canonical.js';
import { AGENT_ALIAS, type AgentAction } from '../../core/agent/agentAction.js';
import { spoolDirOf } from '../../state/statePaths.js';

const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');

/**
 * The risk a refused action is recorded with: nobody rated it (the daemon's
 * policy, which rates agent actions, did not run), so it is not called low.
 */
const UNRATED_AGENT_RISK = 'elevated';

/** Writes the refusal's spool line; returns why it could not, or undefined when it is on disk. Never throws. */
export function spoolRefusal(home: string, action: AgentAction, reason: 'unavailable', now: number = Date.now()): string | undefined {
  try {
    if (!fs.existsSync(home)) return `the state directory ${home} does not exist`;
    const dir = spoolDirOf(home);
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const stat = fs.lstatSync(dir);
    const uid = process.getuid?.();
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
      return `the spool folder ${dir} is not a directory private to this user`;
    }
    const record = {
      sessionId: action.sessionId,
      server: AGENT_ALIAS[action.agent],
      tool: action.tool,
      argsSha256: digestOf(action.input),
      outcome: 'denied',
      deniedReason: reason,
      risk: UNRATED_AGENT_RISK,
      agent: action.agent,
      caller: { head: 'hook', agent: action.agent },
    };
    const file = path.join(dir, `hook-${process.pid}-${randomBytes(8).toString('hex')}.jsonl`);
    const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
    const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, `${JSON.stringify({ at: now, record })}\n`);
      fs.fdatasyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
  }
}
