// R-SH-6/R-SH-9/R-SH-10/R-POL-8 tables for git: global options, the reading
// subcommands and local work. Every accepted form names the repository (its
// -C directories) so the edge checks the configuration git would obey.
import { describe, expect, it } from 'vitest';
import { expectAccepted, expectRefused, judge, substitution, variable, words } from './programTable.js';

describe('R-SH-9 git global options', () => {
  it('-C moves where git runs; every accepted form sets repository', () => {
    // status looks into submodules and may run post-index-change when it refreshes the index (R-SH-12, R-SH-13).
    expect(judge('git status').repository).toEqual({ chdir: [], hooks: ['post-index-change'], recurses: true });
    expect(judge('git log').repository).toEqual({ chdir: [] });
    expect(judge('git -C sub -C deeper log').repository?.chdir.map((w) => w.text)).toEqual(['sub', 'deeper']);
    expect(judge('git --no-pager -P diff').repository).toEqual({ chdir: [], hooks: ['post-index-change'], recurses: true });
    expectAccepted('git --version');
    expectAccepted('git');
  });

  it.each([
    ['git -c core.pager=sh log', '-c'],
    ['git --config-env=core.pager=X log', '--config-env'],
    ['git --exec-path=/tmp status', '--exec-path'],
    ['git --git-dir=/tmp/x status', '--git-dir'],
    ['git --work-tree=/ status', '--work-tree'],
    ['git --bare log', '--bare'],
    ['git -p log', '--paginate'],
    ['git --paginate log', '--paginate'],
    ['git --help', '--help'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('refuses -C and subcommands that are not statically known', () => {
    expectRefused(words('git -C', variable('d'), 'status'), '-C', /not statically known/);
    expectRefused(words('git', substitution(), 'status'), undefined, /option position/);
  });

  it.each(['push', 'fetch', 'pull', 'clone', 'remote', 'submodule', 'ls-remote'])('git %s touches a remote: refused', (sub) => {
    expectRefused(`git ${sub} origin`, undefined, /touches a remote/);
  });

  it('refuses unmodelled subcommands and aliases', () => {
    expectRefused('git rebase -x sh main', undefined, /not a modelled subcommand/);
    expectRefused('git st', undefined, /not a modelled subcommand/);
    expectRefused('git config core.pager sh', undefined, /changes the configuration/);
  });
});

describe('R-SH-10 git status, diff, log, show', () => {
  it.each([
    ['git status', {}],
    ['git status -sb -- src', { reads: ['src'] }],
    ['git status --porc=v2 -uno', {}],
    ['git diff', {}],
    ['git diff --cached --stat', {}],
    ['git diff HEAD~1 -- src/x.go', { reads: ['src/x.go', 'HEAD~1'] }],
    ['git diff --no-ext-diff --no-textconv HEAD', { reads: ['HEAD'] }],
    ['git diff -S foo -G bar --word-diff=color', {}],
    ['git log', {}],
    ['git log --oneline -n 5 main', { reads: ['main'] }],
    ['git log -5 --format=%H --since=yesterday', {}],
    ['git log --grep fix --author=me -- src', { reads: ['src'] }],
    ['git log -p --follow -- a.txt', { reads: ['a.txt'] }],
    ['git log --no-merges --first-parent --stat=80 --no-ext-diff', {}],
    ['git show', {}],
    ['git show HEAD:.env', { reads: [], revisionPaths: ['.env'] }],
    ['git show HEAD~2:src/a.ts :b.ts :0:c.ts v1:./d', { revisionPaths: ['src/a.ts', 'b.ts', 'c.ts', './d'] }],
    ['git show stash@{0}', { reads: ['stash@{0}'] }],
    ['git show HEAD@{2.days.ago}:x', { revisionPaths: ['x'] }],
    ['git show HEAD:', { revisionPaths: ['.'] }],
  ])('%s', (command, touches) => void expectAccepted(command, touches));

  it('git diff --no-index A B, or any two-operand diff, reads both as trees', () => {
    expectAccepted('git diff --no-index .env /dev/null', { reads: ['.env', '/dev/null'], trees: ['.env', '/dev/null'], hidden: true });
    expectAccepted('git diff ~ /tmp/empty', { reads: ['~', '/tmp/empty'], trees: ['~', '/tmp/empty'] });
    expectAccepted('git diff --no-index -- a b', { trees: ['a', 'b'] });
    expectRefused('git diff --no-index a', undefined, /exactly two paths/);
  });

  it.each([
    ['git log --output=../.bashrc', '--output'],
    ['git diff --output=x', '--output'],
    ['git diff --ext-diff', '--ext-diff'],
    ['git show --textconv HEAD', '--textconv'],
    ['git log --show-signature', '--show-signature'],
    ['git show --show-signature HEAD', '--show-signature'],
    ['git log -L 1,5:.env', '-L'],
    ['git log -p --stdin', '--stdin'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('log and show match options by exact name, as revision.c does', () => {
    expectRefused('git log --outp=x', undefined, /--outp is not one this model knows/);
    expectRefused('git log --onel', undefined, /not one this model knows/);
  });

  it('refuses revisions that are not static, and pathspecs git would expand itself', () => {
    expectRefused(words('git log', variable('x', false)), undefined, /not statically known/);
    expectRefused(words('git log --', variable('x')), undefined, /not statically known/);
    expectRefused(words('git show', substitution()), undefined, /not statically known/);
    expectRefused('git log -p -- *.env', undefined, /wildcards/);
    expectRefused('git log -p **/.env', undefined, /wildcards/);
    expectRefused('git diff -- :(glob)x', undefined, /magic/);
    expectRefused('git show HEAD^{/a:b', undefined, /braces/);
    // `:/text` names a commit by its message, or else the pathspec `text` at the top: refused as magic.
    expectRefused('git show :/fix', undefined, /magic/);
    // --outp is ambiguous among --output and --output-indicator-*.
    expectRefused('git diff --outp=x', undefined, /ambiguous/);
  });
});

describe('R-POL-8 git add, commit, stash', () => {
  it.each([
    ['git add src/x.go', { reads: ['src/x.go'] }],
    ['git add -A', {}],
    ['git add -u -- .', { reads: ['.'] }],
    ['git commit -m fix', {}],
    ['git commit -am fix', {}],
    ['git commit --amend --no-edit', {}],
    ['git commit -F msg.txt', { reads: ['msg.txt'] }],
    ['git commit -C HEAD --reset-author', {}],
    ['git commit --fixup=abc123', {}],
    ['git commit -m wip --no-verify --no-gpg-sign -- a b', { reads: ['a', 'b'] }],
    ['git commit --mess=fix', {}],
    ['git stash', {}],
    ['git stash -u', {}],
    ['git stash push -m wip -- a', { writes: ['a'] }],
    ['git stash list', {}],
    ['git stash show -p stash@{1}', {}],
  ])('%s', (command, touches) => void expectAccepted(command, touches));

  it('a quoted plain variable is an inert commit message', () => {
    expectAccepted(words('git commit -m', variable('msg')));
    expectRefused(words('git commit -m', variable('msg')), '--message', /msg is assigned/, ['msg']);
  });

  it('stash apply and pop write the stash into the worktree', () => {
    expect(judge('git stash pop').repository?.checkout?.revision.text).toBe('stash@{0}');
    expect(judge('git stash apply --index stash@{2}').repository?.checkout?.revision.text).toBe('stash@{2}');
  });

  it.each([
    ['git add -p', '--patch'],
    ['git add -i', '--interactive'],
    ['git add -e', '--edit'],
    ['git add --pathspec-from-file=list', '--pathspec-from-file'],
    ['git commit -e -m x', '--edit'],
    ['git commit -c HEAD', '--reedit-message'],
    ['git commit -S -m x', '--gpg-sign'],
    ['git commit --gpg=KEY -m x', '--gpg-sign'],
    ['git commit --interactive', '--interactive'],
    ['git commit --fixup=amend:HEAD', '--fixup'],
    ['git stash push -p', '--patch'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('refuses a commit that would open an editor, and stash forms that discard work', () => {
    expectRefused('git commit', undefined, /opens an editor/);
    expectRefused('git commit --amend', undefined, /opens an editor/);
    expectRefused('git commit --squash=HEAD', undefined, /opens an editor/);
    expectRefused('git stash drop', undefined, /not a modelled form/);
    expectRefused('git stash clear', undefined, /not a modelled form/);
    expectRefused('git stash list --output=x', '--output');
    expectRefused('git stash show --ext-diff', '--ext-diff');
    expectRefused('git stash show HEAD:.env', undefined, /not a stash/);
  });
});

describe('R-POL-8 git branch, switch, checkout -b, restore', () => {
  it.each([
    ['git branch', {}],
    ['git branch -a -v', {}],
    ['git branch --list feat/*', {}],
    ['git branch --contains HEAD --format=%(refname)', {}],
    ['git branch --show-current', {}],
    ['git branch feature', {}],
    ['git branch feature main', {}],
    ['git switch -c feature', {}],
    ['git checkout -b feature', {}],
    ['git restore src/x.go', { writes: ['src/x.go'] }],
    ['git restore --staged -- a b', { writes: ['a', 'b'] }],
  ])('%s', (command, touches) => void expectAccepted(command, touches));

  it('switching writes the files of the target, known only from the repository', () => {
    expect(judge('git switch main').repository?.checkout?.revision.text).toBe('main');
    expect(judge('git switch -c f origin/x').repository?.checkout?.revision.text).toBe('origin/x');
    expect(judge('git switch -c f').repository?.checkout).toBeUndefined();
    expect(judge('git checkout -b f v1.0').repository?.checkout?.revision.text).toBe('v1.0');
    expect(judge('git restore --source=evil .').repository?.checkout).toMatchObject({ revision: { text: 'evil' }, paths: [{ text: '.' }] });
  });

  it.each([
    ['git branch -d old', '--delete'],
    ['git branch -D old', '-D'],
    ['git branch -m a b', '--move'],
    ['git branch -M a b', '-M'],
    ['git branch -c a b', '--copy'],
    ['git branch -C a b', '-C'],
    ['git branch -f main HEAD~3', '--force'],
    ['git branch -u origin/x', '--set-upstream-to'],
    ['git branch --set-upstream-to=origin/x', '--set-upstream-to'],
    ['git branch --unset-upstream', '--unset-upstream'],
    ['git branch --edit-description', '--edit-description'],
    ['git branch --del old', '--delete'],
    ['git switch -C main', '--force-create'],
    ['git switch --discard-changes main', '--discard-changes'],
    ['git switch -f main', '--force'],
    ['git switch --recurse-submodules main', '--recurse-submodules'],
    ['git checkout -B f', '-B'],
    ['git checkout -f -b x', '--force'],
    ['git restore -p a', '--patch'],
    ['git restore --pathspec-from-file=l', '--pathspec-from-file'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('checkout is modelled only as checkout -b', () => {
    expectRefused('git checkout main', undefined, /only as `git checkout -b/);
    expectRefused('git checkout -- a', undefined, /only as/);
    expectRefused('git checkout -b x -- a', undefined, /no paths/);
    expectRefused('git restore', undefined, /needs paths/);
    expectRefused('git switch', undefined, /one branch/);
    expectRefused('git branch -r foo', undefined, /only with --list/);
  });
});
