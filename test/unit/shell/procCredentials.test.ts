// R-POL-8: a process's environment, memory, command line, root, cwd and open
// files under /proc are credential locations for every tool and command. env and
// printenv are refused because the environment holds API keys; /proc/*/environ
// prints the same. Real bash shows the harm of each form.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import type { AgentPolicySnapshot } from '../../../src/core/policy/agentPolicyConfig.js';
import { AgentJudge } from '../../../src/shell/agentJudge.js';
import { judgePaths, judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

let host: ShellHost;
let parser: ShellParser;
let snapshot: AgentPolicySnapshot;
const CANARY = 'sk-canary-7f3a9c';

beforeAll(async () => {
  host = makeShellHost();
  parser = await loadShellParser();
  snapshot = host.snapshot(DEFAULT_CONFIG.policy);
});
afterAll(() => host[Symbol.dispose]());

/** What real bash prints for the command, in the host's cwd, with an API key in its environment. */
function bash(command: string): string {
  const run = spawnSync('/bin/bash', ['-c', command], { cwd: host.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ANTHROPIC_API_KEY: CANARY }, encoding: 'latin1', timeout: 10_000 });
  return run.stdout;
}

const ENVIRON_READS = [
  'cat /proc/self/environ',
  'grep -a KEY /proc/self/environ',
  'head -c 4096 /proc/self/environ',
  'tail -c 4096 /proc/self/environ',
  'sed -n 1p /proc/self/environ',
  'cat /proc/thread-self/environ',
  'sort /proc/self/environ',
  'strings /proc/self/environ',
];

describe('R-POL-8 /proc/*/environ is a credential location', () => {
  it.each(ENVIRON_READS)('%s prints the API key in real bash, and is not allow', (command) => {
    if (command.startsWith('strings') && spawnSync('sh', ['-c', 'command -v strings']).status !== 0) return;
    expect(bash(command)).toContain(CANARY);
    expect(judgeShell(parser, snapshot, command, host.cwd).decision).not.toBe('allow');
  });

  it("another process's environment, command line, memory, root, cwd and open files are not allow either", () => {
    // The shell's parent (this test runner) is another process, as the daemon or the person's editor would be.
    const parent = String(process.pid);
    expect(bash(`cat /proc/${parent}/cmdline`)).toContain('node');
    for (const command of [
      `cat /proc/${parent}/environ`,
      `cat /proc/${parent}/cmdline`,
      `cat /proc/${parent}/task/${parent}/environ`,
      `head -c 64 /proc/${parent}/mem`,
      `cat /proc/${parent}/root${host.home}/.ssh/id_rsa`,
      `cat /proc/${parent}/cwd/README.md`,
      `cat /proc/${parent}/fd/0`,
      'cat /proc/1/environ',
      'wc -c /proc/1/cmdline',
      `ls /proc/${parent}/fd/`,
    ]) {
      expect(judgeShell(parser, snapshot, command, host.cwd).decision, command).not.toBe('allow');
    }
  });

  it('the Read and Grep tools are judged the same way', () => {
    expect(judgePaths(snapshot, ['/proc/self/environ'], 'read', host.cwd).decision).toBe('deny');
    expect(judgePaths(snapshot, ['/proc/1/environ'], 'read', host.cwd).decision).toBe('deny');
    const judge = new AgentJudge({ env: { HOME: host.home }, assentHome: join(host.home, '.assent') });
    const config = { revision: 'v1:proc', policy: DEFAULT_CONFIG.policy };
    expect(judge.judge(config, { agent: 'claude-code', tool: 'Read', kind: 'read', input: { file_path: '/proc/self/environ' }, cwd: host.cwd })?.decision).toBe('deny');
  });

  it('the rest of /proc stays readable: cpuinfo, meminfo, uptime, loadavg', () => {
    for (const command of ['cat /proc/cpuinfo', 'head -5 /proc/meminfo', 'cat /proc/uptime', 'cat /proc/loadavg']) {
      expect(judgeShell(parser, snapshot, command, host.cwd).decision, command).toBe('allow');
    }
  });
});
