// The `web` and `token` command families (R-WEB-2, R-WEB-4, R-REM-2, R-REM-3):
// a pairing code for the approval page (with the certificate's fingerprint and
// a QR code for a phone), the signed-in devices, and bearer tokens for scripts.
// Secrets stay out of stdout except the short-lived pairing code, which the
// operator must read.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { escapeText } from '../../../core/base/escape.js';
import type { DeviceInfo, TokenInfo } from '../../../service/webAuth.js';
import type { PairingResult } from '../../../operations/webOperations.js';
import { withDaemon, type JsonFlag } from '../daemonConnection.js';
import { printJsonOk, useColor } from '../output.js';
import { renderQrCode } from '../qrCode.js';
import { requireInteractiveTerminal } from '../terminal.js';
import { registerPasskeyCommands } from './passkeys.js';

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

/**
 * The page URL with the code in the fragment only: browsers never send a
 * fragment to a server or in a Referer (R-WEB-2). `remember` ticks the page's
 * "Remember this device" for the browser that opens it (R-REM-3).
 */
export function pairingUrl(url: string, code: string, remember = false): string {
  return `${url}#code=${encodeURIComponent(code)}${remember ? '&remember=1' : ''}`;
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

/** `sha256:…` as people compare it with what a browser or `openssl x509 -fingerprint -sha256` shows: upper-case pairs joined by colons. */
export function fingerprintForPeople(fingerprint: string): string {
  const hex = fingerprint.replace(/^sha256:/, '').toUpperCase();
  return (hex.match(/.{2}/g) ?? []).join(':');
}

function deviceLine(device: DeviceInfo): string {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return [
    device.id,
    escapeText(device.name),
    device.remembered ? 'remembered' : 'until restart',
    `paired ${iso(device.pairedAt)}`,
    `last seen ${iso(device.lastSeenAt)}`,
    `expires ${iso(device.expiresAt)}`,
    `user agent ${device.userAgent === '' ? '(none)' : escapeText(device.userAgent)}`,
  ].join('  ');
}

function tokenLine(token: TokenInfo): string {
  return `${token.id}  ${token.name}  ${token.state}  expires ${new Date(token.expiresAt).toISOString()}`;
}

export function registerWebCommands(program: Command): void {
  const web = program
    .command('web')
    .description('Print the approval page URL and a one-time pairing code (120 s, 5 wrong tries burn it); `web devices` and `web revoke` manage signed-in browsers')
    .option('--open', 'also open the page in your browser (the code travels in the URL fragment only)')
    .option('--qr', 'also print a QR code of the https URL with the code in its fragment, for a phone to scan')
    .option('--remember', 'the browser opened with --open or --qr stays signed in across restarts (web.deviceTtlDays)')
    .option('--json', 'print one JSON document {url, code, expiresAt, fingerprint?}')
    .action(async (options: JsonFlag & { open?: boolean; qr?: boolean; remember?: boolean }) => {
      await withDaemon(options, async (client) => {
        // A pairing code lets a browser decide approvals: it is shown only to a person at a terminal (R-CLI-2).
        requireInteractiveTerminal('`assent web`');
        const pairing = await client.call<PairingResult>('web.pair', {});
        if (options.qr && !pairing.url.startsWith('https://')) {
          throw new AssentError(
            'invalid_input',
            `--qr is for a phone, and a phone cannot use ${pairing.url} (plain HTTP on loopback); set web.publicUrl behind a TLS reverse proxy, or web.listen on a LAN address with web.tls (docs/remote.md). The code was not shown.`,
          );
        }
        const link = pairingUrl(pairing.url, pairing.code, options.remember === true);
        if (options.json) {
          printJsonOk(pairing);
          // stdout holds the one JSON document; the picture goes to the terminal.
          if (options.qr) process.stderr.write(await renderQrCode(link, { color: Boolean(process.stderr.isTTY) && !process.env['NO_COLOR'] }));
        } else {
          out(`Approval page: ${pairing.url}`);
          if (pairing.fingerprint !== undefined) {
            out(`Certificate:   SHA-256 ${fingerprintForPeople(pairing.fingerprint)}`);
            out('               (before you pair, check that your browser shows this fingerprint for the page\'s certificate)');
          }
          out(`Pairing code:  ${pairing.code}   (one use, valid until ${clockTime(pairing.expiresAt)})`);
          if (options.qr) {
            process.stdout.write(await renderQrCode(link, { color: useColor() }));
            out('Scan it to open the page and pair; the code is in the link\'s fragment, which is never sent to a server.');
          }
        }
        if (options.open) openBrowser(link);
      });
    });
  web
    .command('devices')
    .description('Browsers signed in to the page: id, name, remembered or not, paired-at, last-seen, expiry, user agent')
    .option('--json', 'print one JSON document')
    .action(async (_options: JsonFlag, command: Command) => {
      // `web` has its own --json, which commander gives the parent: read both.
      const options = command.optsWithGlobals<JsonFlag>();
      await withDaemon(options, async (client) => {
        const list = await client.call<DeviceInfo[]>('web.devices', {});
        if (options.json) return printJsonOk(list, { count: list.length });
        if (list.length === 0) return out('No browser is signed in.');
        for (const item of list) out(deviceLine(item));
        return undefined;
      });
    });
  web
    .command('revoke <device>')
    .description('Sign one browser out at once (an id from `assent web devices`); its open page stops at once. Works without a terminal.')
    .option('--json', 'print one JSON document')
    .action(async (id: string, _options: JsonFlag, command: Command) => {
      const options = command.optsWithGlobals<JsonFlag>();
      await withDaemon(options, async (client) => {
        // Revoking is always safe, so no terminal is needed (R-REM-7).
        const revoked = await client.call<DeviceInfo>('web.revoke', { id });
        if (options.json) printJsonOk(revoked);
        else out(`Signed out ${revoked.id} (${escapeText(revoked.name)}).`);
      });
    });

  registerPasskeyCommands(web);

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
