// `assent demo` from the built binary: it starts its own daemon under
// $ASSENT_HOME/demo, waits on a real upstream call, completes when approved
// with `assent approve` in another (pseudo-)terminal, reports a denial from
// `assent deny`, and leaves no process behind either way.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, makeTempHome, processesForHome } from '../helpers/daemon.js';
import type { TempHome } from '../helpers/daemon.js';
import { CLI_ENTRY, PtySession } from '../helpers/pty.js';
import { waitUntil } from './mcpFixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => {
  if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` before the e2e tests');
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

/** Every live descendant of `root` (Linux /proc). */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop() as number;
    for (const [pid, ppid] of parentOf) {
      if (ppid === parent && !found.includes(pid)) {
        found.push(pid);
        frontier.push(pid);
      }
    }
  }
  return found;
}

interface Demo {
  t: TempHome;
  demoHome: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Waits for the approval id the demo prints, then records every process it started. */
  approvalId(): Promise<{ id: string; started: number[] }>;
}

function startDemo(): Demo {
  const t = makeTempHome();
  const demoHome = join(t.home, 'demo');
  const child = spawn(process.execPath, [CLI_ENTRY, 'demo'], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (out += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (out += text));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    for (const pid of processesForHome(demoHome)) process.kill(pid, 'SIGKILL');
    await t.cleanup();
  });
  const approvalId = async (): Promise<{ id: string; started: number[] }> => {
    const seen = await waitUntil(() => /approval ([a-km-z]{5})/.test(out), 30_000);
    if (!seen) throw new Error(`the demo printed no approval id:\n${out}`);
    const id = (out.match(/approval ([a-km-z]{5})/) as RegExpMatchArray)[1] as string;
    return { id, started: descendants(child.pid as number) };
  };
  return { t, demoHome, child, output: () => out, exited, approvalId };
}

describe('assent demo', () => {
  it('completes when approved with `assent approve` from another terminal and leaves no process', async () => {
    const demo = startDemo();
    const { id, started } = await demo.approvalId();
    // The daemon, the gateway and the upstream are all running while the call waits.
    expect(started.length).toBeGreaterThanOrEqual(3);
    expect(demo.output()).toContain(`ASSENT_HOME=${demo.demoHome}`);
    expect(demo.output()).toContain(`approve ${id}`);

    const approveOut = join(demo.t.home, '..', 'approve.out');
    const approve = new PtySession(['approve', id], { outFile: approveOut, env: { ASSENT_HOME: demo.demoHome } });
    cleanups.push(() => approve.kill());
    const code = (await approve.waitFor(/Type ([a-km-z]{4}) to approve/))[1] as string;
    approve.type(`${code}\r`);
    expect((await approve.finish(approveOut)).exitCode).toBe(0);

    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain('Echo: Hello from the assent demo');
    expect(demo.output()).toContain(`Approval ${id} resolved: approved via cli`);
    expect(await waitUntil(() => started.every((pid) => !alive(pid)), 5000)).toBe(true);
    expect(processesForHome(demo.demoHome)).toEqual([]);
  });

  it('reports the denial from `assent deny` and leaves no process', async () => {
    const demo = startDemo();
    const { id, started } = await demo.approvalId();
    const denied = await demo.t.runCli(['deny', id, '--reason', 'not today'], { env: cleanEnv({ ASSENT_HOME: demo.demoHome }) });
    expect(denied.code).toBe(0);
    expect(await demo.exited).toBe(77);
    expect(demo.output()).toContain('consent_denied');
    expect(demo.output()).not.toContain('Echo: Hello');
    expect(await waitUntil(() => started.every((pid) => !alive(pid)), 5000)).toBe(true);
  });

  it('Ctrl+C (SIGINT) while the call waits stops the demo and every process it started', async () => {
    const demo = startDemo();
    const { started } = await demo.approvalId();
    expect(started.length).toBeGreaterThanOrEqual(3);
    demo.child.kill('SIGINT');
    expect(await demo.exited).toBe(130);
    expect(await waitUntil(() => started.every((pid) => !alive(pid)), 5000)).toBe(true);
    expect(processesForHome(demo.demoHome)).toEqual([]);
  });
});
