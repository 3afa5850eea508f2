// CPU per call of one stdio MCP proxy: an SDK client keeps 32 echo calls in flight
// through it to server-everything, and the proxy's own user+system time (from
// /proc/PID/stat) over the second half of the calls is divided by their count, with
// its read and write syscalls (/proc/PID/io). A tool for finding where a proxy's
// time goes, beside the throughput of gateway.bench.mjs:
// `node bench/cpuPerCall.mjs [relay|auditing|assent] [calls]`. CPU_WRAP=<program>
// starts the proxy as `<program> <side> node <proxy args…>`, e.g. a script that adds
// --cpu-prof. The figures are in /proc's 10 ms ticks: use 40,000 calls or more.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const assentBin = join(root, 'dist/bin/assent.js');
const upstreamArgv = [process.execPath, join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'];
const IN_FLIGHT = 32;
const ticks = 100; // USER_HZ on Linux

/** Read and write syscalls so far (/proc/PID/io). */
const syscalls = (pid) => {
  const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n').map((line) => line.split(': ')));
  return { reads: Number(io.syscr), writes: Number(io.syscw) };
};

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
};

async function run(side, total) {
  const home = mkdtempSync(join(tmpdir(), 'assent-cpu-'));
  chmodSync(home, 0o700);
  writeFileSync(join(home, 'config.json'), JSON.stringify({ servers: { everything: { command: upstreamArgv[0], args: upstreamArgv.slice(1) } }, policy: { default: 'allow', destructive: 'allow' }, notifications: false }), { mode: 0o600 });
  let daemon;
  const env = { ...getDefaultEnvironment(), ASSENT_HOME: home, ASSENT_NO_AUTOSPAWN: '1' };
  if (side === 'assent') {
    daemon = spawn(process.execPath, [assentBin, 'daemon', 'run'], { env: { ...process.env, ASSENT_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    daemon.stderr.on('data', (d) => (err += d));
    for (let i = 0; i < 500 && !err.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
  }
  const argv = { relay: [join(root, 'bench/refs/byteRelay.mjs'), ...upstreamArgv], auditing: [join(root, 'bench/refs/auditingProxy.mjs'), ...upstreamArgv], assent: [assentBin, 'mcp'] }[side];
  const transport = process.env.CPU_WRAP ? new StdioClientTransport({ command: process.env.CPU_WRAP, args: [side, process.execPath, ...argv], env, stderr: 'pipe' }) : new StdioClientTransport({ command: process.execPath, args: argv, env, stderr: 'pipe' });
  transport.stderr?.resume();
  const client = new Client({ name: 'cpu', version: '1' });
  await client.connect(transport);
  let n = 0;
  const burst = async (count) => {
    let issued = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (issued < count) {
        issued += 1;
        await client.callTool({ name: 'echo', arguments: { message: `m${n++}` } });
      }
    }));
  };
  await burst(total / 2);
  const before = cpuMs(transport.pid);
  const ioBefore = syscalls(transport.pid);
  const started = performance.now();
  await burst(total / 2);
  const wall = performance.now() - started;
  const used = cpuMs(transport.pid) - before;
  const ioAfter = syscalls(transport.pid);
  const per = (count) => Math.round((count / (total / 2)) * 1000) / 1000;
  await client.close();
  if (daemon !== undefined) {
    const exited = new Promise((done) => daemon.once('exit', done));
    daemon.kill('SIGTERM');
    await exited;
  }
  rmSync(home, { recursive: true, force: true });
  return { side, usPerCall: (used * 1000) / (total / 2), callsPerSecond: Math.round((total / 2) / (wall / 1000)), readsPerCall: per(ioAfter.reads - ioBefore.reads), writesPerCall: per(ioAfter.writes - ioBefore.writes) };
}

const sides = process.argv[2] ? [process.argv[2]] : ['relay', 'auditing', 'assent'];
const total = Number(process.argv[3] ?? 40000);
for (const side of sides) console.log(JSON.stringify(await run(side, total)));
