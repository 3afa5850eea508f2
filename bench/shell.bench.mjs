// SPEC §14: the shell decision for a 20-part compound command — parse with the
// bash grammar, plan, resolve its paths on the file system and decide, as the
// daemon does for one hook event — must take at most 1 ms at p50. Runs against dist/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileAgentPolicy } from '../dist/core/policy/agentPolicyConfig.js';
import { DEFAULT_CONFIG } from '../dist/core/config/config.js';
import { judgeShell } from '../dist/shell/judgeAction.js';
import { hostPathVars } from '../dist/shell/resolvePaths.js';
import { loadShellParser } from '../dist/shell/shellParser.js';

const SAMPLES = 2000;

/** Twenty simple commands joined by && ; | with substitutions, redirections, wrappers and a -c string. */
export function twentyPartCommand() {
  const parts = [
    'git status --short',
    'git diff --stat HEAD~1',
    'ls -la src',
    'cat README.md',
    'grep -rn "TODO" src',
    'echo "built at $(date)" > build/stamp.txt',
    'wc -l < package.json',
    'head -n 20 docs/configuration.md',
    'find . -name "*.ts"',
    'sort -u notes.txt',
    'timeout 30 npm test',
    'FOO=1 make lint',
    'sudo -u nobody ls /tmp',
    'bash -c "git log --oneline | head -n 5"',
    'tail -n 50 app.log',
    'stat package.json',
    'pwd',
    'printf "%s\\n" done >> build/log.txt',
    'which node',
    'rm -rf build/tmp',
  ];
  return parts.map((part, i) => (i === 0 ? part : `${['&&', ';', '||'][i % 3]} ${part}`)).join(' ');
}

/** p50 µs per decision against the 1 ms target. */
export async function benchShell() {
  const root = mkdtempSync(join(tmpdir(), 'assent-shell-bench-'));
  try {
    const cwd = join(root, 'proj');
    mkdirSync(join(cwd, 'build'), { recursive: true });
    writeFileSync(join(cwd, 'README.md'), '# bench\n');
    const parser = await loadShellParser();
    const snapshot = compileAgentPolicy(DEFAULT_CONFIG.policy, hostPathVars({ HOME: join(root, 'home') }, join(root, 'home', '.assent')));
    const command = twentyPartCommand();
    const first = judgeShell(parser, snapshot, command, cwd);
    const commands = first.parts.filter((p) => p.kind === 'command').length;
    if (commands < 20) throw new TypeError(`shell bench: the command has ${commands} simple commands, expected at least 20`);
    for (let i = 0; i < 200; i += 1) judgeShell(parser, snapshot, command, cwd);
    const samples = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      const start = process.hrtime.bigint();
      judgeShell(parser, snapshot, command, cwd);
      samples.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    samples.sort((a, b) => a - b);
    const p50 = samples[Math.floor(samples.length / 2)];
    return {
      name: `shell decision, 20-part compound command (${commands} simple commands; parse + evaluate, p50)`,
      value: Math.round(p50 * 10) / 10,
      unit: 'µs',
      target: 1000,
      ok: p50 <= 1000,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchShell()));
}
