// The soak's fake MCP server over stdio: three tools the soak's policy treats
// three ways, echo (read-only: allowed), erase (destructive: denied by
// policy.tools) and deploy (destructive: asks a person). Every tools/call it
// runs is first logged, one line `<tool> <n>`, to the file named by its first
// argument, written at once: the log is the record of effects that ran, which
// the soak counts against the audit and against what the client was answered.
import { openSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';

const log = openSync(process.argv[2], 'a');
const answer = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const tools = [
  { name: 'echo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'erase', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: true } },
  { name: 'deploy', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: true } },
];
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === '') return;
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  switch (message.method) {
    case 'initialize':
      answer({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'soak', version: '1.0.0' } } });
      return;
    case 'tools/list':
      answer({ jsonrpc: '2.0', id: message.id, result: { tools } });
      return;
    case 'tools/call':
      writeSync(log, `${String(message.params.name)} ${String(message.params.arguments?.n)}\n`);
      answer({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: String(message.params.arguments?.n) }] } });
      return;
    default:
      answer({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no ${String(message.method)}` } });
  }
});
process.stdin.on('end', () => process.exit(0));
