// R-SH-6/R-POL-8 tables: programs that read and print (ls, cat, head, tail,
// wc, file, stat). Each row: a form accepted with what it reads, or refused
// with the option that decided it.
import { describe, expect, it } from 'vitest';
import { judgeProgram } from '../../../../src/core/policy/programs/index.js';
import { expectAccepted, expectRefused, substitution, variable, words } from './programTable.js';

describe('R-SH-6 ls', () => {
  it.each([
    ['ls', []],
    ['ls -la src', ['src']],
    ['ls -R --color=auto -- -odd', ['-odd']],
    ['ls --sort=time -w 80 a b', ['a', 'b']],
    ['ls ~/notes', ['~/notes']],
    ['ls --hide=*.o .', ['.']],
  ])('%s reads %j', (command, reads) => void expectAccepted(command, { model: 'ls', reads, writes: [], trees: [] }));

  it('refuses an unknown option, an ambiguous prefix and a path that is not static', () => {
    expectRefused('ls --bogus', undefined, /--bogus is not one this model knows/);
    expectRefused('ls --co', undefined, /ambiguous/);
    expectRefused('ls --hid=*.o', undefined, /ambiguous \(it could be --hide-control-chars or --hide\)/);
    expectRefused(words('ls', variable('d')), undefined, /not statically known/);
    expectRefused(words('ls --', variable('d')), undefined, /"\\"\$d\\"" in a path position is not statically known/);
  });
});

describe('R-SH-6 cat, head, tail, wc', () => {
  it.each([
    ['cat a b', ['a', 'b']],
    ['cat -nA f', ['f']],
    ['head -5 f', ['f']],
    ['head -n 40 f', ['f']],
    ['head --lines=3 -q a b', ['a', 'b']],
    ['tail -f -n 100 log', ['log']],
    ['tail --follow=name log', ['log']],
    ['wc -l a', ['a']],
    ['wc --debug -c a', ['a']],
  ])('%s reads %j', (command, reads) => void expectAccepted(command, { reads, writes: [] }));

  it('refuses wc --files0-from (by any prefix): the files it reads come from a file', () => {
    expectRefused('wc --files0-from=list', '--files0-from', /names of the files/);
    expectRefused('wc --files0=list', '--files0-from');
    expectRefused('wc --f=list', '--files0-from');
  });

  it('refuses a glob (not static) in a path position', () => {
    expectRefused(words('cat', { text: '*.txt', static: false, why: 'a glob' }), undefined, /a glob/);
    expectRefused(words('cat', substitution()), undefined, /command substitution/);
  });
});

describe('R-SH-6 file and stat', () => {
  it.each([
    ['file x.bin', { reads: ['x.bin'] }],
    ['file -b --mime-type a', { reads: ['a'] }],
    ['file -m my.magic:other.magic a', { reads: ['a', 'my.magic', 'other.magic'] }],
    ['file -m ~/m1:~/m2 a', { reads: ['a', '~/m1', '~/m2'] }],
    ['stat -c %s f', { reads: ['f'] }],
    ['stat --printf=%n\\n -L a b', { reads: ['a', 'b'] }],
  ])('%s', (command, touches) => void expectAccepted(command, touches));

  it.each([
    ['file -C -m x', '--compile'],
    ['file --comp', '--compile'],
    ['file -z a.gz', '--uncompress'],
    ['file --uncompress-n a', '--uncompress-noreport'],
    ['file -f list', '--files-from'],
    ['file -S a', '--no-sandbox'],
    ['file -p a', '--preserve-date'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));
});

describe('R-SH-6 a command named by a path, or unknown, has no model', () => {
  it('returns undefined', () => {
    expect(judgeProgram(words('/usr/bin/cat x'), new Set())).toBeUndefined();
    expect(judgeProgram(words('./ls'), new Set())).toBeUndefined();
    expect(judgeProgram(words('frobnicate x'), new Set())).toBeUndefined();
    expect(judgeProgram(words(variable('cmd'), 'x'), new Set())).toBeUndefined();
    expect(judgeProgram([], new Set())).toBeUndefined();
  });
});
