// `assent audit repair` and `assent journal repair` (issue 35): the two repairs
// of damaged state. Each shows what it will do first, changes nothing without a
// typed code (or --yes; with neither and no terminal it refuses), runs only
// while no daemon does, keeps the damaged file as a backup and names it.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import { inspectConfigFile } from '../../../journal/configFile.js';
import { applyAuditRepair, applyJournalRepair, planAuditRepair, planJournalRepair, type JournalRepairPlan } from '../../../journal/stateRepair.js';
import { ensureStateDir, resolveStatePaths, type StatePaths } from '../../../state/statePaths.js';
import { isProcessAlive, readPidFile } from '../../daemon/autoSpawn.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';
import { requireTypedCode } from '../terminal.js';

interface RepairOptions {
  yes?: boolean;
  json?: boolean;
}

const CONFIRM_DEADLINE_MS = 60_000;

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * Holds the daemon's spawn lock while a repair runs, so a hook or gateway that
 * auto-spawns a daemon waits for it instead of opening the files half repaired.
 * Refuses while a daemon runs, or another process is starting one.
 */
function holdSpawnLock(paths: StatePaths): () => void {
  const pid = readPidFile(paths.pid);
  if (pid !== undefined && isProcessAlive(pid)) {
    throw new AssentError('conflict', `an assent daemon (pid ${pid}) runs on ${paths.home}; stop it with \`assent daemon stop\` (and close the MCP clients that restart it), then run the repair again; nothing was changed`, {
      details: { pid },
    });
  }
  let fd: number;
  try {
    fd = openSync(paths.spawnLock, 'wx', 0o600);
  } catch {
    const holder = readPidFile(paths.spawnLock);
    throw new AssentError('conflict', `another process (pid ${holder ?? 'unknown'}) is starting a daemon (${paths.spawnLock}); wait a moment and run the repair again; nothing was changed`);
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return () => {
    try {
      if (readFileSync(paths.spawnLock, 'utf8').trim() === String(process.pid)) unlinkSync(paths.spawnLock);
    } catch {
      // Gone already.
    }
  };
}

/** A typed code at the terminal, or --yes; with neither and no terminal, refusal (nothing changed). */
async function confirmRepair(options: RepairOptions, command: string, question: string): Promise<void> {
  if (options.yes === true) return;
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new AssentError(
      'terminal_required',
      `\`${command}\` changes files and asks for a typed code first, but stdin and stderr are not a terminal; run it in your own terminal, or add --yes to repair without asking; nothing was changed`,
      { details: { reason: 'terminal-required' } },
    );
  }
  const code = newApprovalCode((n) => randomBytes(n));
  await requireTypedCode(code, { deadlineMs: CONFIRM_DEADLINE_MS, consequence: 'nothing was changed', prompt: `${question}\nType ${code} to repair, anything else cancels: ` });
}

async function auditRepair(options: RepairOptions): Promise<void> {
  const paths = resolveStatePaths();
  ensureStateDir(paths);
  const now = new Date();
  const plan = planAuditRepair(paths.auditDir, now);
  if (plan === undefined) {
    if (options.json) printJsonOk({ repaired: false });
    else out(`Nothing to repair: the newest audit file in ${escapeText(paths.auditDir)} ends in a whole record. \`assent audit verify\` checks the whole chain.`);
    return;
  }
  const release = holdSpawnLock(paths);
  try {
    const { torn } = plan;
    process.stderr.write(
      `${escapeText(torn.file)}: line ${torn.line} is torn (${torn.bytes} bytes${torn.endsWithNewline ? '' : ', no newline'}, sha256 ${plan.cutSha256}).\n` +
        `The repair copies the whole file to ${escapeText(plan.backup)} (0600), cuts the torn line off ${escapeText(torn.file)}, and appends a line recording the cut to the chain.\n`,
    );
    await confirmRepair(options, 'assent audit repair', 'Repair the audit file?');
    const result = applyAuditRepair(paths, plan, new Date());
    if (options.json) {
      printJsonOk({ repaired: true, file: torn.file, line: torn.line, bytes: torn.bytes, cutSha256: plan.cutSha256, backup: plan.backup, recordSeq: result.recordSeq, verification: result.verification });
    } else {
      out(`Kept the whole file as it was: ${escapeText(plan.backup)}`);
      out(`Cut line ${torn.line} (${torn.bytes} bytes) off ${escapeText(torn.file)}; the chain records the cut as seq ${result.recordSeq} (tool "audit repair").`);
      const check = result.verification;
      out(
        check.ok
          ? `assent audit verify: intact, ${check.lines} lines. The daemon can start again.`
          : `assent audit verify still finds a break at ${escapeText(check.firstBroken?.file ?? '?')}:${check.firstBroken?.line ?? '?'}: ${escapeText(check.firstBroken?.reason ?? '')}`,
      );
    }
    if (!result.verification.ok) throw new ExitWith(65);
  } finally {
    release();
  }
}

/** What the daemon's next start runs after the repair, said before the operator confirms it. */
function configurationNote(paths: StatePaths, plan: JournalRepairPlan): string {
  if (plan.carried !== undefined) return `The confirmed configuration (revision ${plan.carried.revision}) can still be read intact, and is carried over: the daemon runs it as before.`;
  let state: string;
  try {
    const inspected = inspectConfigFile(paths.config);
    const errors = inspected.problems.filter((problem) => problem.severity === 'error').length;
    state = !inspected.exists ? 'absent (the defaults)' : errors > 0 ? `invalid (${errors} error${errors === 1 ? '' : 's'}; the daemon will not start on it)` : `valid, revision ${inspected.revision}`;
  } catch (error) {
    state = `unreadable (${(error as Error).message})`;
  }
  return (
    `The confirmed configuration is not carried over (${plan.notCarried ?? 'unreadable'}): the daemon's next start confirms ${paths.config} as it is then ` +
    `(now ${state}); review it with \`assent config check\` before you start the daemon.`
  );
}

function leftBehindText(plan: JournalRepairPlan): string {
  const counts = Object.entries(plan.leftBehind);
  const kinds = counts.map(([what]) => what).join(', ');
  const listed = counts.every(([, count]) => count === 'unreadable') ? `${kinds} (none of them can be counted in the damaged file)` : counts.map(([what, count]) => `${what}: ${count}`).join(', ');
  return `Left in the backup only (the new journal starts without them): ${listed}; the event log, proofs and effects, and export cursors too (export sinks send again from the first audit line).`;
}

async function journalRepair(options: RepairOptions): Promise<void> {
  const paths = resolveStatePaths();
  ensureStateDir(paths);
  const plan = planJournalRepair(paths, new Date());
  if (plan === undefined) {
    if (options.json) printJsonOk({ repaired: false });
    else out(`Nothing to repair: SQLite reads ${escapeText(paths.journal)} as sound (or there is none yet).`);
    return;
  }
  const release = holdSpawnLock(paths);
  try {
    process.stderr.write(
      `${escapeText(plan.journal)} is damaged: ${escapeText(plan.damage)}.\n` +
        `The repair moves it (with its -wal and -shm) to ${escapeText(plan.backup)} and starts a new, empty journal.\n` +
        `${escapeText(configurationNote(paths, plan))}\n${leftBehindText(plan)}\n`,
    );
    await confirmRepair(options, 'assent journal repair', 'Repair the journal?');
    const result = applyJournalRepair(paths, plan, new Date());
    if (options.json) {
      printJsonOk({
        repaired: true,
        file: plan.journal,
        backup: plan.backup,
        confirmedConfigCarried: plan.carried !== undefined,
        ...(plan.carried === undefined ? { notCarried: plan.notCarried } : { confirmedRevision: plan.carried.revision }),
        leftBehind: plan.leftBehind,
        ...(result.recordSeq === undefined ? {} : { recordSeq: result.recordSeq }),
      });
      return;
    }
    out(`Kept the damaged journal as it was: ${escapeText(plan.backup)}`);
    out(`Started a new journal at ${escapeText(plan.journal)}${plan.carried === undefined ? '' : ` with the confirmed configuration (revision ${plan.carried.revision})`}.`);
    if (result.recordSeq !== undefined) out(`The audit chain records the repair as seq ${result.recordSeq} (tool "journal repair").`);
    else out('The audit log ends in a torn line, so the repair is not recorded there: run `assent audit repair` next.');
    if (plan.carried === undefined) out(`Review ${escapeText(paths.config)} with \`assent config check\` before the daemon starts: its first start confirms it as it is.`);
  } finally {
    release();
  }
}

function failing(run: (options: RepairOptions) => Promise<void>): (options: RepairOptions) => Promise<void> {
  return async (options) => {
    try {
      await run(options);
    } catch (error) {
      if (error instanceof ExitWith) throw error;
      throw new ExitWith(reportFailure(error, options));
    }
  };
}

export const runAuditRepair = failing(auditRepair);

export function registerJournalCommands(program: Command): void {
  const journal = program.command('journal').description('The journal (journal.db): `journal repair` replaces a damaged one, keeping it as a backup');
  journal
    .command('repair')
    .description('Replace a damaged journal.db: keeps it as a backup, carries over the confirmed configuration when it can still be read intact, starts a new journal; needs a typed code, or --yes')
    .option('--yes', 'repair without asking (for scripts); without it the command needs your terminal to type a code')
    .option('--json', 'print one JSON document')
    .action(failing(journalRepair));
}
