// Issue 20 item 7: an upstream's start-up is observable. One that has not
// answered `initialize` after 5 s is named on `assent mcp`'s stderr at the
// default log level, with its command, while the gateway keeps waiting; and a
// stdio upstream inherits the proxy and CA variables (NODE_EXTRA_CA_CERTS …).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { CLI_ENTRY, cleanEnv, makeTempHome } from '../helpers/daemon.js';

const cleanups = cleanupsAfterEach();
/** A CA bundle that exists, so node loads it without a warning (a proxy's CA would sit here). */
const CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

/** An MCP server that records its environment, then answers initialize only after `delayMs`. */
const SLOW_SERVER = `
const fs = require('node:fs');
const [, , envFile, delayMs] = process.argv;
fs.writeFileSync(envFile, JSON.stringify(process.env));
let buffer = '';
process.stdin.setEncoding('utf8').on('data', (text) => {
  buffer += text;
  for (let at = buffer.indexOf('\\n'); at >= 0; at = buffer.indexOf('\\n')) {
    const message = JSON.parse(buffer.slice(0, at));
    buffer = buffer.slice(at + 1);
    if (message.method === 'initialize') {
      setTimeout(() => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'slow', version: '1' } } }) + '\\n'), Number(delayMs));
    }
  }
});
`;

describe('issue 20: upstream start-up is observable', () => {
  it('an upstream that answers initialize after 8 s is named with its command on stderr within 6 s; NODE_EXTRA_CA_CERTS and https_proxy reach it', async () => {
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    const script = join(home.home, 'slow-server.cjs');
    const envFile = join(home.home, 'upstream-env.json');
    writeFileSync(script, SLOW_SERVER);
    writeFileSync(
      home.paths.config,
      JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, servers: { slow: { command: process.execPath, args: [script, envFile, '8000'] } } }),
      { mode: 0o600 },
    );
    await home.startDaemon();
    const gateway = spawn(process.execPath, [CLI_ENTRY, 'mcp'], {
      env: cleanEnv({ ASSENT_HOME: home.home, ASSENT_NO_AUTOSPAWN: '1', NODE_EXTRA_CA_CERTS: CA_FILE, https_proxy: 'http://proxy.invalid:3128', SECRET_TOKEN: 'not-inherited' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => gateway.kill('SIGKILL'));
    let stderr = '';
    let stdout = '';
    gateway.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    gateway.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const sent = performance.now();
    gateway.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    await expect.poll(() => stderr, { timeout: 6_000, interval: 100 }).toContain('upstream has not answered initialize within 5 s');
    expect(performance.now() - sent).toBeLessThan(6_000);
    expect(stderr).toContain('slow');
    expect(stderr).toContain(script);
    expect(stdout).toBe('');
    // The gateway kept waiting: the answer arrives once the upstream gives it.
    await expect.poll(() => stdout, { timeout: 10_000, interval: 100 }).toContain('"protocolVersion"');
    expect(existsSync(envFile)).toBe(true);
    const env = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    expect(env['NODE_EXTRA_CA_CERTS']).toBe(CA_FILE);
    expect(env['https_proxy']).toBe('http://proxy.invalid:3128');
    expect(env['SECRET_TOKEN']).toBeUndefined();
  }, 30_000);
});
