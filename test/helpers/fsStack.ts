// The stack most end-to-end tests stand on: a private ASSENT_HOME whose config
// fronts @modelcontextprotocol/server-filesystem (alias `fs`) over a temp dir,
// a real daemon, and an official SDK client talking to the built `assent mcp`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assentBin, filesystemBin } from '../e2e/mcpFixtures.js';
import { makeTempHome, type TempHome } from './daemon.js';

import type { Cleanups } from './cleanups.js';

export type { Cleanups } from './cleanups.js';

export interface FsStack {
  home: TempHome;
  /** The directory server-filesystem serves; its files are the upstream's side effects. */
  dir: string;
}

/**
 * Writes config.json (notifications off, the web head on a free port, `fs` in
 * front of `dir`, then `config` merged over it) and starts the daemon (with `daemonEnv` added to its environment).
 */
export async function startFsStack(cleanups: Cleanups, config: Record<string, unknown>, daemonEnv: NodeJS.ProcessEnv = {}): Promise<FsStack> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  const dir = mkdtempSync(join(tmpdir(), 'assent-fs-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(
    home.paths.config,
    JSON.stringify({
      notifications: false,
      web: { listen: '127.0.0.1:0' },
      servers: { fs: { command: process.execPath, args: [filesystemBin, dir] } },
      ...config,
    }),
    { mode: 0o600 },
  );
  await home.startDaemon(daemonEnv);
  return { home, dir };
}

/** An SDK client connected through the built `assent mcp` of that home (auto-spawn off). */
export async function connectGateway(cleanups: Cleanups, home: TempHome, args: string[] = [], options: ClientOptions = {}, setup?: (client: Client) => void): Promise<{ client: Client; stderr: () => string }> {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' }, options);
  setup?.(client);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [assentBin, 'mcp', ...args],
    env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, stderr: () => stderr };
}
