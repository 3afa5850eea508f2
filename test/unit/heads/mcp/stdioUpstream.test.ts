// A stdio upstream as the gateway runs it: a real child process over a line
// link, and the stop sequence (stdin end, SIGTERM, SIGKILL) of the MCP stdio
// convention. Children are tiny node scripts and always stopped.
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioUpstreamLink } from '../../../../src/heads/mcp/stdioUpstream.js';
import { DeferredTransportLink } from '../../../../src/heads/mcp/sdkUpstream.js';
import { DEFAULT_INHERITED_VARIABLES, inheritedUpstreamEnvironment, upstreamTransportFactory } from '../../../../src/heads/mcp/upstream.js';
import type { WireMessage } from '../../../../src/heads/mcp/wire.js';

const open: StdioUpstreamLink[] = [];
afterEach(async () => {
  for (const link of open.splice(0)) await link.close();
});

/** A child that answers each line with a spaced copy of its id, and exits when stdin ends unless told to linger. */
const CHILD = `
const linger = process.argv[1] === 'linger';
if (linger) process.on('SIGTERM', () => undefined);
let buffer = '';
process.stdin.setEncoding('utf8').on('data', (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf('\\n')) !== -1) {
    const message = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    process.stdout.write('{ "jsonrpc" : "2.0", "id" : ' + JSON.stringify(message.id) + ', "result" : { "echo" : ' + JSON.stringify(message.method) + ' } }\\n');
  }
});
process.stdin.on('end', () => { if (!linger) process.exit(0); });
if (linger) setInterval(() => undefined, 1000);
`;

function childLink(mode: 'exit' | 'linger', stopGraceMs = 2000): StdioUpstreamLink {
  const link = new StdioUpstreamLink({ alias: 'kid', command: process.execPath, args: ['-e', CHILD, mode], env: {}, stopGraceMs });
  open.push(link);
  return link;
}

describe('StdioUpstreamLink', () => {
  it('R-MCP-1 sends lines to the child and hands over its answers with their original text', async () => {
    const link = childLink('exit');
    const received: { message: WireMessage; line: string | undefined }[] = [];
    link.onmessage = (message, line) => received.push({ message, line });
    await link.start();
    expect(link.send({ jsonrpc: '2.0', id: 'a', method: 'ping' })).toBe(true);
    for (let i = 0; i < 500 && received.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(received).toEqual([{ message: { jsonrpc: '2.0', id: 'a', result: { echo: 'ping' } }, line: '{ "jsonrpc" : "2.0", "id" : "a", "result" : { "echo" : "ping" } }' }]);
  });

  it('R-MCP-1 close ends stdin and a child that exits on it is gone without a signal', async () => {
    const link = childLink('exit');
    let closed = 0;
    link.onclose = () => (closed += 1);
    await link.start();
    const started = performance.now();
    await link.close();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(closed).toBe(1);
  });

  it('R-MCP-1 a child that ignores the end of stdin and SIGTERM is killed, one grace period after each step', async () => {
    const link = childLink('linger', 150);
    let closed = 0;
    link.onclose = () => (closed += 1);
    await link.start();
    const started = performance.now();
    await link.close();
    for (let i = 0; i < 200 && closed === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
  });

  it('a command that cannot be spawned rejects start with the system error', async () => {
    const link = new StdioUpstreamLink({ alias: 'none', command: '/nonexistent/assent-test-command', args: [], env: {} });
    open.push(link);
    link.onerror = () => undefined;
    await expect(link.start()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('upstreamTransportFactory', () => {
  it('uses the line link for a stdio server, and keeps the SDK stdio transport on Windows for its .cmd resolution', async () => {
    const spec = { alias: 'fs', command: 'npx', args: ['-y', 'server'] };
    expect(upstreamTransportFactory({ platform: 'linux' })(spec)).toBeInstanceOf(StdioUpstreamLink);
    const windows = upstreamTransportFactory({ platform: 'win32' })(spec);
    expect(windows).toBeInstanceOf(DeferredTransportLink);
    expect(await (windows as DeferredTransportLink).transport()).toBeInstanceOf(StdioClientTransport);
  });

  it('loads the SDK Streamable HTTP transport for a url server only when its link is used', async () => {
    const link = upstreamTransportFactory({ platform: 'linux' })({ alias: 'web', url: 'http://127.0.0.1:9/mcp', headers: { authorization: 'Bearer t' } });
    expect(link).toBeInstanceOf(DeferredTransportLink);
    expect(link.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).toBe(false);
    expect(await (link as DeferredTransportLink).transport()).toBeInstanceOf(StreamableHTTPClientTransport);
  });

  it("a stdio child inherits the SDK's own list of variables, skipping shell functions, plus the proxy and CA variables", () => {
    expect(DEFAULT_INHERITED_VARIABLES).toEqual(DEFAULT_INHERITED_ENV_VARS);
    const env = inheritedUpstreamEnvironment({ HOME: '/home/a', PATH: '/bin', SHELL: '() { evil; }', HTTPS_PROXY: 'http://proxy:3128', SECRET_TOKEN: 'x', no_proxy: 'localhost' });
    expect(env).toEqual({ HOME: '/home/a', PATH: '/bin', HTTPS_PROXY: 'http://proxy:3128', no_proxy: 'localhost' });
  });
});
