// The `web` and `token` command families (R-WEB-2, R-WEB-4): a pairing code for
// the approval page, and bearer tokens for scripts. Secrets stay out of stdout
// except the short-lived pairing code, which the operator must read.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { TokenInfo } from '../../../service/webAuth.js';
import type { PairingResult } from '../../../operations/webOperations.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { printJsonOk } from '../output.js';
import { requireInteractiveTerminal } from '../terminal.js';



function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

function clockTime(ms: number): string {
  return new Date(ms).toLocaleTimeString();
}

/** The platform's "open this URL" command; the URL is one argv element, never shell text. */
export function browserOpener(platform: NodeJS.Platform = process.platform): { command: string; args: (url: string) => string[] } {
  if (platform === 'darwin') return { command: 'open', args: (url) => [url] };
  if (platform === 'win32') return { command: 'cmd', args: (url) => ['/c', 'start', '""', url.replace(/&/g, '^&')] };
  return { command: 'xdg-open', args: (url) => [url] };
}

/** The page URL with the code in the fragment only: browsers never send a fragment to a server or in a Referer (R-WEB-2). */
export function pairingUrl(url: string, code: string): string {
  return `${url}#code=${encodeURIComponent(code)}`;
}

function openBrowser(url: string): void {
  const opener = browserOpener();
  try {
    const child = spawn(opener.command, opener.args(url), { detached: true, stdio: 'ignore' });
    child.on('error', () => process.stderr.write(`assent: could not start ${opener.command}; open the URL yourself and enter the code.\n`));
    child.unref();
  } catch {
    process.stderr.write(`assent: could not start ${opener.command}; open the URL yourself and enter the code.\n`);
  }
}

function tokenLine(token: TokenInfo): string {
  return `${token.id}  ${token.name}  ${token.state}  expires ${new Date(token.expiresAt).toISOString()}`;
}

export function registerWebCommands(program: Command): void {
  program
    .command('web')
    .description('Print the approval page URL and a one-time pairing code (120 s, 5 wrong tries burn it)')
    .option('--open', 'also open the page in your browser (the code travels in the URL fragment only)')
    .option('--json', 'print one JSON document {url, code, expiresAt}')
    .action(async (options: JsonFlag & { open?: boolean }) => {
      await withDaemon(options, async (client) => {
        // A pairing code lets a browser decide approvals: it is shown only to a person at a terminal (R-CLI-2).
        requireInteractiveTerminal('`assent web`');
        const pairing = await client.call<PairingResult>('web.pair', {});
        if (options.json) printJsonOk(pairing);
        else {
          out(`Approval page: ${pairing.url}`);
          out(`Pairing code:  ${pairing.code}   (one use, valid until ${clockTime(pairing.expiresAt)})`);
        }
        if (options.open) openBrowser(pairingUrl(pairing.url, pairing.code));
      });
    });

  const token = program.command('token').description('Bearer tokens for scripts using the HTTP API');
  token
    .command('create')
    .description('Mint a token bound to this daemon and write it to a new 0600 file (it is never printed)')
    .requiredOption('--name <name>', 'a label for the token (letters, digits, . _ -)')
    .requiredOption('--ttl <duration>', 'lifetime such as 30m, 1h, 7d (at most 90d)')
    .requiredOption('--out <file>', 'a file that must not exist yet')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag & { name: string; ttl: string; out: string }) => {
      await withDaemon(options, async (client) => {
        // A bearer token can decide approvals over HTTP: minting one takes a person at a terminal (R-CLI-2).
        requireInteractiveTerminal('`assent token create`');
        const created = await client.call<TokenInfo & { file: string }>('tokens.create', { name: options.name, ttl: options.ttl, out: resolve(options.out) });
        if (options.json) printJsonOk(created);
        else out(`Token ${created.id} (${created.name}) written to ${created.file}; it expires ${new Date(created.expiresAt).toISOString()}. Send it as "Authorization: Bearer $(cat ${created.file})".`);
      });
    });
  token
    .command('list')
    .description('Tokens with their state and expiry (never the secret)')
    .option('--json', 'print one JSON document')
    .action(async (options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const list = await client.call<TokenInfo[]>('tokens.list', {});
        if (options.json) return printJsonOk(list, { count: list.length });
        if (list.length === 0) return out('No tokens.');
        for (const item of list) out(tokenLine(item));
        return undefined;
      });
    });
  token
    .command('revoke <id>')
    .description('Revoke a token; the next request using it is refused')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: JsonFlag) => {
      await withDaemon(options, async (client) => {
        const revoked = await client.call<TokenInfo>('tokens.revoke', { id });
        if (options.json) printJsonOk(revoked);
        else out(`Revoked ${revoked.id} (${revoked.name}).`);
      });
    });
}
