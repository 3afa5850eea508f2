// SPEC §14: allow-path overhead of `assent mcp`. The same SDK client calls the
// same upstream tool (server-everything `echo`) N times directly and through
// the built gateway (policy allow), in one run, interleaved in blocks so that
// machine noise hits both sides alike. Targets: p50 ≤ +0.3 ms, p99 ≤ +2 ms.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const assentBin = join(root, 'dist/bin/assent.js');
const everythingBin = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const TARGET_P50_MS = 0.3;
const TARGET_P99_MS = 2;

function percentile(sorted, p) {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}

async function connect(transport) {
  const client = new Client({ name: 'assent-bench', version: '1.0.0' });
  transport.stderr?.resume();
  await client.connect(transport);
  return client;
}

async function timeCalls(client, count, into) {
  for (let i = 0; i < count; i += 1) {
    const start = performance.now();
    await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    into.push(performance.now() - start);
  }
}

const round = (value) => Math.round(value * 1000) / 1000;

/** Rows `{ name, value, unit, target, ok }` for the bench runner. */
export async function benchGateway({ calls = 2000, block = 100, warmup = 200 } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'assent-bench-mcp-'));
  chmodSync(home, 0o700);
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      servers: { everything: { command: process.execPath, args: [everythingBin, 'stdio'] } },
      policy: { default: 'allow', destructive: 'allow' },
    }),
    { mode: 0o600 },
  );
  const direct = await connect(
    new StdioClientTransport({ command: process.execPath, args: [everythingBin, 'stdio'], env: getDefaultEnvironment(), stderr: 'pipe' }),
  );
  // The gateway runs as users run it: with a daemon, settling allow from the daemon's
  // policy snapshot and reporting each call for audit afterwards.
  const daemon = spawn(process.execPath, [assentBin, 'daemon', 'run'], { env: { ...process.env, ASSENT_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  let daemonErr = '';
  daemon.stderr.on('data', (d) => (daemonErr += d));
  for (let i = 0; i < 500 && !daemonErr.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
  const gateway = await connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [assentBin, 'mcp'],
      env: {
        ...getDefaultEnvironment(),
        ASSENT_HOME: home,
        ASSENT_NO_AUTOSPAWN: '1',
      },
      stderr: 'pipe',
    }),
  );
  try {
    await timeCalls(direct, warmup, []);
    await timeCalls(gateway, warmup, []);
    const directMs = [];
    const gatewayMs = [];
    for (let done = 0; done < calls; done += block) {
      const n = Math.min(block, calls - done);
      await timeCalls(direct, n, directMs);
      await timeCalls(gateway, n, gatewayMs);
    }
    directMs.sort((a, b) => a - b);
    gatewayMs.sort((a, b) => a - b);
    const d50 = percentile(directMs, 50);
    const d99 = percentile(directMs, 99);
    const g50 = percentile(gatewayMs, 50);
    const g99 = percentile(gatewayMs, 99);
    return [
      { name: `mcp echo direct p50 (n=${calls})`, value: round(d50), unit: 'ms', target: NaN, targetText: '(report)' },
      { name: `mcp echo direct p99 (n=${calls})`, value: round(d99), unit: 'ms', target: NaN, targetText: '(report)' },
      { name: `mcp echo via assent mcp + daemon p50 (n=${calls})`, value: round(g50), unit: 'ms', target: NaN, targetText: '(report)' },
      { name: `mcp echo via assent mcp + daemon p99 (n=${calls})`, value: round(g99), unit: 'ms', target: NaN, targetText: '(report)' },
      { name: 'gateway overhead p50 (allow path)', value: round(g50 - d50), unit: 'ms', target: TARGET_P50_MS, ok: g50 - d50 <= TARGET_P50_MS },
      { name: 'gateway overhead p99 (allow path)', value: round(g99 - d99), unit: 'ms', target: TARGET_P99_MS, ok: g99 - d99 <= TARGET_P99_MS },
    ];
  } finally {
    await direct.close();
    await gateway.close();
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.table(await benchGateway());
}
