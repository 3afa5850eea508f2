// The soak's MCP client: the official SDK client over stdio to a real
// `assent mcp` (ASSENT_NO_AUTOSPAWN=1: the soak alone starts daemons) in front
// of bench/soak/upstream.mjs. It sends bursts of calls with IN_FLIGHT of them
// outstanding at every moment: mostly `echo` (allowed), every ERASE_EVERY-th an
// `erase` (denied by policy), every DEPLOY_EVERY-th a `deploy` (asks a person;
// `want` in its arguments tells the approver which way to decide). Every call has
// a unique n; what the client was answered is kept per n.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI_ENTRY } from './home.mjs';

export const IN_FLIGHT = 32;
const ERASE_EVERY = 50;
const DEPLOY_EVERY = 200;

/** Sleeps `ms`, or less when `signal` aborts meanwhile. */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** The refusal code of a gateway answer ("assent refused soak/erase: policy. …", "assent did not run soak/echo: unavailable. …"). */
function refusalCode(text) {
  return /^assent (?:[a-z]+ )+\S+: ([a-z_]+)/.exec(text)?.[1] ?? 'other';
}

export async function connectGateway(env) {
  const client = new Client({ name: 'assent-soak', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI_ENTRY, 'mcp'], env: { ...getDefaultEnvironment(), ...env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.setEncoding('utf8').on('data', (text) => (stderr = (stderr + text).slice(-16_384)));
  await client.connect(transport);
  return { client, transport, pid: transport.pid, stderr: () => stderr };
}

/**
 * Every `everyMs`, a burst of `perBurst` calls with IN_FLIGHT outstanding, until `signal` aborts
 * (the burst under way is finished). Returns the calls, each { n, tool, want?, at, ms, answer, code? }.
 */
export function driveGateway({ client, perBurst, everyMs, signal }) {
  const calls = [];
  let next = 0;
  let bursts = 0;
  const started = performance.now();
  const one = async () => {
    const n = next++;
    const tool = n % DEPLOY_EVERY === DEPLOY_EVERY - 1 ? 'deploy' : n % ERASE_EVERY === ERASE_EVERY - 1 ? 'erase' : 'echo';
    const args = tool === 'deploy' ? { n, want: (n / DEPLOY_EVERY) % 2 < 1 ? 'yes' : 'no' } : { n };
    const call = { n, tool, args, at: (performance.now() - started) / 1000 };
    calls.push(call);
    const t0 = performance.now();
    try {
      // A deploy waits for a person: far longer than the SDK's 60 s default.
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 15 * 60_000 });
      const text = result.content?.[0]?.text ?? '';
      if (result.isError === true) {
        call.answer = 'refused';
        call.code = refusalCode(text);
        if (call.code === 'other') call.text = text.slice(0, 300);
      } else {
        call.answer = text === String(n) ? 'ok' : 'wrong';
      }
    } catch (error) {
      call.answer = 'error';
      call.code = error instanceof Error ? error.message.slice(0, 200) : String(error);
    }
    call.ms = Math.round(performance.now() - t0);
  };
  const burst = async () => {
    let issued = 0;
    const worker = async () => {
      while (issued < perBurst) {
        issued += 1;
        await one();
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    bursts += 1;
  };
  const done = (async () => {
    while (!signal.aborted) {
      const t0 = performance.now();
      await burst();
      const rest = everyMs - (performance.now() - t0);
      if (rest > 0 && !signal.aborted) await pause(rest, signal);
    }
  })();
  return { calls, done, bursts: () => bursts };
}
