// Issue 18's acceptance rows that the program models carry: the routine forms
// are accepted (with what they touch), and the examples of the "Why" section
// that reach a model are refused or report what they read.
import { describe, expect, it } from 'vitest';
import { expectAccepted, expectRefused, judge, variable, words } from './programTable.js';

describe('issue 18: routine local work is accepted', () => {
  it('git add src/x.go, git commit -m "fix", mkdir -p build, node --version', () => {
    expectAccepted('git add src/x.go', { model: 'git add', reads: ['src/x.go'] });
    expectAccepted(words('git commit -m', { text: 'fix', static: true }), { model: 'git commit', reads: [], writes: [] });
    expectAccepted('mkdir -p build', { model: 'mkdir', writes: ['build'] });
    expectAccepted('node --version', { model: 'version' });
  });

  it("find . -name '*.go', sed -n '1,40p' f, rg foo (a tree read of . without hidden entries)", () => {
    expectAccepted('find . -name *.go', { model: 'find', reads: ['.'], trees: [] });
    expectAccepted('sed -n 1,40p f', { model: 'sed', reads: ['f'] });
    const rg = expectAccepted('rg foo', { model: 'rg', trees: ['.'] });
    expect(rg.trees).toEqual([{ dir: { text: '.', static: true }, hidden: false }]);
  });

  it('grep -r foo . reads . as a tree (the policy then looks for credential files beneath)', () => {
    expectAccepted('grep -r foo .', { model: 'grep', trees: ['.'], hidden: true });
  });
});

describe('issue 18: the "Why" examples that reach a model', () => {
  it('x=--output=../.bashrc; git log $x is refused: $x is not static', () => {
    expectRefused(words('git log', variable('x', false)), undefined, /not statically known/, ['x']);
    expectRefused(words('git log', variable('x', false)), undefined, /not statically known/);
  });

  it('sort -S 16k --compress-prog=sh list.txt and sort --outp=~/.ssh/authorized_keys key.pub are refused', () => {
    expectRefused('sort -S 16k --compress-prog=sh list.txt', '--compress-program');
    expectRefused('sort --outp=~/.ssh/authorized_keys key.pub', '--output');
    expectRefused('sort --outp=F', '--output');
  });

  it('git show HEAD:.env reads .env; git diff --no-index .env /dev/null reads both', () => {
    expectAccepted('git show HEAD:.env', { revisionPaths: ['.env'] });
    expectAccepted('git diff --no-index .env /dev/null', { reads: ['.env', '/dev/null'], trees: ['.env', '/dev/null'] });
  });

  it('grep -r KEY ~ and rg --hidden KEY ~ are tree reads of ~ that include hidden entries', () => {
    expect(judge('grep -r KEY ~').trees).toEqual([{ dir: { text: '~', static: true, tilde: true }, hidden: true }]);
    expect(judge('rg --hidden KEY ~').trees).toEqual([{ dir: { text: '~', static: true, tilde: true }, hidden: true }]);
  });

  it('printf -v PATH … assigns a variable: refused', () => {
    expectRefused('printf -v PATH %s /tmp/evil', '-v');
  });

  it('cd vendor/lib && git show HEAD: git names its repository so the edge checks its configuration', () => {
    expect(judge('git show HEAD').repository).toEqual({ chdir: [] });
    expect(judge('cd vendor/lib').reads.map((w) => w.text)).toEqual(['vendor/lib']);
  });
});
