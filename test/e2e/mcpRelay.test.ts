// How the built `assent mcp` relays over stdio (SPEC §10 design note), with a
// real daemon: an upstream's answer reaches the client as the same bytes, the
// client's ids reach the upstream as it sent them, a tools/call goes upstream
// written from exactly what was decided and audited, and the end of stdin stops
// the gateway and its upstream. Client and upstream both speak raw lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempHome, type TempHome, auditLines } from '../helpers/daemon.js';
import { assentBin, requireBuild, waitUntil } from './mcpFixtures.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

beforeAll(() => requireBuild());

/**
 * An MCP server without any SDK: writes its pid and every line it reads to files, and answers
 * tools/call with a line spaced and ordered as no serializer would write it.
 */
const UPSTREAM = `
import { appendFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const [log, pidFile] = process.argv.slice(2);
writeFileSync(pidFile, String(process.pid));
for await (const line of createInterface({ input: process.stdin })) {
  appendFileSync(log, line + '\\n');
  const message = JSON.parse(line);
  if (message.id === undefined || typeof message.method !== 'string') continue;
  const id = JSON.stringify(message.id);
  let out;
  if (message.method === 'initialize') out = '{"jsonrpc":"2.0","id":' + id + ',"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"odd","version":"1.0.0"}}}';
  else if (message.method === 'tools/list') out = '{"jsonrpc":"2.0","id":' + id + ',"result":{"tools":[{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}';
  else out = '{ "result" : { "content" : [ { "type" : "text", "text" : "ran" } ], "x-vendor" : { "n" : 1.50 } }, "id" : ' + id + ', "jsonrpc" : "2.0" }';
  process.stdout.write(out + '\\n');
}
`;

const ODD_ANSWER = (id: string): string => `{ "result" : { "content" : [ { "type" : "text", "text" : "ran" } ], "x-vendor" : { "n" : 1.50 } }, "id" : ${id}, "jsonrpc" : "2.0" }`;

interface Stack {
  home: TempHome;
  received(): Record<string, unknown>[];
  upstreamPid(): number | undefined;
}

async function startStack(): Promise<Stack> {
  const home = makeTempHome();
  cleanups.push(() => home.cleanup());
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  const script = join(home.home, 'odd.mjs');
  const log = join(home.home, 'received.ndjson');
  const pidFile = join(home.home, 'upstream.pid');
  writeFileSync(script, UPSTREAM);
  writeFileSync(
    home.paths.config,
    JSON.stringify({
      notifications: false,
      web: { listen: '127.0.0.1:0' },
      servers: { odd: { command: process.execPath, args: [script, log, pidFile] } },
      policy: { default: 'allow', destructive: 'allow', tools: {} },
    }),
    { mode: 0o600 },
  );
  await home.startDaemon();
  return {
    home,
    received: () =>
      (existsSync(log) ? readFileSync(log, 'utf8') : '')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    upstreamPid: () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined),
  };
}

/** The built gateway on raw stdio: every stdout line kept as it arrived. */
class RawGateway {
  readonly lines: string[] = [];
  stderr = '';
  private buffer = '';

  constructor(readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      let newline: number;
      while ((newline = this.buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.buffer.slice(0, newline));
        this.buffer = this.buffer.slice(newline + 1);
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  write(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** The raw line answering `id`. */
  async answer(id: unknown): Promise<string> {
    const find = (): string | undefined => this.lines.find((line) => (JSON.parse(line) as { id?: unknown }).id === id);
    if (!(await waitUntil(() => find() !== undefined || !this.alive, 15_000))) throw new Error(`no answer to ${JSON.stringify(id)}; stderr: ${this.stderr}`);
    const line = find();
    if (line === undefined) throw new Error(`the gateway exited before answering ${JSON.stringify(id)}; stderr: ${this.stderr}`);
    return line;
  }
}

async function startGateway(stack: Stack): Promise<RawGateway> {
  const child = spawn(process.execPath, [assentBin, 'mcp'], { env: { ...stack.home.env, ASSENT_NO_AUTOSPAWN: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  const gateway = new RawGateway(child);
  cleanups.push(async () => {
    if (!gateway.alive) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  });
  gateway.write('{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-agent","version":"1.0.0"}}}');
  expect(JSON.parse(await gateway.answer('init-1'))).toMatchObject({ result: { serverInfo: { name: 'odd' } } });
  gateway.write('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return gateway;
}

describe('assent mcp relays at the message level over stdio', () => {
  it('R-MCP-2 an allowed call: the client ids reach the upstream as sent, the answer comes back as the upstream wrote it, the call is audited', async () => {
    const stack = await startStack();
    const gateway = await startGateway(stack);
    gateway.write('{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}');
    await gateway.answer('list-1');
    gateway.write('{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"look","arguments":{ "path" : "/srv/a" }}}');
    gateway.write('{"jsonrpc":"2.0","id":"call-b","method":"tools/call","params":{"name":"look","arguments":{"path":"/srv/b"}}}');
    expect(await gateway.answer(17)).toBe(ODD_ANSWER('17'));
    expect(await gateway.answer('call-b')).toBe(ODD_ANSWER('"call-b"'));
    // The gateway's own requests (its tools/list after initialize) use ids of their own namespace.
    const clientIds = stack.received().map((m) => m['id']).filter((id) => !(typeof id === 'string' && id.startsWith('assent-gw:')));
    expect(clientIds).toEqual(['init-1', undefined, 'list-1', 17, 'call-b']);
    // What the upstream ran is the gateway's serialization of the decided arguments, not the client's spacing.
    expect(stack.received().filter((m) => m['method'] === 'tools/call').map((m) => m['params'])).toEqual([
      { name: 'look', arguments: { path: '/srv/a' } },
      { name: 'look', arguments: { path: '/srv/b' } },
    ]);
    await expect.poll(() => auditLines(stack.home).map((l) => `${String(l['tool'])}:${String(l['outcome'])}`), { timeout: 10_000 }).toEqual(['look:ok', 'look:ok']);
  }, 60_000);

  it('R-MCP-1 the end of stdin stops the gateway and the upstream it started', async () => {
    const stack = await startStack();
    const gateway = await startGateway(stack);
    const pid = stack.upstreamPid();
    expect(pid).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', resolve));
    gateway.child.stdin?.end();
    expect(await exited).toBe(0);
    const alive = (): boolean => {
      try {
        process.kill(pid as number, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(await waitUntil(() => !alive(), 5000)).toBe(true);
  }, 60_000);
});
