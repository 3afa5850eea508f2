// One racer of the cross-host proof race (R-J-3, R-TEAM-1): a separate OS
// process with its own connection to one host's daemon. For every round it
// sends the identical handoff retry; when the daemon lets it run (the proof was
// consumed for it) it performs the effect itself, appending one line to the
// effects file, and reports the outcome. The parent counts those lines.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [dist, socketPath, effectsFile, name] = process.argv.slice(2);
const { DaemonClient } = await import(`${dist}/heads/daemon/rpcClient.js`);
const client = await DaemonClient.connect({ socketPath, autoSpawn: false });
process.stdout.write('ready\n');

for await (const line of createInterface({ input: process.stdin })) {
  if (line === '') continue;
  const { round, args } = JSON.parse(line);
  let report;
  try {
    const result = await client.call('calls.authorize', { sessionId: `racer-${name}`, server: 'fs', tool: 'write_file', args });
    if (result.replay !== undefined) {
      report = { round, outcome: 'replay', effectId: result.replay.effectId };
    } else {
      appendFileSync(effectsFile, `${round} ${name}\n`);
      await client.call('calls.finish', { callId: result.callId, outcome: 'ok', result: { content: [{ type: 'text', text: `ran ${round}` }] } });
      report = { round, outcome: 'consumed', effectId: result.effectId };
    }
  } catch (error) {
    report = { round, outcome: 'error', error: String(error?.details?.reason ?? error?.type ?? error?.message ?? error) };
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
client.close();
