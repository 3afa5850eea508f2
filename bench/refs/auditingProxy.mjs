// The least a stdio proxy that gates and audits tool calls must do per call (SPEC §14),
// as a reference beside the byte relay: it reads lines, JSON.parse's each client line and
// writes it on re-serialized (an upstream must read only what was decided), matches each
// answer to its call by id, and within 20 ms appends one line per call holding the SHA-256
// of its arguments to a spool file (durable audit). No policy, no checks, no daemon: what
// assent's gateway costs above this is its own.
import { spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, write } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate } from 'node:timers';

const SPOOL_MS = 20;
const SPOOL_BATCH = 256;

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
const dir = mkdtempSync(join(tmpdir(), 'assent-bench-spool-'));
const spool = openSync(join(dir, 'spool.jsonl'), 'a', 0o600);

/** Calls `onLine` with each complete line of `stream`. */
function readLines(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const text = rest + chunk;
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      onLine(text.slice(start, newline));
      start = newline + 1;
    }
    rest = text.slice(start);
  });
}

/** Queues lines and writes what one event-loop turn queued in one write. */
function lineWriter(output) {
  let queued = [];
  return (line) => {
    if (queued.push(line) > 1) return;
    setImmediate(() => {
      const text = `${queued.join('\n')}\n`;
      queued = [];
      output.write(text);
    });
  };
}

const toUpstream = lineWriter(child.stdin);
const toClient = lineWriter(process.stdout);
const calls = new Map();
let settled = [];
let spoolTimer;

function writeSpool() {
  clearTimeout(spoolTimer);
  spoolTimer = undefined;
  let text = '';
  const at = Date.now();
  for (const call of settled) {
    text += `{"at":${at},"record":{"tool":${JSON.stringify(call.tool)},"argsSha256":"v1:sha256:${hash('sha256', JSON.stringify(call.args), 'hex')}","outcome":"ok"}}\n`;
  }
  settled = [];
  write(spool, text, () => undefined);
}

readLines(process.stdin, (line) => {
  const message = JSON.parse(line);
  if (message.method === 'tools/call') calls.set(message.id, { tool: message.params.name, args: message.params.arguments ?? {} });
  toUpstream(JSON.stringify(message));
});
readLines(child.stdout, (line) => {
  const id = /"id":(\d+)/.exec(line);
  const call = id === null ? undefined : calls.get(Number(id[1]));
  if (call !== undefined) {
    calls.delete(Number(id[1]));
    if (settled.push(call) >= SPOOL_BATCH) writeSpool();
    else spoolTimer ??= setTimeout(writeSpool, SPOOL_MS);
  }
  toClient(line);
});
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code) => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? 0);
});
