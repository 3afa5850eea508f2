// `assent web passkeys [add|remove ID]` (R-REM-6, R-REM-7): list the passkeys
// that approve actions needing one, confirm at the terminal an enrolment the
// page started (its code typed here), and remove one at once — removing works
// anywhere, since it only takes a way of approving away.
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import type { EnrolmentConfirmation } from '../../../operations/passkeyOperations.js';
import type { PasskeyInfo } from '../../../service/passkeys.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { printJsonOk } from '../output.js';
import { readTerminalLine, requireInteractiveTerminal } from '../terminal.js';

/** The page's code lives 120 s; the prompt waits as long. */
const CODE_DEADLINE_MS = 120_000;

/** `--json` written after `web` or after the subcommand: `web` takes the flag too, so it is read from both levels. */
function withJson(options: JsonFlag, command: Command): JsonFlag {
  return { ...options, json: options.json === true || command.optsWithGlobals<JsonFlag>().json === true };
}

function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

function passkeyLine(passkey: PasskeyInfo): string {
  const used = passkey.lastUsedAt === undefined ? 'never used' : `last approved ${new Date(passkey.lastUsedAt).toISOString()}`;
  return `${passkey.id}  for ${escapeText(passkey.rpId)}  enrolled by ${escapeText(passkey.enrolledBy)} ${new Date(passkey.createdAt).toISOString()}  ${used}  credential ${escapeText(passkey.credentialId)}`;
}

export function registerPasskeyCommands(web: Command): void {
  const passkeys = web
    .command('passkeys')
    .description('Passkeys that approve actions marked by policy.presence; `add` confirms an enrolment started on the page, `remove ID` takes one away at once')
    .option('--json', 'print one JSON document')
    .action(async (own: JsonFlag, command: Command) => {
      const options = withJson(own, command);
      await withDaemon(options, async (client) => {
        const list = await client.call<PasskeyInfo[]>('passkeys.list', {});
        if (options.json) return printJsonOk(list, { count: list.length });
        if (list.length === 0) return out('No passkey is enrolled. Press "Add a passkey" on the paired page, then run `assent web passkeys add`.');
        for (const item of list) out(passkeyLine(item));
        return undefined;
      });
    });
  passkeys
    .command('add')
    .description('Confirm the passkey enrolment the page shows a code for (press "Add a passkey" there first); needs your terminal and the typed code')
    .option('--json', 'print one JSON document')
    .action(async (own: JsonFlag, command: Command) => {
      const options = withJson(own, command);
      await withDaemon(options, async (client) => {
        // A passkey approves what nothing else can: letting a page enrol one takes a person at
        // this terminal typing the code that page shows, like `assent rules add` (R-REM-6).
        requireInteractiveTerminal('`assent web passkeys add`');
        const answer = await readTerminalLine({
          deadlineMs: CODE_DEADLINE_MS,
          prompt:
            'Enrol a passkey: the page session that shows the code may register one passkey, which can then approve actions marked by policy.presence.\n' +
            'Type the 8-letter code the page shows, anything else cancels: ',
        });
        const code = answer?.trim() ?? '';
        if (!/^[A-Za-z]{8}$/.test(code)) {
          throw new AssentError('policy_denied', 'no enrolment code was typed; nothing was confirmed', { details: { reason: 'confirmation-denied' } });
        }
        const confirmed = await client.call<EnrolmentConfirmation>('passkeys.confirm', { code });
        if (options.json) printJsonOk(confirmed);
        else {
          out(
            `Confirmed for ${escapeText(confirmed.enrolledBy)}: press "Register passkey" on that page before ${new Date(confirmed.expiresAt).toLocaleTimeString()} ` +
              'and complete your authenticator\'s check (PIN, fingerprint or face).',
          );
        }
      });
    });
  passkeys
    .command('remove <id>')
    .description('Remove a passkey (an id from `assent web passkeys`); its next assertion is refused. Works without a terminal.')
    .option('--json', 'print one JSON document')
    .action(async (id: string, own: JsonFlag, command: Command) => {
      const options = withJson(own, command);
      await withDaemon(options, async (client) => {
        // Removing is always safe, so no terminal is needed (R-REM-6).
        const removed = await client.call<PasskeyInfo>('passkeys.remove', { id });
        if (options.json) printJsonOk(removed);
        else out(`Removed passkey ${removed.id}; it approves nothing from now on.`);
      });
    });
}
