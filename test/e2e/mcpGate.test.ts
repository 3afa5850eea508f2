// The gate of the built `assent mcp` in front of real upstreams: policy
// denials never reach the server, `prompt` fails closed without a daemon,
// several upstreams are named and decided per alias, and a crashing upstream
// or a departing client leaves no hang and no orphan process.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assentBin,
  everythingBin,
  filesystemBin,
  gatewayTransport,
  makeHome,
  processesWith,
  repoRoot,
  requireBuild,
  waitUntil,
  type TempHome,
} from './mcpFixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => requireBuild());

function filesystemServer(dir: string, marker: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [filesystemBin, dir, marker] };
}

/** A home with data dirs; `config` gets the marker and the dirs. */
function setup(config: (marker: string, dirs: { a: string; b: string }) => Record<string, unknown>): { home: TempHome; dirs: { a: string; b: string } } {
  let dirs = { a: '', b: '' };
  const home = makeHome((marker) => {
    return config(marker, dirs);
  });
  // makeHome calls config synchronously before the dirs exist; create them and rewrite the file with them.
  dirs = { a: join(home.home, 'data-a'), b: join(home.home, 'data-b') };
  mkdirSync(dirs.a);
  mkdirSync(dirs.b);
  writeFileSync(join(home.home, 'config.json'), JSON.stringify(config(home.marker, dirs)), { mode: 0o600 });
  cleanups.push(async () => {
    await waitUntil(() => processesWith(home.marker).length === 0);
    const left = processesWith(home.marker);
    home.cleanup();
    expect(left, 'processes left behind by the test').toEqual([]);
  });
  return { home, dirs };
}

async function connect(home: TempHome, args: string[] = []): Promise<{ client: Client; stderr: () => string }> {
  const spawned = gatewayTransport(home.home, args);
  const client = new Client({ name: 'gate-test', version: '1.0.0' });
  await client.connect(spawned.transport);
  cleanups.push(() => client.close());
  return { client, stderr: spawned.stderr };
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('assent mcp gate (R-MCP-3, R-MCP-5)', () => {
  it('R-MCP-3 a deny policy gives isError naming policy and server-filesystem never writes the file', async () => {
    const { home, dirs } = setup((marker, d) => ({
      servers: { fs: filesystemServer(d.a, marker) },
      policy: { default: 'allow', destructive: 'allow', tools: { 'fs/write_file': 'deny' } },
    }));
    const { client } = await connect(home);
    const target = join(dirs.a, 'side-effect.txt');
    const result = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'should never exist' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('policy');
    expect(text(result)).toContain('policy.tools.fs/write_file');
    expect(existsSync(target)).toBe(false);
    // The same server still serves allowed calls.
    writeFileSync(join(dirs.a, 'readme.txt'), 'hello');
    const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(dirs.a, 'readme.txt') } });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('hello');
  });

  it('R-MCP-5 prompt with no daemon reachable gives no_consent_channel; an allow tool still works', async () => {
    // Defaults: default allow, destructive prompt; write_file is destructive by its annotations, read_text_file read-only.
    const { home, dirs } = setup((marker, d) => ({ servers: { fs: filesystemServer(d.a, marker) } }));
    const { client } = await connect(home);
    const target = join(dirs.a, 'needs-consent.txt');
    const refused = await client.callTool({ name: 'write_file', arguments: { path: target, content: 'x' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('no_consent_channel');
    expect(text(refused)).toContain('assent daemon run');
    expect(existsSync(target)).toBe(false);
    const listed = await client.callTool({ name: 'list_allowed_directories', arguments: {} });
    expect(listed.isError).toBeFalsy();
    expect(text(listed)).toContain(dirs.a);
  });

  it('R-MCP-2 R-POL-1 two upstreams: <alias>__<tool> names and <alias>/<tool> policy keys hit the right server', async () => {
    const { home, dirs } = setup((marker, d) => ({
      servers: { a: filesystemServer(d.a, marker), b: filesystemServer(d.b, marker) },
      policy: { default: 'allow', destructive: 'prompt', tools: { 'a/write_file': 'allow', 'b/write_file': 'deny' } },
    }));
    const { client } = await connect(home);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('a__write_file');
    expect(names).toContain('b__write_file');
    expect(names).not.toContain('write_file');

    const inA = join(dirs.a, 'written.txt');
    const ok = await client.callTool({ name: 'a__write_file', arguments: { path: inA, content: 'via a' } });
    expect(ok.isError).toBeFalsy();
    expect(readFileSync(inA, 'utf8')).toBe('via a');

    const inB = join(dirs.b, 'written.txt');
    const denied = await client.callTool({ name: 'b__write_file', arguments: { path: inB, content: 'via b' } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain('policy.tools.b/write_file');
    expect(existsSync(inB)).toBe(false);

    // Each alias reaches its own server.
    expect(text(await client.callTool({ name: 'b__list_allowed_directories', arguments: {} }))).toContain(dirs.b);
    expect(text(await client.callTool({ name: 'a__list_allowed_directories', arguments: {} }))).not.toContain(dirs.b);
  });

  it('--server limits the gateway to the named alias and refuses an unknown one', async () => {
    const { home, dirs } = setup((marker, d) => ({
      servers: { a: filesystemServer(d.a, marker), b: filesystemServer(d.b, marker) },
    }));
    const { client } = await connect(home, ['--server', 'b']);
    expect(text(await client.callTool({ name: 'list_allowed_directories', arguments: {} }))).toContain(dirs.b);

    const bad = spawn(process.execPath, [assentBin, 'mcp', '--server', 'nope'], {
      env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    bad.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    bad.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const code = await new Promise<number | null>((resolve) => bad.on('exit', resolve));
    expect(code).toBe(64);
    expect(stderr).toContain('--server nope');
    expect(stderr).toContain('a, b');
    expect(stdout).toBe('');
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

describe('R-MCP-1 Streamable HTTP upstream', () => {
  it('fronts a server given by url: allowed calls pass, denied ones never arrive', async () => {
    const port = await freePort();
    const { home } = setup(() => ({
      servers: { web: { url: `http://127.0.0.1:${port}/mcp` } },
      policy: { default: 'allow', destructive: 'allow', tools: { 'web/get-sum': 'deny' } },
    }));
    const upstream = spawn(process.execPath, [everythingBin, 'streamableHttp', home.marker], {
      env: { ...getDefaultEnvironment(), PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    cleanups.push(async () => {
      upstream.kill('SIGTERM');
      await new Promise((resolve) => (upstream.exitCode === null ? upstream.once('exit', resolve) : resolve(null)));
    });
    let log = '';
    upstream.stderr.on('data', (c: Buffer) => (log += c.toString()));
    expect(await waitUntil(() => log.includes('listening'))).toBe(true);
    const { client } = await connect(home);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(text(await client.callTool({ name: 'echo', arguments: { message: 'over http' } }))).toContain('over http');
    const denied = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain('policy.tools.web/get-sum');
  });
});

describe('assent mcp lifecycle', () => {
  it('an upstream that cannot start is a clear error naming it (exit 69), with nothing on stdout', async () => {
    const { home } = setup(() => ({ servers: { broken: { command: '/nonexistent/mcp-server' } } }));
    const gateway = spawn(process.execPath, [assentBin, 'mcp'], {
      env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    gateway.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    gateway.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const code = await new Promise<number | null>((resolve) => gateway.on('exit', resolve));
    expect(code).toBe(69);
    expect(stderr).toContain('Could not start MCP server "broken"');
    expect(stderr).toContain('servers.broken');
    expect(stdout).toBe('');
  });

  it('an upstream that crashes mid-call gives clear errors, not a hang; no orphan is left', async () => {
    const { home } = setup(() => ({ servers: {} }));
    const script = join(home.home, 'crashy.mjs');
    const sdk = (path: string): string => pathToFileURL(join(repoRoot, 'node_modules/@modelcontextprotocol/sdk/dist/esm', path)).href;
    writeFileSync(
      script,
      [
        `import { McpServer } from ${JSON.stringify(sdk('server/mcp.js'))};`,
        `import { StdioServerTransport } from ${JSON.stringify(sdk('server/stdio.js'))};`,
        `const server = new McpServer({ name: 'crashy', version: '1.0.0' });`,
        `server.registerTool('echo', { description: 'echo', annotations: { readOnlyHint: true } }, () => ({ content: [{ type: 'text', text: 'ok' }] }));`,
        `server.registerTool('crash', { description: 'exits mid-call', annotations: { readOnlyHint: true } }, () => { setTimeout(() => process.exit(3), 20); return new Promise(() => {}); });`,
        `await server.connect(new StdioServerTransport());`,
      ].join('\n'),
    );
    writeFileSync(
      join(home.home, 'config.json'),
      JSON.stringify({ servers: { crashy: { command: process.execPath, args: [script, home.marker] } } }),
      { mode: 0o600 },
    );
    const { client } = await connect(home);
    expect(text(await client.callTool({ name: 'echo', arguments: {} }))).toBe('ok');
    await expect(client.callTool({ name: 'crash', arguments: {} })).rejects.toThrow(/MCP server "crashy" stopped.*servers\.crashy/);
    await expect(client.callTool({ name: 'echo', arguments: {} })).rejects.toThrow(/MCP server "crashy" stopped/);
    await expect(client.listTools()).rejects.toThrow(/MCP server "crashy" stopped/);
    await client.ping().catch(() => undefined);
  });

  it('the gateway exits when the client closes its stdin, and stops its upstreams', async () => {
    const { home, dirs } = setup((marker, d) => ({ servers: { a: filesystemServer(d.a, marker), b: filesystemServer(d.b, marker) } }));
    const gateway = spawn(process.execPath, [assentBin, 'mcp'], {
      env: { ...getDefaultEnvironment(), ASSENT_HOME: home.home, ASSENT_SOCKET: join(home.home, 'none.sock'), ASSENT_NO_AUTOSPAWN: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      if (gateway.exitCode === null) gateway.kill('SIGKILL');
    });
    gateway.stderr.resume();
    let stdout = '';
    gateway.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    gateway.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
    );
    expect(await waitUntil(() => stdout.includes('"id":1'))).toBe(true);
    expect(processesWith(home.marker)).toHaveLength(2);
    const exited = new Promise<number | null>((resolve) => gateway.on('exit', (code) => resolve(code)));
    gateway.stdin.end();
    expect(await exited).toBe(0);
    expect(await waitUntil(() => processesWith(home.marker).length === 0)).toBe(true);
    expect(dirs.a).not.toBe('');
  });
});
