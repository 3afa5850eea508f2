// R-SH-1/R-POL-8 tables: wrappers judged as a layer of their own, the
// `--version` model, and assent's read-only subcommands.
import { describe, expect, it } from 'vitest';
import { judgeProgram, judgeVersion, MODELLED_PROGRAMS } from '../../../../src/core/policy/programs/index.js';
import { expectAccepted, expectRefused, variable, words } from './programTable.js';

describe('R-SH-1 wrappers: only their own options; the command they run is judged apart', () => {
  it.each([
    ['timeout 5 rm -rf /', 'timeout'],
    ['timeout -s KILL -k 1 10s make --foo', 'timeout'],
    ['nice -n 10 make', 'nice'],
    ['nice -5 make', 'nice'],
    ['nohup server --port 1', 'nohup'],
    ['stdbuf -oL -e0 tail -f log', 'stdbuf'],
    ['time -p make', 'time'],
  ])('%s is accepted by the %s model', (command, model) => void expectAccepted(command, { model, reads: [] }));

  it('GNU time -o writes a file; nohup may write nohup.out', () => {
    expectAccepted('time -o times.txt -a make', { writes: ['times.txt'] });
    expectAccepted('nohup make', { writes: ['nohup.out'] });
  });

  it("refuses the wrapper's own unknown options and a duration that is not static", () => {
    expectRefused('timeout --bogus 5 ls', undefined, /--bogus/);
    expectRefused(words('timeout', variable('t'), 'ls'), undefined, /not statically known/);
    expectRefused('nice --adj', undefined, /needs a value/);
  });
});

describe('R-POL-8 PROGRAM --version and -V', () => {
  it.each(['ssh -V', 'sudo -V', 'perl -v', 'make --version', 'curl --version'])('%s is the version model', (command) => {
    expect(judgeProgram(words(command), new Set())).toEqual({ model: 'version', reads: [], writes: [], trees: [] });
  });

  it.each(['node --version', 'cargo --version', 'python3 -V', 'python3.12 -V', 'java --version'])('%s is the version model of a launcher: the edge looks for the files its shim reads', (command) => {
    const verdict = judgeProgram(words(command), new Set());
    expect(verdict?.refused).toBeUndefined();
    expect(verdict?.launcher?.files).toContain('.tool-versions');
  });

  it('perl -V loads Config.pm from @INC: it is not a version form', () => {
    expect(judgeVersion(words('perl -V'))).toBeUndefined();
  });

  it('accepts nothing else', () => {
    for (const command of ['node -V', 'node --version x', './build.sh --version', 'node --versio', 'node']) {
      expect(judgeVersion(words(command)), command).toBeUndefined();
    }
    expect(judgeVersion(words(variable('p'), '--version'))).toBeUndefined();
    expect(judgeProgram(words('node -e 1'), new Set())).toBeUndefined();
    // A modelled program judges --version itself.
    expect(judgeProgram(words('sort --version'), new Set())?.model).toBe('sort');
  });
});

describe('R-POL-8 assent from an agent shell: read-only subcommands only', () => {
  it.each([
    ['assent pending', 'assent pending'],
    ['assent pending --json abc', 'assent pending'],
    ['assent daemon status --json', 'assent daemon status'],
    ['assent policy explain claude Bash --input {} --json', 'assent policy explain'],
    ['assent audit --since 2h --csv', 'assent audit'],
    ['assent audit verify --all-hosts', 'assent audit verify'],
    ['assent --version', 'assent'],
  ])('%s', (command, model) => void expectAccepted(command, { model }));

  it.each(['assent approve abc', 'assent deny x', 'assent init --force', 'assent uninstall', 'assent daemon stop', 'assent rules add', 'assent', 'assent policy'])(
    '%s is refused',
    (command) => void expectRefused(command, undefined, /read-only subcommands/),
  );

  it('refuses unknown options and abbreviations (commander takes exact names)', () => {
    expectRefused('assent pending --js', undefined, /--js is not one/);
    expectRefused('assent audit --output=x', undefined, /--output is not one/);
  });
});

describe('R-SH-6 the registry', () => {
  it('names every modelled program', () => {
    expect(MODELLED_PROGRAMS).toEqual(
      expect.arrayContaining(['ls', 'pwd', 'cat', 'head', 'tail', 'wc', 'file', 'stat', 'grep', 'rg', 'find', 'sort', 'uniq', 'diff', 'cmp', 'du', 'tree', 'basename', 'dirname', 'realpath', 'date', 'whoami', 'uname', 'which', 'echo', 'printf', 'cd', 'pushd', 'true', 'false', 'sed', 'mkdir', 'touch', 'cp', 'mv', 'git', 'time', 'timeout', 'nice', 'nohup', 'stdbuf', 'assent']),
    );
  });
});
