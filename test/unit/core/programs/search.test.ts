// R-SH-6/R-SH-10 tables: grep, rg and find. A recursive search is a tree read
// of each directory it is given (or `.`); rg skips hidden entries unless told
// otherwise; find only lists names, so its starting points are plain reads.
import { describe, expect, it } from 'vitest';
import { expectAccepted, expectRefused, judge, variable, words } from './programTable.js';

describe('R-SH-6 grep', () => {
  it.each([
    ['grep foo a b', { reads: ['a', 'b'], trees: [] }],
    ['grep -e foo -e bar a', { reads: ['a'] }],
    ['grep -f pats.txt a', { reads: ['pats.txt', 'a'] }],
    ['grep --exclude-from=ex a -- -x', { reads: ['ex', '-x'] }],
    ['grep -r foo .', { reads: ['.'], trees: ['.'], hidden: true }],
    ['grep -rn foo', { reads: [], trees: ['.'] }],
    ['grep --recursive foo src lib', { trees: ['src', 'lib'] }],
    ['grep -d recurse foo src', { trees: ['src'] }],
    ['grep --directories=rec foo src', { trees: ['src'] }],
    ['grep -d skip foo src', { trees: [] }],
    ['grep -5 --color foo a', { reads: ['a'] }],
    ['grep -- -v a', { reads: ['a'] }],
  ])('%s', (command, touches) => void expectAccepted(command, { model: 'grep', ...touches }));

  it('-R follows symbolic links while it walks', () => {
    const verdict = expectAccepted('grep -R KEY ~', { trees: ['~'] });
    expect(verdict.trees[0]).toMatchObject({ follow: true, hidden: true, dir: { tilde: true } });
  });

  it('accepts a plain variable as the pattern only where it cannot become an option', () => {
    expectAccepted(words('grep -e', variable('p'), 'a'), { reads: ['a'] });
    expectAccepted(words('grep --', variable('p'), 'a'), { reads: ['a'] });
    expectRefused(words('grep', variable('p'), 'a'), undefined, /option position/);
    expectRefused(words('grep -e', variable('p'), 'a'), undefined, /p is assigned in this command line/, ['p']);
    expectRefused(words('grep -e', variable('p', false), 'a'), undefined, /unquoted/);
    expectRefused(words('grep -e', variable('p'), 'a'), undefined, /a variable whose name is not statically known is assigned/, ['*']);
  });

  it('refuses what it cannot place', () => {
    expectRefused('grep --fi=x a', undefined, /ambiguous/);
    expectRefused('grep -X egrep x a', '-X');
  });
});

describe('R-SH-6 rg', () => {
  it.each([
    ['rg foo', { trees: ['.'], hidden: false, reads: [] }],
    ['rg foo src', { trees: ['src'], hidden: false, reads: ['src'] }],
    ['rg --hidden KEY ~', { trees: ['~'], hidden: true }],
    ['rg -. KEY', { trees: ['.'], hidden: true }],
    ['rg -uu KEY', { trees: ['.'], hidden: true }],
    ['rg -u KEY', { trees: ['.'], hidden: false }],
    ['rg -u -u KEY', { trees: ['.'], hidden: true }],
    ['rg -uuu KEY', { trees: ['.'], hidden: true }],
    ['rg -e foo -g *.ts', { trees: ['.'] }],
    ['rg -f=pats a', { reads: ['pats', 'a'] }],
    ['rg --files src', { reads: ['src'], trees: [] }],
    ['rg --type-list', { trees: [] }],
    ['rg -tpy -C3 foo', { trees: ['.'] }],
  ])('%s', (command, touches) => void expectAccepted(command, { model: 'rg', ...touches }));

  it('-L follows links', () => {
    expect(judge('rg -L foo').trees[0]?.follow).toBe(true);
  });

  it.each([
    ['rg --pre=sh foo', '--pre'],
    ['rg --pre-glob=*.pdf foo', '--pre-glob'],
    ['rg -z foo', '--search-zip'],
    ['rg --search-zip foo', '--search-zip'],
    ['rg --hostname-bin=/tmp/x foo', '--hostname-bin'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('matches long options by exact name only, as ripgrep does', () => {
    expectRefused('rg --hid foo', undefined, /--hid is not one this model knows/);
    expectRefused('rg --pr=sh foo', undefined, /--pr is not one/);
  });
});

describe('R-SH-6 find', () => {
  it.each([
    ['find . -name *.go', ['.']],
    ['find', []],
    ['find -L src lib -type f -mtime -1 -print0', ['src', 'lib']],
    ['find . ( -name a -o -iname b ) -prune -o -printf %p\\n', ['.']],
    ['find . -newer ref -newermt 2024-01-01 -newerma other', ['.', 'ref', 'other']],
    ['find . -maxdepth 2 -ls', ['.']],
    ['find ~ -name .env', ['~']],
  ])('%s reads %j and reads no tree', (command, reads) => void expectAccepted(command, { model: 'find', reads, trees: [], writes: [] }));

  it.each([
    ['find . -exec cat {} ;', '-exec'],
    ['find . -execdir sh -c x ;', '-execdir'],
    ['find . -ok rm {} ;', '-ok'],
    ['find . -okdir rm {} ;', '-okdir'],
    ['find . -delete', '-delete'],
    ['find . -fprint out', '-fprint'],
    ['find . -fprint0 out', '-fprint0'],
    ['find . -fprintf out %p', '-fprintf'],
    ['find . -fls out', '-fls'],
    ['find -files0-from list', '-files0-from'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it('refuses unknown primaries, a missing argument and expansions where they are not inert', () => {
    expectRefused('find . -frobnicate', undefined, /primary "-frobnicate"/);
    expectRefused('find . -name', '-name', /needs an argument/);
    expectRefused(words('find', variable('d'), '-name x'), undefined, /not statically known/);
    expectRefused(words('find . -newer', variable('f')), '-newer', /not statically known/);
    expectAccepted(words('find . -name', variable('pat')));
  });
});
