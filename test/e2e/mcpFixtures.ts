// Shared fixtures for the `assent mcp` end-to-end tests: a private ASSENT_HOME
// with a config.json, SDK stdio transports to the built binary or straight to
// an upstream, and a way to find processes a test left behind.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { inspectConfigFile } from '../../src/journal/configFile.js';
import { encodePin, PINNED_CONFIG_KEY } from '../../src/journal/confirmedConfig.js';
import { Journal } from '../../src/journal/journal.js';
import { resolveStatePaths } from '../../src/state/statePaths.js';

export const repoRoot = resolve(import.meta.dirname, '../..');
export const assentBin = join(repoRoot, 'dist/bin/assent.js');
export const everythingBin = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const filesystemBin = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

/** Fails with the fix when the binary under test has not been built. */
export function requireBuild(): void {
  if (!existsSync(assentBin)) throw new Error(`${assentBin} is missing; run \`npm run build\` before the e2e tests`);
}

export interface TempHome {
  home: string;
  /** A string unique to this home, put in upstream argv so `ps` can find them. */
  marker: string;
  cleanup(): void;
}

/** A fresh 0700 ASSENT_HOME holding config.json (0600). */
export function makeHome(config: (marker: string) => Record<string, unknown>): TempHome {
  const home = mkdtempSync(join(tmpdir(), 'assent-mcp-'));
  chmodSync(home, 0o700);
  const marker = `--assent-test-marker=${home}`;
  writeFileSync(join(home, 'config.json'), JSON.stringify(config(marker), null, 2), { mode: 0o600 });
  return { home, marker, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** server-everything over stdio; the marker argument is ignored by it and lets `ps` find it. */
export function everythingServer(marker: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [everythingBin, 'stdio', marker] };
}

export interface SpawnedTransport {
  transport: StdioClientTransport;
  stderr: () => string;
}

function withStderr(transport: StdioClientTransport): SpawnedTransport {
  let text = '';
  // Always drain stderr: an unread pipe would eventually block the child.
  transport.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { transport, stderr: () => text };
}

/**
 * Pins the home's config.json as confirmed, the way a daemon's first start does
 * (R-CFG-4): a gateway without a daemon obeys only a confirmed configuration.
 * A config.json that does not validate is left unconfirmed, as a daemon would refuse it.
 */
export function confirmConfig(home: string): void {
  const paths = resolveStatePaths({ ASSENT_HOME: home });
  const inspected = inspectConfigFile(paths.config);
  if (inspected.config === undefined) return;
  const journal = Journal.open(paths.journal);
  try {
    journal.writeMeta(PINNED_CONFIG_KEY, encodePin({ revision: inspected.revision, text: inspected.text ?? null }));
  } finally {
    journal.close();
  }
}

/** The built `assent mcp` with a private home whose config.json is confirmed, no daemon socket and auto-spawn off. */
export function gatewayTransport(home: string, args: string[] = [], env: Record<string, string> = {}): SpawnedTransport {
  confirmConfig(home);
  return withStderr(
    new StdioClientTransport({
      command: process.execPath,
      args: [assentBin, 'mcp', ...args],
      env: {
        ...getDefaultEnvironment(),
        ASSENT_HOME: home,
        ASSENT_SOCKET: join(home, 'no-daemon.sock'),
        ASSENT_NO_AUTOSPAWN: '1',
        ...env,
      },
      stderr: 'pipe',
    }),
  );
}

/** The same upstream, launched directly by the client. */
export function directTransport(command: string, args: string[]): SpawnedTransport {
  return withStderr(new StdioClientTransport({ command, args, env: getDefaultEnvironment(), stderr: 'pipe' }));
}

/** Command lines of live processes containing `needle` (never this test process). */
export function processesWith(needle: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(needle) && !line.includes('ps -eo'))
    .map((line) => line.trim());
}

export async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return condition();
}
