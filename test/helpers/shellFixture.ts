// A temporary host for agent-action policy tests: a HOME with a fake ~/.ssh, a
// project directory as the agent's cwd, and a symlink from the project into ~/.ssh.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileAgentPolicy, type AgentPolicyConfig, type AgentPolicySnapshot } from '../../src/core/policy/agentPolicyConfig.js';
import { hostPathVars } from '../../src/shell/resolvePaths.js';

export interface ShellHost {
  root: string;
  home: string;
  cwd: string;
  snapshot(policy: AgentPolicyConfig): AgentPolicySnapshot;
  [Symbol.dispose](): void;
}

/** root/home/u is HOME (with .ssh/id_rsa), root/work/proj the cwd (with README.md and `link` → ~/.ssh). */
export function makeShellHost(): ShellHost {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-shell-')));
  const home = join(root, 'home', 'u');
  const cwd = join(root, 'work', 'proj');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'not a key\n');
  mkdirSync(join(cwd, 'build'), { recursive: true });
  writeFileSync(join(cwd, 'README.md'), '# readme\n');
  symlinkSync(join(home, '.ssh'), join(cwd, 'link'));
  return {
    root,
    home,
    cwd,
    snapshot: (policy) => compileAgentPolicy(policy, hostPathVars({ HOME: home }, join(home, '.assent'))),
    [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
  };
}
