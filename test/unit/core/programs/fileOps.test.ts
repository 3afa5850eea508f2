// R-POL-8 local work: mkdir, touch, cp and mv report every path they write
// (the policy allows those under the cwd that are no gate file); recursive
// copies read their sources as trees, and copies into a directory and moves
// land trees whose names only the file system knows (`treeWrites`).
import { describe, expect, it } from 'vitest';
import { expectAccepted, expectRefused, judge, variable, words } from './programTable.js';

describe('R-POL-8 mkdir and touch', () => {
  it.each([
    ['mkdir -p build', { writes: ['build'] }],
    ['mkdir -m 755 a b', { writes: ['a', 'b'] }],
    ['mkdir -pv .git/hooks/x', { writes: ['.git/hooks/x'] }],
    ['touch x', { writes: ['x'] }],
    ['touch -r ref -d yesterday a', { reads: ['ref'], writes: ['a'] }],
    ['touch -t 202401010000 -c a', { writes: ['a'] }],
  ])('%s', (command, touches) => void expectAccepted(command, touches));

  it('refuses a path that is not static', () => {
    expectRefused(words('mkdir -p', variable('d')), undefined, /not statically known/);
    expectRefused(words('touch --', variable('d')), undefined, /path position is not statically known/);
  });
});

describe('R-POL-8 cp and mv', () => {
  it('cp reads its sources and writes the destination, and DEST/<name> when DEST is a directory', () => {
    expectAccepted('cp a b', { reads: ['a'], writes: ['b', 'b/a'], trees: [] });
    expectAccepted('cp a b dir/', { reads: ['a', 'b'], writes: ['dir/', 'dir/a', 'dir/b'] });
    expectAccepted('cp -t dir a src/b', { reads: ['a', 'src/b'], writes: ['dir', 'dir/a', 'dir/b'] });
    expectAccepted('cp -T a b', { reads: ['a'], writes: ['b'] });
    expectAccepted('cp --parents src/x.go out', { writes: ['out', 'out/src/x.go'] });
    expectAccepted('cp -s target link', { writes: ['link', 'link/target'] });
    expectAccepted('cp --backup=numbered -S .orig a b', { writes: ['b', 'b/a'] });
  });

  it('cp -r reads each source as a tree and lands it under the destination', () => {
    const verdict = expectAccepted('cp -r ~/project ./copy', { reads: ['~/project'], trees: ['~/project'], hidden: true });
    expect(verdict.treeWrites?.map((t) => [t.from.text, t.to.text])).toEqual([['~/project', './copy']]);
    expect(judge('cp -a x/. .').treeWrites).toHaveLength(1);
    expect(judge('cp -rL a b').trees[0]?.follow).toBe(true);
    expect(judge('cp a b').treeWrites).toBeUndefined();
  });

  it('mv reads and removes its sources and lands them at the destination', () => {
    const verdict = expectAccepted('mv a b', { reads: ['a'], writes: ['b', 'a', 'b/a'], trees: [] });
    expect(verdict.treeWrites?.map((t) => [t.from.text, t.to.text])).toEqual([['a', 'b']]);
    expectAccepted('mv -t dest x y', { reads: ['x', 'y'], writes: ['dest', 'x', 'y', 'dest/x', 'dest/y'] });
  });

  it('refuses what it cannot place', () => {
    expectRefused('cp a', undefined, /needs a source and a destination/);
    expectRefused('mv -T a b c', undefined, /exactly one source/);
    expectRefused('cp -S /../../x --backup a b', '--suffix', /names another directory/);
    expectRefused('mv --suffix=x/y a b', '--suffix');
    expectRefused(words('cp', variable('s'), 'b'), undefined, /not statically known/);
    expectRefused('cp --re a b', undefined, /ambiguous/);
  });
});
