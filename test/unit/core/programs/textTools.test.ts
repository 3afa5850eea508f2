// R-SH-6/R-POL-8 tables: sort, uniq, diff, cmp, du, tree, basename, dirname,
// realpath, date, whoami, uname, which, pwd.
import { describe, expect, it } from 'vitest';
import { expectAccepted, expectRefused, judge, variable, words } from './programTable.js';

describe('R-SH-6 sort and uniq', () => {
  it.each([
    ['sort list.txt', { reads: ['list.txt'], writes: [] }],
    ['sort -S 16k -k2,2n -t , a b', { reads: ['a', 'b'] }],
    ['sort -T build/tmp a', { reads: ['a'], writes: ['build/tmp'] }],
    ['sort --random-source=seed -R a', { reads: ['seed', 'a'] }],
    ['sort -c a', { reads: ['a'] }],
    ['uniq in', { reads: ['in'], writes: [] }],
    ['uniq -c in out', { reads: ['in'], writes: ['out'] }],
    ['uniq -2 -s 3 in', { reads: ['in'] }],
  ])('%s', (command, touches) => void expectAccepted(command, touches));

  it.each([
    ['sort -o out a', '--output'],
    ['sort -oout a', '--output'],
    ['sort -no out a', '--output'],
    ['sort --outp=F', '--output'],
    ['sort a --output out', '--output'],
    ['sort --compress-program=sh a', '--compress-program'],
    ['sort --compress-prog=sh', '--compress-program'],
    ['sort -S 16k --compress-prog=sh list.txt', '--compress-program'],
    ['sort --files0-from=list', '--files0-from'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('refuses a third uniq operand', () => {
    expectRefused('uniq a b c', undefined, /more than uniq takes/);
  });
});

describe('R-SH-6 diff and cmp', () => {
  it('diff reads both operands as trees: a directory pair is compared entry by entry', () => {
    expectAccepted('diff a b', { reads: ['a', 'b'], trees: ['a', 'b'], hidden: true });
    expectAccepted('diff -ru --exclude=*.o old new', { trees: ['old', 'new'] });
    expectAccepted('diff --from-file=base x y', { reads: ['base', 'x', 'y'], trees: ['x', 'y', 'base'] });
    expectAccepted('diff -u - b', { trees: ['b'] });
    expectAccepted('diff -5 --unified=3 --label=old a b', { reads: ['a', 'b'] });
    expectAccepted('diff -U 3 a b', { reads: ['a', 'b'] });
  });

  it('refuses -l (it runs pr) and ambiguous prefixes', () => {
    expectRefused('diff -l a b', '--paginate');
    expectRefused('diff --pag a b', '--paginate');
    expectRefused('diff --ign a b', undefined, /ambiguous/);
  });

  it('cmp reads two files; the skips are literals', () => {
    expectAccepted('cmp -l a b 10 20', { reads: ['a', 'b'] });
    expectRefused('cmp a b 1 2 3', undefined, /more than cmp takes/);
    expectRefused(words('cmp a b --', variable('n')), undefined, /not statically known/);
  });
});

describe('R-SH-6 du and tree: names and sizes only', () => {
  it('are no tree reads', () => {
    expectAccepted('du -sh ~', { reads: ['~'], trees: [] });
    expectAccepted('du --files0-from=list -c', { reads: ['list'] });
    expectAccepted('tree -a -L 2 src', { reads: ['src'], trees: [] });
    expectAccepted('tree -dLP 2 *.go src', { reads: ['src'] });
    expectAccepted('tree --gitfile=ig --charset utf8', { reads: ['ig'] });
  });

  it('tree -o writes and -R writes a listing into every directory', () => {
    expectRefused('tree -o out.txt', '-o');
    expectRefused('tree -Lo 2 out.html', '-o');
    expectRefused('tree -R -L 1', '-R');
    expectRefused('tree --gitf=x', undefined, /not one this model knows/);
  });
});

describe('R-SH-6 path names', () => {
  it('basename and dirname only transform text; realpath reads metadata', () => {
    expectAccepted('basename -s .go src/x.go', { reads: [], writes: [] });
    expectAccepted('dirname a/b c/d', { reads: [] });
    expectAccepted(words('basename --', variable('f')));
    expectRefused(words('basename', variable('f')), undefined, /in an option position is not statically known/);
    expectAccepted('realpath -e --relative-to=base x', { reads: ['base', 'x'] });
  });
});

describe('R-SH-6 date, whoami, uname, which, pwd', () => {
  it.each(['date', 'date +%s', 'date -u -d yesterday +%F', 'date -r file', 'date --iso-8601=seconds', 'date -R', 'whoami', 'uname -a', 'uname --release', 'which -a git node', 'pwd', 'pwd -P'])(
    '%s is accepted',
    (command) => {
      expectAccepted(command, { writes: [] });
    },
  );

  it('date reads the files -f and -r name', () => {
    expect(judge('date -f dates.txt').reads.map((w) => w.text)).toEqual(['dates.txt']);
    expect(judge('date --reference=f').reads.map((w) => w.text)).toEqual(['f']);
  });

  it('refuses setting the clock, and extra operands', () => {
    expectRefused('date -s 2020-01-01', '--set');
    expectRefused('date --se=now', '--set');
    expectRefused('date 010112002024', undefined, /sets the system clock/);
    expectRefused('date +%s +%F', undefined, /more than date takes/);
    expectRefused('whoami root', undefined, /more than whoami takes/);
    expectRefused('uname -x', undefined, /-x is not one/);
    expectRefused('pwd somewhere', undefined, /more than pwd takes/);
    expectRefused('which --all git', undefined, /--all is not one/);
  });
});
