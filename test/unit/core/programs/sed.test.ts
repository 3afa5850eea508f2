// R-POL-8: `sed -n` with a script that has no w, W, e, r or R command (and no
// w or e flag of s) and no -i. The script is parsed, not matched as text.
import { describe, expect, it } from 'vitest';
import { checkSedScript } from '../../../../src/core/policy/programs/sedScript.js';
import { expectAccepted, expectRefused, variable, words } from './programTable.js';

describe('R-POL-8 sed', () => {
  it.each([
    ['sed -n 1,40p f', ['f']],
    ['sed -n -e 1p -e $p a b', ['a', 'b']],
    ['sed -ne /x/p f', ['f']],
    ['sed --quiet --expression=s/a/b/gp f', ['f']],
    ['sed -nE s/(a)/\\1/p f', ['f']],
    ['sed -n -s --sandbox p a', ['a']],
  ])('%s reads %j', (command, reads) => void expectAccepted(command, { model: 'sed', reads, writes: [] }));

  it('accepts a script starting with #n (sed reads it as -n)', () => {
    expectAccepted(['sed', '#n\np', 'f'].map((text) => ({ text, static: true })));
  });

  it.each([
    ['sed -i s/a/b/ f', '--in-place'],
    ['sed -n -i.bak p f', '--in-place'],
    ['sed --in-pl=.bak -n p f', '--in-place'],
    ['sed -n -f script.sed f', '--file'],
  ])('%s is refused (%s)', (command, option) => void expectRefused(command, option));

  it.each([
    ['sed -n w/tmp/x f', /command w writes/],
    ['sed -n 1W/tmp/x f', /command W writes/],
    ['sed -n r/etc/passwd f', /command r reads/],
    ['sed -n $R/etc/passwd f', /command R reads/],
    ['sed -n e f', /command e runs/],
    ['sed -n s/a/b/w/tmp/x f', /w flag/],
    ['sed -n s/a/b/gpw/tmp/x f', /w flag/],
    ['sed -n s/a/id/e f', /e flag/],
    ['sed -n s|a|b|e f', /e flag/],
    ['sed -n 1!{p;w/tmp/x} f', /command w/],
    ['sed -n :a;w/tmp/x f', /command w/],
    ['sed -n p f', undefined],
  ])('%s', (command, why) => {
    if (why === undefined) expectAccepted(command);
    else expectRefused(command, undefined, why);
  });

  it('requires -n (the modelled form) and a literal script', () => {
    expectRefused('sed s/a/b/ f', undefined, /without -n/);
    expectRefused(words('sed -n', variable('s'), 'f'), undefined, /not statically known/);
    expectRefused(words('sed -n -e', variable('s'), 'f'), undefined, /not statically known/);
    expectRefused('sed -n', undefined, /without a script/);
  });
});

describe('R-POL-8 the sed script parser', () => {
  it.each([
    'p', '1,5p', '$!N;P;D', '/re/,/end/{s/a/b/g;p}', '0,/x/d', '2~3p', '/a/I,+3p', '\\%x%p', 's/a\\/b/c/2', 's,a,b,gI', 'y/abc/xyz/',
    ':top\nN\n$!btop\np', 'b end;p;:end', 'a appended text; w not-a-command', 'a\\\nline one\\\nline two', 'i\\text', '1{\n  p\n}\n', '# comment\np',
    'l 40', 'q5', 'Q', 'v 4.2', 'F;=;z', 's/x/y/ p', 'p # trailing comment', '1,3{/a/!p}', 'T;t x;:x',
  ])('accepts %j', (script) => expect(checkSedScript(script)).toBeUndefined());

  it.each([
    ['w out', /command w/],
    ['1,2w out', /command w/],
    ['/x/ r in', /command r/],
    ['e echo hi', /command e/],
    ['s/a/b/e', /e flag/],
    ['s/a/b/3w out', /w flag/],
    ['{p;W out}', /command W/],
    ['{p', /unmatched \{/],
    ['p}', /unexpected \}/],
    ['s/a/b', /unterminated/],
    ['s/a/b/x', /unknown flag/],
    ['k', /unknown command/],
    ['/unterminated', /unterminated/],
    ['pq', /extra characters/],
    ['1:label', /address on a label/],
    ['a', /without text/],
    ['y/ab/c', /unterminated/],
    ['2~p', /step address/],
    ['s/a\nb/c/', /unterminated/],
  ])('refuses %j', (script, why) => expect(checkSedScript(script)).toMatch(why));

  it('a label ends where sed could end it, so a command after it is still seen', () => {
    expect(checkSedScript('b x;w out')).toMatch(/command w/);
    expect(checkSedScript('bx}w out')).toBeDefined();
    expect(checkSedScript('{:a};w out')).toMatch(/command w/);
  });
});
