// Operator commands over the daemon: pending, approve, deny, watch, sessions
// and audit (SPEC §9); rules are in rules.ts. Each one parses its flags, makes one or two RPC
// calls and renders the answer; the decisions themselves live in the daemon.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { renderApprovalPreview } from '../../../core/approval/approvalPreview.js';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import type { ApprovalView, DecidedView } from '../../../service/approvalService.js';
import type { BusEvent } from '../../../service/eventBus.js';
import type { DaemonClient } from '../../daemon/rpcClient.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { createProofFile, writeProofFile } from '../proofFile.js';
import { unlinkSync } from 'node:fs';
import { auditLineText } from '../auditLine.js';
import { ExitWith, printJsonOk, reportFailure } from '../output.js';
import { readTerminalAnswer, requireInteractiveTerminal, typedCodeRefusal } from '../terminal.js';
import { approvalText } from '../decisionText.js';
import { runPending } from './pending.js';
import { runWatch } from './watch.js';



function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

async function approveInteractively(client: DaemonClient, id: string, options: JsonFlag & { session?: boolean; exportProof?: string }): Promise<void> {
  requireInteractiveTerminal('`assent approve`');
  const approval = await client.call<ApprovalView>('approvals.get', { id });
  if (approval.state !== 'pending') {
    throw new AssentError('conflict', `approval ${id} is already ${approval.state}${approval.channel ? ` (via ${approval.channel})` : ''}`);
  }
  if (options.exportProof !== undefined) {
    // R-J-7: the file is created new (O_EXCL, 0600) before anything is decided; the proof is never printed.
    const path = options.exportProof;
    const fd = createProofFile(path);
    let written = false;
    try {
      await approveAndExport(client, approval, options, (proof) => {
        writeProofFile(fd, proof);
        written = true;
      });
    } finally {
      if (!written) {
        writeProofFile(fd, '');
        unlinkSync(path);
      }
    }
    return;
  }
  const now = Date.now();
  const code = newApprovalCode((n) => randomBytes(n));
  process.stderr.write(renderApprovalPreview(approval, now));
  const scopeText = options.session ? ' for the rest of this session' : ' once';
  // The daemon decides: a code typed for an approval that needs a passkey is refused there (R-REM-6).
  if (approval.presence === 'passkey') process.stderr.write(`Approval ${id} needs your passkey on the paired page; approving here will be refused, n denies it.\n`);

  const resolvedElsewhere = new AbortController();
  await client.call('events.subscribe', { kinds: ['approval_resolved'], selector: id });
  const stop = client.onNotification('event', (params) => {
    const event = params as BusEvent;
    if (event.kind === 'approval_resolved' && event.data['id'] === id) resolvedElsewhere.abort();
  });
  const { line: answer, end } = await readTerminalAnswer({ deadlineMs: approval.expiresAt - now, signal: resolvedElsewhere.signal, prompt: `Type ${code} to approve${scopeText}, or n to deny: ` });
  stop();
  if (resolvedElsewhere.signal.aborted) {
    const current = await client.call<ApprovalView>('approvals.get', { id });
    const what = current.state === 'denied' && current.channel === undefined && current.reason === 'withdrawn' ? 'withdrawn by the agent' : `${current.state} elsewhere${current.channel ? ` (via ${current.channel})` : ''}`;
    throw new AssentError('conflict', `approval ${id} was ${what} while you were typing`);
  }
  const trimmed = answer?.trim();
  if (trimmed === 'n' || trimmed === 'N') {
    const result = await client.call<ApprovalView>('approvals.decide', { id, behavior: 'deny', channel: 'cli' });
    if (options.json) printJsonOk(result);
    else process.stderr.write(`Denied ${id}.\n`);
    return;
  }
  if (trimmed !== code) {
    throw new AssentError(
      'policy_denied',
      typedCodeRefusal(end, answer === undefined && end !== 'cancelled' ? `nothing was decided for ${id}` : `${id} was not approved and is still pending`),
      { details: { reason: 'confirmation-denied' } },
    );
  }
  const result = await client.call<DecidedView>('approvals.decide', {
    id,
    behavior: 'allow',
    scope: options.session ? 'session' : 'call',
    channel: 'cli',
  });
  if (options.json) printJsonOk(result);
  else process.stderr.write(`${approvalText(id, result, scopeText)}\n`);
}


/** The approve dialogue of `--export-proof`: same preview and code, then proofs.issue instead of approvals.decide. */
async function approveAndExport(client: DaemonClient, approval: ApprovalView, options: JsonFlag, write: (proof: string) => void): Promise<void> {
  const id = approval.id;
  const now = Date.now();
  const code = newApprovalCode((n) => randomBytes(n));
  process.stderr.write(renderApprovalPreview(approval, now));
  const { line: answer, end } = await readTerminalAnswer({
    deadlineMs: approval.expiresAt - now,
    prompt: `Type ${code} to approve once and export a proof to ${options.json ? 'the file' : 'the file you named'}, or n to deny: `,
  });
  const trimmed = answer?.trim();
  if (trimmed === 'n' || trimmed === 'N') {
    const result = await client.call<ApprovalView>('approvals.decide', { id, behavior: 'deny', channel: 'cli' });
    if (options.json) printJsonOk(result);
    else process.stderr.write(`Denied ${id}; no proof was written.\n`);
    return;
  }
  if (trimmed !== code) {
    throw new AssentError(
      'policy_denied',
      typedCodeRefusal(end, answer === undefined && end !== 'cancelled' ? `nothing was decided for ${id} and no proof was written` : `${id} was not approved and no proof was written`),
      { details: { reason: 'confirmation-denied' } },
    );
  }
  const issued = await client.call<{ approval: ApprovalView; proof: string; proofId: string; expiresAt: number }>('proofs.issue', { id, channel: 'cli' });
  write(issued.proof);
  const data = { approval: issued.approval, proofId: issued.proofId, expiresAt: issued.expiresAt };
  if (options.json) printJsonOk(data);
  else process.stderr.write(`Approved ${id}; proof ${issued.proofId} written, valid until ${new Date(issued.expiresAt).toISOString()}.\n`);
}

interface HostChain {
  hostId: string;
  hostName?: string;
  ok: boolean;
  lines: number;
  firstBroken?: { seq?: number; file?: string; line?: number; reason: string };
}

/** `assent audit verify --all-hosts` (R-TEAM-4): each host's chain from the team database; exit 65 naming the first broken link. */
async function verifyAllHosts(client: DaemonClient, options: JsonFlag): Promise<void> {
  const result = await client.call<{ ok: boolean; hosts: HostChain[] }>('audit.verify', { allHosts: true });
  const label = (host: HostChain): string => `${escapeText(host.hostName ?? 'unnamed host')} (${host.hostId})`;
  const broken = result.hosts.find((host) => !host.ok);
  if (options.json) {
    if (result.ok) printJsonOk(result);
    else process.stdout.write(`${JSON.stringify({ ok: false, error: { type: 'invalid_input', message: 'an audit chain is broken', details: result } })}\n`);
  } else {
    for (const host of result.hosts) {
      if (host.ok) out(`${label(host)}: intact, ${host.lines} lines.`);
    }
    if (broken !== undefined) {
      const at = broken.firstBroken?.seq !== undefined ? `seq ${broken.firstBroken.seq}` : `${broken.firstBroken?.file ?? '?'}:${broken.firstBroken?.line ?? '?'}`;
      process.stderr.write(`assent: audit chain of ${label(broken)} broken at ${at} (${broken.firstBroken?.reason ?? 'unknown'})\n`);
    }
    if (result.hosts.length === 0) out('No audit rows in the team database yet.');
  }
  if (!result.ok) throw new ExitWith(65);
}

function parseSince(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const relative = /^(\d+)(s|m|h|d)$/.exec(text);
  if (relative !== null) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 's' | 'm' | 'h' | 'd'];
    return Date.now() - Number(relative[1]) * unit;
  }
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw new AssentError('invalid_params', `--since "${text}" is neither a date (2026-01-31T12:00Z) nor a duration (2h, 7d)`);
  return parsed;
}

export function registerApprovalCommands(program: Command): void {
  program
    .command('pending [selector]')
    .description('List pending approvals with their complete, escaped arguments (selector: id, session, server/tool or server/)')
    .option('--json', 'print one JSON document')
    .action(async (selector: string | undefined, options: JsonFlag) => {
      const code = await runPending(selector, options);
      if (code !== 0) throw new ExitWith(code);
    });

  program
    .command('approve [id]')
    .description('Approve a pending call after typing back a fresh code (needs your terminal); --watch follows the live queue')
    .option('--session', 'also allow the same again for the rest of the session (a tool; for an agent action: its exact command text, its paths or its exact input)')
    .option('--export-proof <file>', 'approve once and write a single-use proof to FILE (created new, mode 0600) for another head')
    .option('--watch', 'follow the queue live and answer inline (same as `assent watch`)')
    .option('--json', 'print one JSON document (under --watch: NDJSON events, answering nothing)')
    .action(async (id: string | undefined, options: JsonFlag & { session?: boolean; watch?: boolean; exportProof?: string }) => {
      if (options.watch) {
        await withDaemon(options, (client) => runWatch(client, { selector: id, json: options.json === true }));
        return;
      }
      if (id === undefined) throw new ExitWith(reportFailure(new AssentError('usage', 'approve needs an approval id (see `assent pending`) or --watch'), options));
      await withDaemon(options, (client) => approveInteractively(client, id, options));
    });

  program
    .command('watch [selector]')
    .description('Follow the approval queue live; deny is one key (n), approving needs the item\u2019s fresh code typed')
    .option('--json', 'print the queue\u2019s events as NDJSON and answer nothing')
    .action(async (selector: string | undefined, options: JsonFlag) => {
      await withDaemon(options, (client) => runWatch(client, { selector, json: options.json === true }));
    });

  program
    .command('deny <id>')
    .description('Deny a pending approval; works anywhere, because refusing is always safe')
    .option('--reason <text>', 'a reason the agent will see')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: JsonFlag & { reason?: string }) => {
      await withDaemon(options, async (client) => {
        const params: Record<string, unknown> = { id, behavior: 'deny', channel: 'cli' };
        if (options.reason !== undefined) params['reason'] = options.reason;
        const result = await client.call<ApprovalView>('approvals.decide', params);
        if (options.json) printJsonOk(result);
        else out(`Denied ${id}.`);
      });
    });

  program
    .command('sessions')
    .description('List the sessions the daemon knows')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const sessions = await client.call<{ sessionId: string; calls: number; lastSeen: number }[]>('sessions.list', {});
        if (options.json) return printJsonOk(sessions);
        if (sessions.length === 0) return out('No sessions.');
        for (const s of sessions) out(`${escapeText(s.sessionId)}  calls ${s.calls}  last seen ${new Date(s.lastSeen).toISOString()}`);
      });
    });

  const audit = program
    .command('audit')
    .description('Export the audit log (one record per gated call); `audit verify` checks its hash chain')
    .option('--since <when>', 'an ISO date or a duration such as 2h or 7d')
    .option('--json', 'print one JSON document')
    .option('--csv', 'print CSV')
    .option('--all-hosts', 'team mode: every host\u2019s records from the team database, each with its host')
    .option('--follow', 'keep printing records as they are written, from the audit files, across new days and daemon restarts (NDJSON with --json)')
    .action(async (options: JsonFlag & { since?: string; csv?: boolean; allHosts?: boolean; follow?: boolean }) => {
      if (options.follow === true) {
        const since = parseSince(options.since);
        const { followAudit } = await import('./auditFollow.js');
        const stop = new AbortController();
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
        await followAudit({ dir: resolveStatePaths().auditDir, json: options.json === true, signal: stop.signal, ...(since === undefined ? {} : { since }) });
        return;
      }
      await withDaemon(options, async (client) => {
        const since = parseSince(options.since);
        const params: Record<string, unknown> = since === undefined ? {} : { since };
        if (options.allHosts === true) params['allHosts'] = true;
        const records = await client.call<Record<string, unknown>[]>('audit.query', params);
        if (options.json) return printJsonOk(records, { count: records.length });
        if (options.csv) {
          const { auditToCsv } = await import('../../../journal/auditReaders.js');
          return void process.stdout.write(auditToCsv(records as never));
        }
        for (const r of records) {
          const host = options.allHosts === true ? `${escapeText(String(r['hostName'] ?? r['hostId'] ?? '?'))}  ` : '';
          out(`${host}${auditLineText(r)}`);
        }
      });
    });
  audit
    .command('repair')
    .description('Repair a torn last audit line (a write cut short by a crash): keeps a copy of the file, cuts the line and records the cut in the chain; needs a typed code, or --yes')
    .option('--yes', 'repair without asking (for scripts); without it the command needs your terminal to type a code')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag & { yes?: boolean }) => {
      const { runAuditRepair } = await import('./repair.js');
      await runAuditRepair(options);
    });
  audit
    .command('verify')
    .description('Verify the audit hash chain and name the first broken line')
    .option('--json', 'print one JSON document')
    .option('--all-hosts', 'team mode: recompute every host\u2019s chain from its rows in the team database')
    .action(async (own: JsonFlag & { allHosts?: boolean }, command: Command) => {
      // `audit` takes --json and --all-hosts too; whichever level they were written at, they count here.
      const globals = command.optsWithGlobals<JsonFlag & { allHosts?: boolean }>();
      const options: JsonFlag = { json: own.json === true || globals.json === true };
      if (own.allHosts === true || globals.allHosts === true) {
        await withDaemon(options, (client) => verifyAllHosts(client, options));
        return;
      }
      try {
        const { verifyAudit } = await import('../../../journal/auditReaders.js');
        const dir = resolveStatePaths().auditDir;
        const result = verifyAudit(dir);
        const broken = result.firstBroken;
        const where = broken === undefined ? '' : `${dir}/${broken.file}:${broken.line}`;
        if (options.json) {
          if (result.ok) printJsonOk(result);
          else {
            const details = { ...result, firstBroken: { ...broken, path: `${dir}/${broken?.file ?? ''}` } };
            const message = `the audit chain is broken at ${where}: ${broken?.reason ?? 'unknown'}${broken?.fix === undefined ? '' : `; ${broken.fix}`}`;
            process.stdout.write(`${JSON.stringify({ ok: false, error: { type: 'invalid_input', message, details } })}\n`);
          }
        } else if (result.ok) {
          out(`Audit log intact: ${result.lines} lines.`);
        } else {
          process.stderr.write(`assent: audit chain broken at ${where} (line ${broken?.line ?? '?'}): ${broken?.reason ?? 'unknown'}${broken?.fix === undefined ? '' : `; ${broken.fix}`}\n`);
          if (result.lines > 0) process.stderr.write(`The ${result.lines} lines before it verify.\n`);
        }
        if (!result.ok) throw new ExitWith(65);
      } catch (error) {
        if (error instanceof ExitWith) throw error;
        throw new ExitWith(reportFailure(error, options));
      }
    });
}
