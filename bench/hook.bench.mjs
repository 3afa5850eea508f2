// SPEC §14 agent hook row: wall time of `assent-hook.js claude-code` with one
// allowed event on stdin and the daemon running, in a clean environment
// (`env -i PATH=… HOME=…`, R-HOOK-8), p50 against `node -e 0` run alternately
// in the same loop so both see the same machine load.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'bin', 'assent.js');
const hook = join(root, 'dist', 'bin', 'assent-hook.js');
const RUNS = 41;
/** Rounds run first and not counted: a fresh daemon answers its first calls slower. */
const WARMUP = 5;

const event = JSON.stringify({
  session_id: 'bench-session',
  transcript_path: '/tmp/bench.jsonl',
  cwd: '/tmp',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'git status', description: 'bench' },
  tool_use_id: 'toolu_bench',
});

function once(args, env, input) {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { env, input, stdio: ['pipe', 'pipe', 'ignore'] });
  const ms = performance.now() - start;
  return { ms, status: result.status, stdout: String(result.stdout) };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function benchHook() {
  const base = mkdtempSync('/tmp/asb-hook-');
  const home = join(base, 'h');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(join(home, 'config.json'), JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { tools: { 'claude/Bash': 'allow' } } }), { mode: 0o600 });
  const clean = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: base, ASSENT_HOME: home };
  const daemon = spawn(process.execPath, [cli, 'daemon', 'run'], { env: clean, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  daemon.stderr.on('data', (d) => (stderr += d));
  try {
    for (let i = 0; i < 500 && !stderr.includes('listening on'); i += 1) await new Promise((r) => setTimeout(r, 20));
    const first = once([hook, 'claude-code'], clean, event);
    if (first.status !== 0 || !first.stdout.includes('"permissionDecision":"allow"')) throw new Error(`the hook did not allow: exit ${first.status} ${first.stdout}`);
    for (let i = 0; i < WARMUP; i += 1) {
      once(['-e', '0'], clean, '');
      once([hook, 'claude-code'], clean, event);
    }
    const baseline = [];
    const hooked = [];
    for (let i = 0; i < RUNS; i += 1) {
      baseline.push(once(['-e', '0'], clean, '').ms);
      hooked.push(once([hook, 'claude-code'], clean, event).ms);
    }
    const ratio = median(hooked) / median(baseline);
    return [
      {
        name: `agent hook allow: \`assent-hook.js claude-code\` wall time / \`node -e 0\` (p50 of ${RUNS} each, alternating, clean env)`,
        value: Math.round(ratio * 1000) / 1000,
        unit: `× (${median(hooked).toFixed(1)} ms vs ${median(baseline).toFixed(1)} ms)`,
        target: 1.3,
        ok: ratio <= 1.3,
      },
    ];
  } finally {
    daemon.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchHook(), null, 2));
}
