// R-AUD-1: one outcome word for "the caller went away while it waited": a
// gateway call whose request is cancelled while it waits for a person is
// audited `withdrawn`, as a hook call whose agent went away is.
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { toExportRecord } from '../../src/core/audit/auditExportRecord.js';
import { DaemonClient } from '../../src/heads/daemon/rpcClient.js';
import { auditLines, makeTempHome } from '../helpers/daemon.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('R-AUD-1 a waiting gateway call whose caller goes away', () => {
  it('is audited withdrawn (the reason says it was cancelled), exported as decidedHow withdrawn', async () => {
    const home = makeTempHome();
    cleanups.push(() => home.cleanup());
    mkdirSync(home.home, { recursive: true, mode: 0o700 });
    writeFileSync(home.paths.config, JSON.stringify({ notifications: false, servers: { fs: { command: 'true' } }, policy: { default: 'prompt' } }), { mode: 0o600 });
    await home.startDaemon();
    const client = await DaemonClient.connect({ socketPath: home.paths.socket, autoSpawn: false });
    cleanups.push(() => client.close());
    const abort = new AbortController();
    const waiting = client.call('calls.authorize', { sessionId: 's-w', server: 'fs', tool: 'write_file', args: { path: '/x' } }, { signal: abort.signal });
    waiting.catch(() => undefined);
    await expect.poll(async () => (JSON.parse((await home.runCli(['pending', '--json'])).stdout) as { data: unknown[] }).data.length, { timeout: 5000 }).toBe(1);
    abort.abort();
    await expect.poll(() => auditLines(home).length, { timeout: 5000 }).toBe(1);
    const [line] = auditLines(home) as [Record<string, unknown>];
    expect(line).toMatchObject({ outcome: 'withdrawn', deniedReason: 'cancelled', tool: 'write_file' });
    expect(toExportRecord(line, { id: 'h', name: 'n' }, 'x').decidedHow).toBe('withdrawn');
  }, 30_000);
});
