// `assent proofs list|revoke` and `assent effects show|reconcile` (R-J-4..6,
// R-TEAM-6): thin views over the daemon's proofs.* and effects.* operations.
// Tokens never appear here.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { escapeText } from '../../../core/base/escape.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import type { ProofView } from '../../../journal/proofs.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { printJsonOk } from '../output.js';
import { requireInteractiveTerminal, requireTypedCode } from '../terminal.js';



function iso(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString();
}

export function registerProofCommands(program: Command): void {
  const proofs = program.command('proofs').description('Proofs issued for approved actions (metadata only; a token is never shown)');
  proofs
    .command('list')
    .description('List proofs, newest first: id, approval, audience, state, expiry, effect')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const list = await client.call<ProofView[]>('proofs.list', {});
        if (options.json) return printJsonOk(list);
        if (list.length === 0) process.stdout.write('No proofs.\n');
        for (const proof of list) {
          process.stdout.write(
            `${proof.id}  approval ${proof.approvalId}  ${proof.actionKind}  audience ${proof.audience}  ${proof.state}  expires ${iso(proof.expiresAt)}${proof.effectId ? `  effect ${proof.effectId}` : ''}\n`,
          );
        }
      });
    });
  proofs
    .command('revoke <id>')
    .description('Revoke an unused proof by its id or by the approval id that produced it')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const proof = await client.call<ProofView>('proofs.revoke', { id });
        if (options.json) printJsonOk(proof);
        else process.stdout.write(`Revoked ${proof.id} (approval ${proof.approvalId}); it authorizes nothing from now on.\n`);
      });
    });

  const effects = program.command('effects').description('Effects run under a proof: intent, completed, failed or uncertain');
  effects
    .command('show <id>')
    .description('Show one effect and its recorded disposition')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const effect = await client.call<Record<string, unknown>>('effects.get', { id });
        if (options.json) printJsonOk(effect);
        else for (const [key, value] of Object.entries(effect)) process.stdout.write(`${key}: ${String(value)}\n`);
      });
    });
  effects
    .command('reconcile')
    .description('Team mode: mark the open effect intents of another host that will not come back as uncertain (needs your terminal and a typed code)')
    .requiredOption('--host <id>', 'the hostId of that host (32 hex digits)')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag & { host: string }) => {
      await withDaemon(options, async (client) => {
        // Declaring a host gone decides what its half-run effects become: a person at a terminal, not an agent's shell (R-TEAM-6).
        requireInteractiveTerminal('`assent effects reconcile`');
        const code = newApprovalCode((n) => randomBytes(n));
        await requireTypedCode(code, {
          deadlineMs: 60_000,
          consequence: 'nothing was reconciled',
          prompt:
            `Host ${escapeText(options.host)} will be treated as gone: every effect it started and never finished becomes uncertain (never retried; check each one by hand).\n` +
            `Type ${code} to go on, anything else cancels: `,
        });
        const result = await client.call<{ hostId: string; hostName: string; effects: { id: string; approvalId: string; startedAt: number }[] }>('effects.reconcile', { hostId: options.host });
        if (options.json) return printJsonOk(result);
        if (result.effects.length === 0) return void process.stderr.write(`Host ${escapeText(result.hostName)} had no open effects.\n`);
        process.stderr.write(`Host ${escapeText(result.hostName)}: ${result.effects.length} effect(s) now uncertain:\n`);
        for (const effect of result.effects) process.stdout.write(`${effect.id}  approval ${effect.approvalId}  started ${iso(effect.startedAt)}  uncertain\n`);
      });
    });
}
