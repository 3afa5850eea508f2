// `assent web --qr` in a real terminal (R-REM-2, R-REM-7): the daemon serves
// https with its self-signed certificate; the QR code printed on the PTY is
// turned back into pixels — as the terminal shows them, colours included — and
// decoded with jsQR: the https URL of the page, the pairing code in the
// fragment only. On plain loopback HTTP `--qr` is refused: a phone cannot use it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import jsqr from 'jsqr';
import { spawn as spawnPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_ENTRY, makeTempHome, REPO_ROOT, type TempHome } from '../helpers/daemon.js';
import { ptyEnv, runCliInTerminal } from '../helpers/pty.js';

const homes: TempHome[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await home.cleanup();
});

async function startDaemon(web: Record<string, unknown>): Promise<TempHome> {
  const home = makeTempHome();
  homes.push(home);
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web }), { mode: 0o600 });
  await home.startDaemon();
  return home;
}

/** Runs the CLI with stdin, stdout and stderr all on one PTY, as a person's terminal; returns what it showed. */
function runOnTerminal(args: string[], env: Record<string, string>): Promise<{ exitCode: number; screen: string }> {
  return new Promise((resolve) => {
    const pty = spawnPty(process.execPath, [CLI_ENTRY, ...args], { name: 'xterm', cols: 200, rows: 60, cwd: REPO_ROOT, env });
    let screen = '';
    pty.onData((data) => (screen += data));
    const timer = setTimeout(() => pty.kill('SIGKILL'), 20_000);
    pty.onExit(({ exitCode }) => {
      clearTimeout(timer);
      resolve({ exitCode, screen });
    });
  });
}

/** jsqr is CommonJS: typed as a module with a default export, loaded as the function itself. */
const jsQR = ((jsqr as unknown as { default?: unknown }).default ?? jsqr) as typeof jsqr.default;

const LIGHT = 255;
const DARK = 0;

/**
 * The QR code as the terminal paints it: each half-block character is two
 * pixels, coloured by the SGR state (30/47 black on white, 0 back to the
 * terminal's defaults, taken as light text on a dark background).
 */
function screenToBitmap(screen: string, scale = 4): { data: Uint8ClampedArray; width: number; height: number } {
  const rows: number[][] = [];
  for (const line of screen.split(/\r?\n/)) {
    let fg = LIGHT;
    let bg = DARK;
    const top: number[] = [];
    const bottom: number[] = [];
    let blocks = 0;
    let other = false;
    for (let i = 0; i < line.length; i += 1) {
      const char = line[i] ?? '';
      if (char === '\u001b') {
        // eslint-disable-next-line no-control-regex -- reading the terminal's escape sequences is the point
        const match = /^\u001b\[([\d;]*)m/.exec(line.slice(i));
        if (match === null) continue;
        for (const code of (match[1] ?? '').split(';').map(Number)) {
          if (code === 0) [fg, bg] = [LIGHT, DARK];
          else if (code === 30) fg = DARK;
          else if (code === 37) fg = LIGHT;
          else if (code === 40) bg = DARK;
          else if (code === 47) bg = LIGHT;
        }
        i += match[0].length - 1;
        continue;
      }
      if (char === '\r') continue;
      if (!'\u2588\u2580\u2584 '.includes(char)) {
        other = true;
        break;
      }
      blocks += char === ' ' ? 0 : 1;
      top.push(char === '\u2588' || char === '\u2580' ? fg : bg);
      bottom.push(char === '\u2588' || char === '\u2584' ? fg : bg);
    }
    // A row of the picture: only block characters and spaces, wide enough, and not an empty line.
    if (!other && top.length >= 21 && (blocks > 0 || line.includes('\u001b['))) rows.push(top, bottom);
    else if (rows.length > 0) break;
  }
  const margin = 8;
  const widthModules = Math.max(...rows.map((row) => row.length));
  const width = widthModules * scale + 2 * margin;
  const height = rows.length * scale + 2 * margin;
  const data = new Uint8ClampedArray(width * height * 4).fill(LIGHT);
  rows.forEach((row, y) => {
    for (let x = 0; x < widthModules; x += 1) {
      const value = row[x] ?? LIGHT;
      for (let dy = 0; dy < scale; dy += 1) {
        for (let dx = 0; dx < scale; dx += 1) {
          const offset = ((margin + y * scale + dy) * width + margin + x * scale + dx) * 4;
          data[offset] = value;
          data[offset + 1] = value;
          data[offset + 2] = value;
        }
      }
    }
  });
  return { data, width, height };
}

function listenHost(): string {
  return (
    Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address ?? '127.0.0.1'
  );
}

describe('assent web --qr in a terminal (issue 13 item 2)', () => {
  it.each([
    ['with colour (black on white)', false],
    ['with NO_COLOR (light blocks on the usual dark background)', true],
  ])('R-REM-2 prints a QR code %s that decodes to the https URL with the pairing code in the fragment only', async (_how, noColor) => {
    const home = await startDaemon({ listen: `${listenHost()}:0`, tls: 'self-signed' });
    const env = ptyEnv({ ASSENT_HOME: home.home });
    if (!noColor) delete env['NO_COLOR'];
    const run = await runOnTerminal(['web', '--qr'], env);
    expect(run.exitCode).toBe(0);
    const url = /Approval page: (\S+)/.exec(run.screen)?.[1] ?? '';
    const code = /Pairing code: +([a-km-z]{8})/.exec(run.screen)?.[1] ?? '';
    expect(url).toMatch(/^https:\/\/[\d.]+:\d+\/$/);
    expect(code).not.toBe('');
    expect(run.screen.includes('\u001b[30;47m')).toBe(!noColor);
    expect(run.screen).toMatch(/Certificate: +SHA-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}/);

    const bitmap = screenToBitmap(run.screen);
    // No inversion allowed: the code must read the right way round as painted.
    const decoded = jsQR(bitmap.data, bitmap.width, bitmap.height, { inversionAttempts: 'dontInvert' });
    expect(decoded?.data).toBe(`${url}#code=${code}`);
    const parsed = new URL(decoded?.data ?? '');
    expect(parsed.protocol).toBe('https:');
    expect(parsed.pathname).toBe('/');
    expect(parsed.search).toBe('');
    expect(`${parsed.origin}${parsed.pathname}${parsed.search}`).not.toContain(code);
    expect(parsed.hash).toBe(`#code=${code}`);

    // The printed fingerprint is the one `--json` gives and `daemon status` reports.
    const json = await runCliInTerminal(home, ['web', '--json']);
    const data = (JSON.parse(json.stdout) as { data: { url: string; fingerprint: string } }).data;
    expect(data.url).toBe(url);
    expect(data.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const human = /Certificate: +SHA-256 (\S+)/.exec(run.screen)?.[1] ?? '';
    expect(`sha256:${human.replace(/:/g, '').toLowerCase()}`).toBe(data.fingerprint);
  });

  it('R-REM-2 --remember puts remember=1 beside the code in the fragment', async () => {
    const home = await startDaemon({ listen: '127.0.0.1:0', tls: 'self-signed' });
    const run = await runOnTerminal(['web', '--qr', '--remember'], ptyEnv({ ASSENT_HOME: home.home }));
    expect(run.exitCode).toBe(0);
    const code = /Pairing code: +([a-km-z]{8})/.exec(run.screen)?.[1] ?? '';
    const bitmap = screenToBitmap(run.screen);
    const decoded = jsQR(bitmap.data, bitmap.width, bitmap.height, { inversionAttempts: 'dontInvert' });
    expect(new URL(decoded?.data ?? 'x:').hash).toBe(`#code=${code}&remember=1`);
  });

  it('R-REM-2 on plain loopback HTTP --qr is refused and says what to set; no code is shown', async () => {
    const home = await startDaemon({ listen: '127.0.0.1:0' });
    const run = await runOnTerminal(['web', '--qr'], ptyEnv({ ASSENT_HOME: home.home }));
    expect(run.exitCode).toBe(65);
    expect(run.screen).toContain('web.publicUrl');
    expect(run.screen).toContain('web.tls');
    expect(run.screen).not.toMatch(/Pairing code:/);
  });
});
