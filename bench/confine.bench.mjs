// SPEC §14 / R-SH-14 "confined command": what the sandbox adds to a command.
// A confined `true` (the guardian, bwrap with the full profile of a small git
// project — its placeholders created and removed — and `bash -c true` inside)
// against a plain `bash -c true`, p50 of RUNS each, alternating. Target ≤ 15 ms
// added. Measured apart: building the profile in Node (the layout walk and
// the socket scan), the probe `sandboxStatus()` (which a confined run no
// longer makes before it starts), the floor (bwrap with its namespaces and
// nothing else), and whole processes: the command the daemon rewrites a
// confined `true` into (node and dist/bin/assent-confine.js, with the
// decision's --profile) and `assent confine --command true` through the CLI,
// each against `node -e 0` and against `bash -c true`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSandboxProfile } from '../dist/exec/confine/sandboxProfile.js';
import { runConfined, sandboxStatus } from '../dist/exec/confine/sandboxRun.js';
import { repositoryLocation } from '../dist/shell/gitRepository.js';

const RUNS = 50;
const CLI_RUNS = 20;
const CLI = join(import.meta.dirname, '..', 'dist', 'bin', 'assent.js');
const CONFINE_ENTRY = join(import.meta.dirname, '..', 'dist', 'bin', 'assent-confine.js');

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value) => Math.round(value * 1000) / 1000;

function waitExit(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore', ...options });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

async function timed(run) {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export async function benchConfine() {
  const status = sandboxStatus();
  if (!status.available) throw new Error(`the sandbox is not available here: ${status.reason}`);
  const base = mkdtempSync(join(tmpdir(), 'assent-confine-bench-'));
  try {
    const home = join(base, 'home');
    const project = join(base, 'project');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'key\n');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{"name":"bench","scripts":{"test":"true"}}\n');
    writeFileSync(join(project, 'src', 'index.js'), 'export {};\n');
    writeFileSync(join(project, '.env'), 'TOKEN=x\n');
    const env = { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8' };
    spawnSync('git', ['init', '-q'], { cwd: project, env });
    const options = {
      cwd: project,
      home,
      assentHome: join(home, '.assent'),
      env,
      locateRepository: repositoryLocation,
    };
    const profile = buildSandboxProfile(options);

    const builds = [];
    for (let i = 0; i < RUNS; i += 1) builds.push(await timed(async () => buildSandboxProfile(options)));
    const probes = [];
    for (let i = 0; i < 10; i += 1) probes.push(await timed(async () => sandboxStatus({ env: { PATH: process.env.PATH }, spawnSync: (c, a, o) => spawnSync(c, a, o) })));

    const plain = [];
    const confined = [];
    const floor = [];
    const floorArgs = ['--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--new-session', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
    for (let i = 0; i < 3; i += 1) await runConfined(profile, 'true', ['ignore', 'ignore', 'ignore'], status);
    for (let i = 0; i < RUNS; i += 1) {
      plain.push(await timed(() => waitExit('bash', ['-c', 'true'], { env })));
      floor.push(await timed(() => waitExit(status.bwrap, [...floorArgs, '--', 'bash', '-c', 'true'], { env })));
      confined.push(await timed(async () => {
        const code = await runConfined(profile, 'true', ['ignore', 'ignore', 'ignore'], status);
        if (code !== 0) throw new Error(`confined true exited ${code}`);
      }));
    }

    const cliEnv = { ...env, ASSENT_HOME: join(home, '.assent') };
    // The decision's digest, as the daemon names it: the layout's, without the agent's environment.
    const decided = buildSandboxProfile({ ...options, assentHome: cliEnv.ASSENT_HOME, assentSocket: join(cliEnv.ASSENT_HOME, 'daemon.sock'), env: {} }).digest;
    const rewritten = [CONFINE_ENTRY, '--profile', decided, '--command', 'true'];
    const node = [];
    const entry = [];
    const cli = [];
    const bash = [];
    for (let i = 0; i < 3; i += 1) {
      const code = await waitExit(process.execPath, rewritten, { env: cliEnv, cwd: project });
      if (code !== 0) throw new Error(`the rewritten confined true exited ${code}`);
    }
    for (let i = 0; i < CLI_RUNS; i += 1) {
      bash.push(await timed(() => waitExit('bash', ['-c', 'true'], { env: cliEnv, cwd: project })));
      node.push(await timed(() => waitExit(process.execPath, ['-e', '0'], { env: cliEnv, cwd: project })));
      entry.push(await timed(() => waitExit(process.execPath, rewritten, { env: cliEnv, cwd: project })));
      cli.push(await timed(() => waitExit(process.execPath, [CLI, 'confine', '--command', 'true'], { env: cliEnv, cwd: project })));
    }

    const added = median(confined) - median(plain);
    return [
      {
        name: `confined \`true\` (guardian + bwrap, ${profile.args.length} profile words, ${profile.placeholders.length} placeholders) minus \`bash -c true\` (p50 of ${RUNS}; ${median(confined).toFixed(1)} ms vs ${median(plain).toFixed(1)} ms)`,
        value: round(added),
        unit: 'ms p50 added',
        target: 15,
        targetText: '≤ 15 ms',
        ok: added <= 15,
      },
      {
        name: `the floor: bwrap with the namespaces and / read-only only, no guardian, minus \`bash -c true\` (p50 of ${RUNS}; ${median(floor).toFixed(1)} ms)`,
        value: round(median(floor) - median(plain)),
        unit: 'ms p50 added',
      },
      { name: `buildSandboxProfile in Node (walk, socket scan, digest; p50 of ${RUNS})`, value: round(median(builds)), unit: 'ms p50' },
      { name: 'sandboxStatus() probe (bwrap --version and a trial sandbox; a confined run makes it only after a non-zero exit, to say why; p50 of 10)', value: round(median(probes)), unit: 'ms p50' },
      {
        name: `the rewritten command, \`node assent-confine.js --profile D --command true\`, minus \`node -e 0\` (p50 of ${CLI_RUNS}; ${median(entry).toFixed(1)} ms vs ${median(node).toFixed(1)} ms; minus \`bash -c true\` ${(median(entry) - median(bash)).toFixed(1)} ms)`,
        value: round(median(entry) - median(node)),
        unit: 'ms p50 added',
      },
      {
        name: `\`assent confine --command true\` (the CLI) minus \`node -e 0\` (p50 of ${CLI_RUNS}; ${median(cli).toFixed(1)} ms vs ${median(node).toFixed(1)} ms)`,
        value: round(median(cli) - median(node)),
        unit: 'ms p50 added',
      },
    ];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchConfine(), null, 2));
}
