// R-SH-5/R-SH-6/R-SH-7 tables for the bash builtins echo, printf, true, false,
// cd and pushd: where a plain variable is inert, and what is refused.
import { describe, it } from 'vitest';
import { expectAccepted, expectRefused, substitution, variable, words } from './programTable.js';

describe('R-SH-5 echo and printf: inert text', () => {
  it('accept plain variables, quoted or not, unless the command line assigns them', () => {
    expectAccepted(words('echo hello', variable('USER', false)), { model: 'echo' });
    expectAccepted(words('echo -n', variable('x')));
    expectAccepted(words('echo', variable('x', false)), {}, ['y']);
    expectRefused(words('echo', variable('x', false)), undefined, /x is assigned in this command line/, ['x']);
    expectRefused(words('echo', variable('x')), undefined, /assigned/, ['*']);
    expectRefused(words('echo', { text: '${x@P}', static: false, why: 'a parameter transformation' }), undefined, /parameter transformation/);
    expectRefused(words('echo', substitution()), undefined, /not statically known/);
  });

  it('printf: a literal format, then inert arguments; -v assigns a variable (R-SH-7)', () => {
    expectAccepted(words('printf %s\\n', variable('x', false)), { model: 'printf' });
    expectAccepted('printf -- -%s x');
    expectAccepted('printf');
    expectRefused(words('printf', variable('fmt')), undefined, /format position/);
    expectRefused(words('printf --', variable('fmt')), undefined, /format position/);
    expectRefused('printf -v PATH /tmp/evil', '-v', /assigns a variable/);
    expectRefused('printf -vPATH x', '-v');
    expectRefused('printf -x y', undefined, /-x is not one/);
  });

  it('true and false ignore their arguments', () => {
    expectAccepted(words('true --anything', variable('x', false)));
    expectAccepted('false -x y');
  });
});

describe('R-SH-6 cd and pushd', () => {
  it.each([
    ['cd src', ['src']],
    ['cd', ['~']],
    ['cd -P -- -dir', ['-dir']],
    ['cd ~/work', ['~/work']],
    ['pushd vendor/lib', ['vendor/lib']],
    ['pushd -n x', ['x']],
  ])('%s moves to %j', (command, reads) => void expectAccepted(command, { reads }));

  it('refuses directories that are not statically known', () => {
    expectRefused('cd -', undefined, /OLDPWD/);
    expectRefused(words('cd', variable('d')), undefined, /not statically known/);
    expectRefused('cd a b', undefined, /one directory/);
    expectRefused('cd -x', undefined, /-x is not one/);
    expectRefused('pushd', undefined, /rotates the stack/);
    expectRefused('pushd +1', undefined, /rotates the stack/);
    expectRefused('pushd -- -2', undefined, /rotates the stack/);
  });
});
