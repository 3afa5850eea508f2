// `assent proofs list|revoke` and `assent effects show` (R-J-4..6): thin views
// over the daemon's proofs.* and effects.* operations. Tokens never appear here.
import type { Command } from 'commander';
import type { ProofView } from '../../../journal/proofs.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { printJsonOk } from '../output.js';



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
}
