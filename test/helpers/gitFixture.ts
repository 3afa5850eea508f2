// A repository template for tests that run real git: a HOME with a user and
// `main` as the default branch, and a repository with one commit of README.md.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs git in `cwd` with `env`; throws with git's own message when it fails. */
export function runGit(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): void {
  const run = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
}

/** Writes `home/.gitconfig` (with `extraConfig` after the user) and `root/template`, a repository with one commit; returns the template. */
export function makeGitTemplate(root: string, home: string, env: NodeJS.ProcessEnv, extraConfig = ''): string {
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, '.gitconfig'), `[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n${extraConfig}`);
  const template = join(root, 'template');
  mkdirSync(template);
  writeFileSync(join(template, 'README.md'), '# r\n');
  runGit(template, env, 'init', '-q');
  runGit(template, env, 'add', 'README.md');
  runGit(template, env, 'commit', '-qm', 'one');
  return template;
}
