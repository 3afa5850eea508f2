// R-AUD-1 across a restart's gap: a call the gateway refuses as `unavailable`
// because no daemon runs is still one audit line. The built `assent mcp` in
// front of the real server-filesystem spools each refusal with the time it was
// refused; the next daemon reads the spool into the chain, the chain verifies,
// and the CEF export carries every one as decidedHow `unavailable`. Both ways a
// daemon goes away are tried: kill -9 (5 calls) and a graceful stop (3 calls).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/core/base/canonical.js';
import { auditLines, daemonsForHome } from '../helpers/daemon.js';
import { connectGateway, startFsStack, type Cleanups } from '../helpers/fsStack.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

/** The CEF file's records as key → value maps (values unescaped as CEF escapes them). */
function cefRecords(file: string): Map<string, string>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes('CEF:0|'))
    .map((line) => {
      const extension = line.slice(line.indexOf('CEF:0|')).split('|').slice(7).join('|');
      const fields = new Map<string, string>();
      for (const match of extension.matchAll(/(\w+)=((?:[^\s\\]|\\.|\s(?!\w+=))*)/g)) fields.set(match[1]!, match[2]!.replace(/\\(.)/g, '$1'));
      return fields;
    });
}

describe('R-AUD-1 calls a gateway refuses while no daemon runs', () => {
  it('after kill -9 and after a graceful stop, each refused call has its line in the chain at the time it was refused, and is exported as unavailable', async () => {
    const cefFile = join(tmpdir(), `assent-unavailable-${process.pid}-${Date.now()}.cef`);
    const { home, dir } = await startFsStack(cleanups, {
      policy: { default: 'allow' },
      audit: { export: [{ kind: 'cef', file: cefFile }] },
    });
    cleanups.push(() => rmSync(cefFile, { force: true }));
    const { client } = await connectGateway(cleanups, home);
    const first = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
    expect(first.isError, text(first)).toBeFalsy();

    const refuseWhileDown = async (label: string, count: number): Promise<{ digests: string[]; from: number; to: number }> => {
      const from = Date.now();
      // Sent together: each waits out the gateway's short reconnect window, then is refused.
      const paths = Array.from({ length: count }, (_, n) => join(dir, `${label}-${n}.txt`));
      const answers = await Promise.all(paths.map((path) => client.callTool({ name: 'write_file', arguments: { path, content: 'must not run' } })));
      for (const [n, refused] of answers.entries()) {
        expect(refused.isError, text(refused)).toBe(true);
        expect(text(refused)).toContain('unavailable');
        expect(existsSync(paths[n]!), `${paths[n]!} was written while no daemon ran`).toBe(false);
      }
      return { digests: paths.map((path) => digestOf({ path, content: 'must not run' })), from, to: Date.now() };
    };

    // kill -9: the gateway notices the lost connection and refuses in the gap.
    const pid = Number(readFileSync(home.paths.pid, 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => daemonsForHome(home.home), { timeout: 10_000 }).toEqual([]);
    await sleep(200);
    const killed = await refuseWhileDown('killed', 5);
    await home.startDaemon();

    // A graceful stop: the same.
    await expect.poll(async () => (await client.callTool({ name: 'list_directory', arguments: { path: dir } })).isError === true, { timeout: 20_000, interval: 200 }).toBe(false);
    const stopped = await home.runCli(['daemon', 'stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    await expect.poll(() => daemonsForHome(home.home), { timeout: 10_000 }).toEqual([]);
    const graceful = await refuseWhileDown('stopped', 3);
    await home.startDaemon();

    for (const phase of [killed, graceful]) {
      const lines = (): Record<string, unknown>[] =>
        auditLines(home).filter((line) => line['tool'] === 'write_file' && phase.digests.includes(String(line['argsSha256'])));
      await expect.poll(() => lines().length, { timeout: 15_000 }).toBe(phase.digests.length);
      for (const line of lines()) {
        expect(line).toMatchObject({ server: 'fs', outcome: 'denied', deniedReason: 'unavailable' });
        // The time it was refused, not the time the next daemon read it (the spool is written within milliseconds).
        const ts = Date.parse(String(line['ts']));
        expect(ts).toBeGreaterThanOrEqual(phase.from - 5);
        expect(ts).toBeLessThanOrEqual(phase.to + 1000);
      }
    }
    // Nothing audited twice: the gateway's later reads and the daemon's start read the same spool.
    await sleep(500);
    const refusedLines = auditLines(home).filter((line) => line['deniedReason'] === 'unavailable');
    expect(refusedLines).toHaveLength(8);

    const verify = await home.runCli(['audit', 'verify']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    const seqs = new Set(refusedLines.map((line) => String(line['seq'])));
    await expect
      .poll(() => cefRecords(cefFile).filter((record) => seqs.has(record.get('externalId') ?? '')).map((record) => record.get('cat')), { timeout: 15_000 })
      .toEqual(Array.from({ length: 8 }, () => 'unavailable'));
  }, 120_000);
});
