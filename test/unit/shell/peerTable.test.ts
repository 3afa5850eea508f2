// R-SH-11 acceptance: one case for every form ../shared/PEERS.md lists (what
// Codex and Claude Code approve on their own), with the decision docs/policy.md
// states ("The peers' read-only sets"). Of the safe forms at least 95 % are
// allow; the unsafe ones are refused, each shown doing its harm in real bash or
// git by the test named beside it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

/** Safe forms: the peers allow them, and so must assent. */
const SAFE = [
  // Codex: any arguments (on files of the project)
  'cat README.md', 'cd src', 'cut -d: -f1 README.md', 'echo hi', 'expr 1 + 2', 'false', 'grep readme README.md', 'head -n 5 README.md', 'id', 'id -u',
  'ls -la', 'nl README.md', 'paste README.md notes.txt', 'pwd', 'rev README.md', 'seq 1 10', 'stat README.md', 'tail -n 5 README.md', 'tr a-z A-Z < README.md',
  'true', 'uname -a', 'uniq notes.txt', 'wc -l README.md', 'which node', 'whoami', 'numfmt --to=iec 2048', 'tac README.md', 'base64 README.md',
  'find . -name "*.md"', 'rg readme', "sed -n 1p README.md", "sed -n 1,3p README.md",
  'git status', 'git log --oneline -5', 'git diff', 'git show', 'git branch', 'git branch --list', 'git branch -a', 'git branch -vv', 'git branch --show-current',
  "bash -lc 'ls && git status'", "bash -lc 'cat README.md | wc -l'",
  // Claude Code: git read-only subcommands
  'git blame README.md', 'git cat-file -p HEAD', 'git config --get user.name', 'git config --list', 'git describe --always', 'git for-each-ref refs/heads',
  'git grep readme', 'git ls-files', 'git merge-base HEAD HEAD', 'git reflog', 'git remote', 'git remote -v', 'git rev-list --count HEAD', 'git rev-parse HEAD',
  'git rev-parse --show-toplevel', 'git shortlog -sn HEAD', 'git stash list', 'git stash show', 'git tag', 'git tag -l', 'git worktree list',
  // gh and docker read-only forms
  'gh pr list', 'gh pr view 12', 'gh pr diff 12', 'gh pr checks 12', 'gh pr status', 'gh issue list', 'gh issue view 3', 'gh issue status', 'gh run list',
  'gh run view 5', 'gh repo view', 'gh release list', 'gh release view v1', 'docker ps', 'docker images', 'docker inspect web', 'docker logs web',
  // the other tools
  'egrep readme README.md', 'fgrep readme README.md', 'fd md', 'fdfind -e md', 'file README.md', 'tree -L 2', 'hostname', 'pgrep node', 'md5sum README.md',
  'sha1sum README.md', 'sha256sum README.md', 'sort notes.txt', 'date', 'jq .name package.json', 'test -f README.md', '[ -d src ]', 'command -v git', 'type ls',
  'df -h .', 'basename src/a.ts', 'dirname src/a.ts', 'realpath README.md', 'du -sh src', 'printenv HOME', 'node --version', 'git --version',
];

/** Forms a peer allows that are unsafe: never allow. The test that shows the harm is named beside each. */
const UNSAFE: readonly [string, string][] = [
  ['uniq notes.txt ../out.txt', 'writes outside the project (textTools.test.ts, uniq IN OUT)'],
  ['sort -o ../out.txt notes.txt', 'writes outside the project (textTools.test.ts)'],
  ['tree -o ../out.txt', 'writes outside the project (textTools.test.ts)'],
  ['cat ~/.ssh/id_rsa', 'prints the key (procCredentials.test.ts shows the class)'],
  ['head .env', 'prints the secret (bracketGlobs.test.ts)'],
  ['grep -r KEY ~', 'reads every credential beneath HOME (soundPolicy.test.ts)'],
  ['sha256sum ~/.ssh/id_rsa', 'reads the key (peerPrograms.test.ts)'],
  ['git diff --no-index .env README.md', 'prints .env (gitRead.test.ts, grep --no-index)'],
  ["sed -n '1e touch x' README.md", 'runs a command (sed.test.ts)'],
  ["sed -n 'w out' README.md", 'writes a file (sed.test.ts)'],
  ["sed -n 'r ~/.ssh/id_rsa' README.md", 'reads the key (sed.test.ts)'],
  ["sed -n 's/a/b/e' README.md", 'runs the pattern space (sed.test.ts)'],
  ['printenv', 'prints API keys (peerPrograms.test.ts)'],
  ['cat /proc/self/environ', 'prints API keys (procCredentials.test.ts)'],
];

let parser: ShellParser;
let host: ShellHost;

beforeAll(async () => {
  parser = await loadShellParser();
  host = makeShellHost();
  mkdirSync(join(host.cwd, 'src'));
  writeFileSync(join(host.cwd, 'src', 'a.ts'), 'export {};\n');
  writeFileSync(join(host.cwd, 'notes.txt'), 'a\nb\n');
  writeFileSync(join(host.cwd, 'package.json'), '{"name":"p"}\n');
  writeFileSync(join(host.cwd, '.env'), 'API_KEY=1\n');
  mkdirSync(join(host.cwd, '.git', 'objects'), { recursive: true });
  mkdirSync(join(host.cwd, '.git', 'refs'), { recursive: true });
  writeFileSync(join(host.cwd, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(host.cwd, '.git', 'config'), '[core]\n\tbare = false\n');
});

afterAll(() => host[Symbol.dispose]());

describe("R-SH-11 the peers' read-only sets", () => {
  it(`at least 95 % of the ${SAFE.length} safe forms are allow`, () => {
    const snapshot = host.snapshot(DEFAULT_CONFIG.policy);
    const asked = SAFE.filter((command) => judgeShell(parser, snapshot, command, host.cwd).decision !== 'allow');
    expect(asked.length / SAFE.length, `not allowed: ${asked.join(' | ')}`).toBeLessThanOrEqual(0.05);
    // The ones asked today, each with its reason in docs/policy.md: a login shell runs the person's profile files first, which no model reads.
    expect(asked).toEqual(["bash -lc 'ls && git status'", "bash -lc 'cat README.md | wc -l'"]);
  });

  it.each(UNSAFE)('%s is not allow (%s)', (command) => {
    expect(judgeShell(parser, host.snapshot(DEFAULT_CONFIG.policy), command, host.cwd).decision).not.toBe('allow');
  });
});
