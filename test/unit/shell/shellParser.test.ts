// R-SH-1, R-SH-5, R-SH-7, R-SH-8: what the bash decomposition yields — every
// simple command a line would run (here-document bodies, nested backticks, the
// time/!/coproc keywords, [[ ]] and (( )), case patterns, loops, functions),
// words with plainVars, code-running expansions as `unknown`, and the contract
// fields pipeline, inside and assigns. The completeness table is generated:
// each construct, and each construct nested in each other, around `rm -rf /`.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ParsedShell, ShellWord, SimpleCommand } from '../../../src/core/policy/shellCommand.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';

let parser: ShellParser;

beforeAll(async () => {
  parser = await loadShellParser();
});

function parse(source: string): ParsedShell {
  return parser.parse(source);
}

/** The command whose words are all static and read `line`. */
function find(parsed: ParsedShell, line: string): SimpleCommand | undefined {
  return parsed.commands.find((c) => c.words.length > 0 && c.words.every((w) => w.static) && c.words.map((w) => w.text).join(' ') === line);
}

function indexOf(parsed: ParsedShell, line: string): number {
  const command = find(parsed, line);
  return command === undefined ? -1 : parsed.commands.indexOf(command);
}

function shape(command: SimpleCommand): string {
  return command.words.map((w) => (w.static ? w.text : `<${w.text}>`)).join(' ');
}

describe('R-SH-8 the examples of the issue', () => {
  it('a backtick in an unquoted here-document body runs', () => {
    const parsed = parse('cat <<EOF\n`rm -rf ~`\nEOF');
    expect(parsed.errors).toEqual([]);
    const rm = find(parsed, 'rm -rf ~');
    expect(rm?.via).toBe('a here-document');
    expect(rm?.inside).toBe(indexOf(parsed, 'cat'));
  });

  it('a substitution in a <<- body (leading tabs removed) runs', () => {
    const parsed = parse('cat <<-EOF\n\t$(rm -rf ~)\nEOF');
    expect(find(parsed, 'rm -rf ~')?.inside).toBe(indexOf(parsed, 'cat'));
    expect(parsed.commands[0]?.redirects).toEqual([{ op: '<<-', target: expect.objectContaining({ text: '$(rm -rf ~)\n', static: false }) }]);
  });

  it('nested backticks are unescaped as bash does and parsed again', () => {
    const parsed = parse('echo `echo \\`rm -rf ~\\``');
    expect(parsed.errors).toEqual([]);
    expect(parsed.commands.map(shape)).toEqual(['echo <`echo \\`rm -rf ~\\``>', 'echo <`rm -rf ~`>', 'rm -rf ~']);
    expect(parsed.commands.map((c) => c.inside)).toEqual([undefined, 0, 1]);
  });

  it('time before a group runs the group', () => {
    const parsed = parse('time { rm -rf ~; }');
    expect(parsed.errors).toEqual([]);
    expect(parsed.commands.map(shape)).toEqual(['rm -rf ~']);
  });

  it('$(<file) is a read of file and $(> file) a write of it: word-less commands with the redirection', () => {
    const read = parse('echo $(<~/.ssh/id_rsa)');
    expect(read.commands[1]).toMatchObject({ words: [], redirects: [{ op: '<', target: { text: '~/.ssh/id_rsa', static: true, tilde: true } }], inside: 0, via: 'a command substitution' });
    const write = parse('echo $(> ~/.ssh/authorized_keys)');
    expect(write.commands[1]).toMatchObject({ words: [], redirects: [{ op: '>', target: { text: '~/.ssh/authorized_keys', static: true } }], inside: 0 });
  });

  it('${x@P} runs the value as a prompt: its command is not statically known', () => {
    const parsed = parse("x='$(touch /tmp/p)'; echo ${x@P}");
    const echo = parsed.commands[1] as SimpleCommand;
    expect(echo.words[1]).toEqual({ text: '${x@P}', static: false, why: 'a parameter transformation (${x@P})' });
    expect(echo.unknown.join()).toMatch(/parameter transformation/);
    expect(parsed.commands[0]?.assigns).toEqual(['x']);
  });

  it('$((x)) is arithmetic: its command is not statically known', () => {
    const echo = parse('echo $((x))').commands[0] as SimpleCommand;
    expect(echo.words[1]).toMatchObject({ static: false, why: 'an arithmetic expansion ($((x)))' });
    expect(echo.unknown.join()).toMatch(/arithmetic/);
  });

  it('printf -v PATH assigns PATH', () => {
    const parsed = parse('printf -v PATH x; ls');
    expect(parsed.commands[0]?.assigns).toEqual(['PATH']);
    expect(parsed.commands[1]?.assigns).toBeUndefined();
  });

  it('for PATH in … pushes a header command that assigns PATH each word, before the body', () => {
    const parsed = parse('for PATH in /tmp/evil; do ls; done');
    expect(parsed.commands[0]).toEqual({
      text: 'for PATH in /tmp/evil',
      words: [],
      assignments: [{ name: 'PATH', value: { text: '/tmp/evil', static: true } }],
      redirects: [],
      depth: 0,
      unknown: [],
      assigns: ['PATH'],
    });
    expect(shape(parsed.commands[1] as SimpleCommand)).toBe('ls');
  });
});

// ---- completeness, generated ---------------------------------------------------

/** What may surround X: code (any command line), a simple command only, or text inside quotes or a body. */
type Slot = 'code' | 'simple' | 'single' | 'double' | 'backtick' | 'heredoc';

/** [template with X where a command goes, what X may be, whether the template is itself one simple command] */
const TEMPLATES: readonly (readonly [string, Slot, boolean])[] = [
  ['X', 'code', true], ['a; X', 'code', false], ['a && X', 'code', false], ['a || X', 'code', false], ['a | X', 'code', false],
  ['X | a', 'code', false], ['a & X', 'code', false], ['a\nX', 'code', false], ['(X)', 'code', false], ['{ X; }', 'code', false],
  ['if X; then a; fi', 'code', false], ['if a; then X; fi', 'code', false], ['if a; then b; else X; fi', 'code', false],
  ['if a; then b; elif X; then c; fi', 'code', false], ['while X; do a; done', 'code', false], ['until a; do X; done', 'code', false],
  ['for i in a; do X; done', 'code', false], ['for ((i=0;i<1;i++)); do X; done', 'code', false], ['select i in a; do X; done', 'code', false],
  ['case a in a) X;; esac', 'code', false], ['case a in a) X;& b) c;; esac', 'code', false], ['f() { X; }; f', 'code', false],
  ['function f { X; }; f', 'code', false], ['f() ( X ); f', 'code', false], ['a || { X; }', 'code', false], ['a && (X) | b', 'code', false],
  ['{ X; } 2>&1 | a', 'code', false], ['a |& X', 'code', false], ['cat <<EOF && a\nx\nEOF\nX', 'code', false], ['a <<EOF\nx\nEOF\nX', 'code', false],
  ['time X', 'code', false], ['time { X; }', 'code', false], ['time -p X', 'code', false], ['! X', 'code', false], ['! { X; }', 'code', false],
  ['coproc { X; }', 'code', false], ['coproc N { X; }', 'code', false], ['coproc X', 'simple', false],
  ['echo $(X)', 'code', true], ['echo $( X )', 'code', true], ['echo "$(X)"', 'double', true], ['echo `X`', 'backtick', true], ['a `X` b', 'backtick', true],
  ['cat <(X)', 'code', true], ['a > >(X)', 'code', true], ['x=$(X)', 'code', false], ['x=`X`', 'backtick', false], ['x=$(X) a', 'code', true],
  ['local x=$(X)', 'code', true], ['export x="$(X)"', 'double', true], ['a[$(X)]=1', 'code', false], ['x=(a $(X))', 'code', false],
  ['declare -a x=($(X))', 'code', true], ['echo ${x:-$(X)}', 'code', true], ['echo "${x:-$(X)}"', 'double', true], ['echo ${y:=$(X)}', 'code', true],
  ['[[ $(X) ]]', 'code', false], ['[[ a == $(X) ]]', 'code', false], ['(( $(X) ))', 'code', false], ['[ -f "$(X)" ]', 'double', true],
  ['test -n "$(X)"', 'double', true], ['echo $[$(X)]', 'code', true], ['echo $(( $(X) ))', 'code', true],
  ['case $(X) in a) b;; esac', 'code', false], ['case a in $(X)) b;; esac', 'code', false], ['for i in $(X); do a; done', 'code', false],
  ['cat <<EOF\n$(X)\nEOF', 'heredoc', true], ['cat <<EOF\n`X`\nEOF', 'backtick', true], ['cat <<-EOF\n\t$(X)\n\tEOF', 'heredoc', true],
  ['cat <<EOF | a\n$(X)\nEOF', 'heredoc', false], ['while read l; do a; done <<EOF\n$(X)\nEOF', 'heredoc', false],
  ['cat <<< "$(X)"', 'double', true], ['cat <<< $(X)', 'code', true], ['read x <<< "$(X)"', 'double', true], ['printf -v v "%s" "$(X)"', 'double', true],
  ['a 2>$(X)', 'code', true], ['{ a; } > $(X)', 'code', false], ['while read l; do a; done < <(X)', 'code', false], ['echo $(echo $(X))', 'code', true],
  ["bash -c 'X'", 'single', true], ['sh -c "X"', 'double', true], ["eval 'X'", 'single', true], ['sudo X', 'simple', true], ['env X', 'simple', true],
  ['nohup X', 'simple', true], ['timeout 5 X', 'simple', true], ['xargs X', 'simple', true],
];

function fits(inner: string, simple: boolean, slot: Slot): boolean {
  switch (slot) {
    case 'code':
      return true;
    case 'simple':
      return simple;
    case 'single':
      return !inner.includes("'");
    case 'double':
      return !/["`\\\n]/.test(inner);
    case 'backtick':
      return !/["`\\\n]/.test(inner) && !inner.includes('$(');
    case 'heredoc':
      return !inner.includes('EOF');
  }
}

const RM = 'rm -rf /';
const ONE_LEVEL = TEMPLATES.map(([template]) => template.replace('X', RM));
/** For each template, every template that fits in it, nested. */
const TWO_LEVELS = TEMPLATES.map(([outer, slot]) => ({
  outer,
  lines: TEMPLATES.filter(([inner, , simple]) => fits(inner.replace('X', RM), simple, slot)).map(([inner]) => outer.replace('X', inner.replace('X', RM))),
}));

describe('R-SH-1 / R-SH-8 decomposition is complete (generated)', () => {
  it.each(ONE_LEVEL)('%j: rm -rf / is one of its commands, with no parse error', (source) => {
    const parsed = parse(source);
    expect(parsed.errors).toEqual([]);
    expect(find(parsed, RM), parsed.commands.map(shape).join(' ; ')).toBeDefined();
  });

  it('nests each construct in each other that fits in it (thousands of lines)', () => {
    expect(TWO_LEVELS.reduce((n, { lines }) => n + lines.length, 0)).toBeGreaterThan(5000);
  });

  it.each(TWO_LEVELS)('each construct nested in $outer: rm -rf / is one of its commands, or the line is a parse error (at least prompt)', ({ lines }) => {
    const hidden = lines.filter((source) => {
      const parsed = parse(source);
      return find(parsed, RM) === undefined && parsed.errors.length === 0;
    });
    expect(hidden).toEqual([]);
  });

  it('nested lines that bash runs without error are decomposed without error', () => {
    // A sample of the nestings whose result is valid bash: these must not fall back to "parse error".
    const valid = ['echo "$(cat <<EOF\n$(rm -rf /)\nEOF\n)"', 'sudo echo `rm -rf /`', "bash -c 'time { rm -rf /; }'", 'f() { ! { rm -rf /; }; }; f', 'cat <<EOF\n$(case a in a) rm -rf /;; esac)\nEOF'];
    for (const source of valid) {
      const parsed = parse(source);
      expect(parsed.errors, source).toEqual([]);
      expect(find(parsed, RM), source).toBeDefined();
    }
  });
});

// ---- here-documents and here-strings ------------------------------------------

describe('R-SH-8 here-documents', () => {
  it.each([["cat <<'EOF'\n$(rm -rf ~)\nEOF"], ['cat <<"EOF"\n$(rm -rf ~)\nEOF'], ['cat <<\\EOF\n$(rm -rf ~)\nEOF'], ["cat <<-'EOF'\n\t`rm -rf ~`\n\tEOF"]])(
    'a quoted delimiter makes the body literal: %j',
    (source) => {
      const parsed = parse(source);
      expect(parsed.errors).toEqual([]);
      expect(parsed.commands.map(shape)).toEqual(['cat']);
      expect(parsed.commands[0]?.redirects[0]?.target.static).toBe(true);
    },
  );

  // Only plain $NAME / ${NAME} leave the body's command statically known; command substitutions run as commands of their own.
  it.each([
    ['${x}', false],
    ['$x and $HOME', false],
    ['$(date) and `pwd`', false],
    ['plain "quotes" and \\$(escaped)', false],
    ['${x@P}', true],
    ['$((1 + 2))', true],
    ['$[1]', true],
    ['${!name}', true],
    ['${a[$i]}', true],
    ['${s:$n}', true],
    ['${x:-default}', true],
    ['$1 and $@', true],
    ['${#x}', true],
  ])('body %j: the command is not statically known (or the line is a parse error): %s', (body, unknown) => {
    const parsed = parse(`cat <<EOF\n${body}\nEOF`);
    const cat = parsed.commands[0] as SimpleCommand;
    expect(shape(cat)).toBe('cat');
    expect(cat.unknown.length > 0 || parsed.errors.length > 0).toBe(unknown);
  });

  it('reads the body as bash does: "quotes" are text, \\" keeps its backslash in a backtick, \\-newline joins lines', () => {
    const body = parse('cat <<EOF\n"a" \\$x \\\\ `echo \\"; rm -rf ~; \\"`\nEOF');
    expect(body.errors).toEqual([]);
    expect(find(body, 'rm -rf ~')).toBeDefined();
    const literal = parse('cat <<EOF\n"a" \\$x\nEOF').commands[0]?.redirects[0]?.target;
    expect(literal).toEqual({ text: '"a" $x\n', static: true });
    // E\<newline>OF is the delimiter to bash: the line after it runs as a command, which the grammar does not see
    expect(parse('cat <<EOF\nE\\\nOF\nrm -rf ~\nEOF').errors.join()).toMatch(/before the line assent's parser ends it at/);
  });

  it('words and redirections after the delimiter belong to the command', () => {
    const words = parse('cat <<EOF ~/.ssh/id_rsa\nx\nEOF');
    expect(words.commands.map(shape)).toEqual(['cat ~/.ssh/id_rsa']);
    const redirected = parse('cat <<EOF > out\nx\nEOF');
    expect(redirected.commands).toHaveLength(1);
    expect(redirected.commands[0]?.redirects).toEqual([{ op: '>', target: { text: 'out', static: true } }, { op: '<<', target: { text: 'x\n', static: true } }]);
  });

  it('a body fed to a group or loop belongs to the word-less group command', () => {
    const parsed = parse('while read l; do echo "$l"; done <<EOF\n$(rm -rf ~)\nEOF');
    const group = parsed.commands.findIndex((c) => c.words.length === 0);
    expect(parsed.commands[group]?.redirects[0]?.op).toBe('<<');
    expect(find(parsed, 'rm -rf ~')?.inside).toBe(group);
  });

  it('what the grammar hangs under a here-document (| sh, && ls) is the rest of the pipeline or list', () => {
    const parsed = parse('cat <<EOF | sh && ls\n$(id)\nEOF');
    const [cat, sh] = [find(parsed, 'cat'), find(parsed, 'sh')];
    expect(cat?.pipeline).toEqual({ id: 1, stage: 0 });
    expect(sh?.pipeline).toEqual({ id: 1, stage: 1 });
    expect(find(parsed, 'id')?.inside).toBe(parsed.commands.indexOf(cat as SimpleCommand));
    expect(find(parsed, 'ls')).toBeDefined();
  });

  it('here-strings are scanned like any word', () => {
    expect(find(parse('cat <<< "$(rm -rf ~)"'), 'rm -rf ~')?.inside).toBe(0);
    expect(parse('cat <<< ${x@P}').commands[0]?.unknown.join()).toMatch(/parameter transformation/);
    expect(parse('cat <<< "$x ${y}"').commands[0]?.unknown).toEqual([]);
    expect(parse('cat <<< "${x:-y}"').commands[0]?.unknown).toEqual(['the here-string expands ${x:-y}']);
  });
});

describe('R-SH-1 a shell reading its script from a literal here-document or here-string', () => {
  it('decomposes the script like a -c string; the shell stays not statically known', () => {
    const parsed = parse("bash <<'EOF'\nls\nrm -rf /\nEOF");
    expect(parsed.commands.map((c) => [shape(c), c.via, c.depth])).toEqual([['bash', undefined, 0], ['ls', 'bash <<', 1], ['rm -rf /', 'bash <<', 1]]);
    expect(parsed.commands[0]?.unknown.join()).toMatch(/reads commands from its input/);
    expect(find(parse("sh -s <<< 'rm -rf ~'"), 'rm -rf ~')?.via).toBe('sh <<<');
    expect(parse('bash script.sh <<< "rm -rf ~"').commands.map(shape)).toEqual(['bash script.sh']);
  });
});

describe('R-SH-3 limits', () => {
  it('a line nested deeper than the walk follows is a parse error, not a crash', () => {
    const deep = parse(`echo ${'$('.repeat(1000)}ls${')'.repeat(1000)}`);
    expect(deep.errors.join()).toMatch(/levels deep/);
    const words = parse(`echo ${'${x:-'.repeat(5000)}a${'}'.repeat(5000)}`);
    expect(words.errors.length).toBeGreaterThan(0);
    expect(parse(`echo ${'$('.repeat(100)}ls${')'.repeat(100)}`).errors).toEqual([]);
  });
});

// ---- backticks, keywords, compounds -------------------------------------------

describe('R-SH-8 backticks', () => {
  it('three levels of \\` nesting reach the innermost command', () => {
    const parsed = parse('echo `echo \\`echo \\\\\\`rm -rf ~\\\\\\`\\``');
    expect(parsed.errors).toEqual([]);
    expect(find(parsed, 'rm -rf ~')).toBeDefined();
  });

  it('inside double quotes \\" loses its backslash too; outside it does not', () => {
    expect(parse('echo "`echo \\"a; rm -rf ~\\"`"').commands.map(shape)).toEqual(['echo <"`echo \\"a; rm -rf ~\\"`">', 'echo a; rm -rf ~']);
    expect(parse('echo `echo \\"a; rm -rf ~\\"`').commands.map(shape)).toContain('rm -rf <~\\">');
  });
});

describe('R-SH-8 time, ! and coproc', () => {
  it.each([
    ['time ls', ['ls']],
    ['time -p ls | wc', ['ls', 'wc']],
    ['time -p -- ls', ['ls']],
    ['time time { ls; }', ['ls']],
    ['! time ls', ['ls']],
    ['! { ls; }', ['ls']],
    ['! if a; then b; fi', ['a', 'b']],
    ['f() { time -p ( ls ); }', ['ls']],
    ['a | time b', ['a', 'time b', 'b']],
    ['X=1 time ls', ['time ls', 'ls']],
    ["bash -c 'time { ls; }'", ['bash -c time { ls; }', 'ls']],
  ])('%j runs %j', (source, commands) => {
    const parsed = parse(source);
    expect(parsed.errors).toEqual([]);
    expect(parsed.commands.map(shape)).toEqual(commands);
  });

  it('coproc NAME { … } pushes a header that assigns NAME and NAME_PID; coproc cmd wraps a simple command (COPROC)', () => {
    const named = parse('coproc N { ls; }');
    expect(named.errors).toEqual([]);
    expect(named.commands.map((c) => [shape(c), c.assigns])).toEqual([['', ['N', 'N_PID']], ['ls', undefined]]);
    const simple = parse('coproc ls -l');
    expect(simple.commands.map((c) => [shape(c), c.via, c.assigns])).toEqual([['coproc ls -l', undefined, ['COPROC', 'COPROC_PID']], ['ls -l', 'coproc', undefined]]);
    expect(parse('coproc { ls; } > f').commands.map(shape)).toEqual(['', 'ls', '']);
  });
});

describe('R-SH-5 / R-SH-8 [[ ]], (( )), case, loops, functions', () => {
  it.each([
    ['[[ $x -eq 1 ]]', true],
    ['[[ x -lt 2 ]]', true],
    ['[[ 1 -eq 2 && $# -gt 0 ]]', false],
    ['[[ -v a[$i] ]]', true],
    ['[[ -v a[0] && -v name ]]', false],
    ['[[ $x == y* && -f $f ]]', false],
    ['[[ ${a[i]} ]]', true],
    ['(( x = y + 1 ))', true],
    ['let x=1', true],
    ['for ((i = 0; i < 3; i++)); do :; done', true],
    ['test -v "a[$(id)]"', true],
  ])('%j is not statically known: %s', (source, unknown) => {
    expect(parse(source).commands[0]?.unknown.length !== 0).toBe(unknown);
  });

  it('[[ ]] is a command of its leaves; its substitutions run inside it', () => {
    const parsed = parse('[[ -f $f && $(rm -rf ~) == x ]]');
    expect(shape(parsed.commands[0] as SimpleCommand)).toBe('[[ -f <$f> && <$(rm -rf ~)> == <x> ]]'); // the right of == is a pattern
    expect(find(parsed, 'rm -rf ~')?.inside).toBe(0);
  });

  it('[ … ] is the [ builtin: its > is a redirection (a write), not a comparison', () => {
    const parsed = parse('[ a > b ]');
    expect(parsed.commands).toEqual([expect.objectContaining({ text: '[ a > b ]', words: [{ text: '[', static: true }, { text: 'a', static: true }, { text: ']', static: true }], redirects: [{ op: '>', target: { text: 'b', static: true } }] })]);
  });

  it('(( )) assigns what it assigns; for (( )) gets a word-less header that is not statically known', () => {
    expect(parse('(( x = y + 1, z++ ))').commands[0]?.assigns).toEqual(['x', 'z']);
    const loop = parse('for ((i = $(n); i < 3; i++)); do ls; done');
    expect(loop.commands[0]).toMatchObject({ text: 'for ((i = $(n); i < 3; i++))', words: [], assigns: ['i'] });
    expect(loop.commands[0]?.unknown.join()).toMatch(/arithmetic/);
    expect(find(loop, 'n')?.inside).toBe(0);
    expect(shape(loop.commands.at(-1) as SimpleCommand)).toBe('ls');
  });

  it('case patterns and subject run their substitutions (inside a header); plain ones push no header', () => {
    const parsed = parse('case $(uname) in $(rm -rf ~)) ls;; esac');
    expect(parsed.commands[0]).toMatchObject({ text: 'case $(uname) in', words: [] });
    expect(find(parsed, 'uname')?.inside).toBe(0);
    expect(find(parsed, 'rm -rf ~')?.inside).toBe(0);
    expect(find(parsed, 'ls')?.inside).toBeUndefined();
    expect(parse('case $x in a|b) ls;; *) pwd;; esac').commands.map(shape)).toEqual(['ls', 'pwd']);
  });

  it('select NAME in … assigns NAME and REPLY; for NAME without in takes "$@"', () => {
    expect(parse('select x in a b; do ls; done').commands[0]).toMatchObject({ text: 'select x in a b', assignments: [{ name: 'x' }, { name: 'x' }], assigns: ['x', 'REPLY'] });
    expect(parse('for x; do ls; done').commands[0]?.assignments).toEqual([{ name: 'x', value: { text: '"$@"', static: false, why: 'the positional parameters ("$@")' } }]);
  });

  it('a function body is decomposed as if it ran; redirections of the definition are a group', () => {
    const parsed = parse('f() { rm -rf ~; } > out; f');
    expect(parsed.commands.map(shape)).toEqual(['rm -rf ~', '', 'f']);
    expect(parsed.commands[1]?.redirects).toEqual([{ op: '>', target: { text: 'out', static: true } }]);
  });
});

// ---- words ----------------------------------------------------------------------

describe('R-SH-5 words: plainVars and why', () => {
  const word = (source: string): ShellWord => parse(`echo ${source}`).commands[0]?.words[1] as ShellWord;

  it.each([
    ['$x', { names: ['x'], quoted: false }],
    ['${x}', { names: ['x'], quoted: false }],
    ['"$x"', { names: ['x'], quoted: true }],
    ['"a ${x} b"', { names: ['x'], quoted: true }],
    ['a"$x"b', { names: ['x'], quoted: true }],
    ['"$x"$y', { names: ['x', 'y'], quoted: false }],
    ['$HOME/$x', { names: ['HOME', 'x'], quoted: false }],
  ])('%j is not static only through plain variables: %j', (source, plainVars) => {
    expect(word(source)).toMatchObject({ static: false, plainVars });
  });

  it.each([
    ['$@', 'a special parameter ($@)'],
    ['"$*"', 'a special parameter ($*)'],
    ['$1', 'a special parameter ($1)'],
    ['${10}', 'a special parameter (${10})'],
    ['$#', 'a special parameter ($#)'],
    ['$?', 'a special parameter ($?)'],
    ['$$', 'a special parameter ($$)'],
    ['$!', 'a special parameter ($!)'],
    ['$-', 'a special parameter ($-)'],
    ['$0', 'a special parameter ($0)'],
    ['$_', 'a special parameter ($_)'],
    ['${#x}', 'the length of a variable (${#x})'],
    ['${x:-y}', 'a parameter expansion (${x:-y})'],
    ['${x@P}', 'a parameter transformation (${x@P})'],
    ['${x@Q}', 'a parameter transformation (${x@Q})'],
    ['${!x}', 'an indirect expansion (${!x})'],
    ['${!x*}', 'a list of variable names (${!x*})'],
    ['${x[1]}', 'an array element (${x[1]})'],
    ['${x[i]}', 'an array subscript (${x[i]})'],
    ['$((1 + 2))', 'an arithmetic expansion ($((1 + 2)))'],
    ['$"hello $x"', 'a translated string ($"hello $x")'],
    ['a$"b"', 'a translated string (a$"b")'],
    ['"$x"*', 'a glob ("$x"*)'],
    ['$(ls)', 'a command substitution'],
    ['{a,$x}', 'a brace expansion'],
  ])('%j is not static, without plainVars: %s', (source, why) => {
    const result = word(source);
    expect(result.static).toBe(false);
    expect(result.plainVars).toBeUndefined();
    expect(result.why?.replace(/^a glob \(.*\)$/, `a glob (${source})`)).toBe(why);
  });

  it('double-quoted text keeps its newlines (the grammar drops them), so a -c string is read as bash reads it', () => {
    const parsed = parse('bash -c "git status\nrm -rf ~"');
    expect(parsed.commands[0]?.words[2]).toEqual({ text: 'git status\nrm -rf ~', static: true });
    expect(find(parsed, 'rm -rf ~')?.depth).toBe(1);
  });

  it('keeps the words the grammar lifts out of a command: ==, =~, a lone $', () => {
    expect(shape(parse('echo a == b =~ c $').commands[0] as SimpleCommand)).toBe('echo a == b =~ c $');
  });
});

// ---- pipeline, inside, assigns -----------------------------------------------------

describe('R-SH-1 contract fields: pipeline and inside', () => {
  it('stages of one pipeline share an id; a pipeline in a stage names the stage as outer', () => {
    const parsed = parse('{ curl x | cat; } | sh; a | b');
    expect(parsed.commands.map((c) => [shape(c), c.pipeline])).toEqual([
      ['curl x', { id: 2, stage: 0, outer: { id: 1, stage: 0 } }],
      ['cat', { id: 2, stage: 1, outer: { id: 1, stage: 0 } }],
      ['sh', { id: 1, stage: 1 }],
      ['a', { id: 3, stage: 0 }],
      ['b', { id: 3, stage: 1 }],
    ]);
  });

  it('what a wrapper or -c string in a stage runs keeps the stage; a substitution in it does not, it has inside', () => {
    const wrapped = parse('ls | sudo sh -c "cat | bash"');
    expect(wrapped.commands.map((c) => c.pipeline?.stage)).toEqual([0, 1, 1, 0, 1]);
    expect(wrapped.commands[4]?.pipeline?.outer).toEqual({ id: 1, stage: 1 });
    const substituted = parse('echo $(curl x) | sh');
    expect(find(substituted, 'curl x')).toMatchObject({ inside: 0 });
    expect(find(substituted, 'curl x')?.pipeline).toBeUndefined();
  });

  it('inside points at the command holding the substitution: a word, an assignment, a group redirection, a loop list', () => {
    const nested = parse('echo $(echo $(rm -rf ~))');
    expect(nested.commands.map((c) => c.inside)).toEqual([undefined, 0, 1]);
    expect(find(parse('x=$(rm -rf ~)'), 'rm -rf ~')?.inside).toBe(0);
    const group = parse('{ ls; } > $(rm -rf ~)');
    expect(find(group, 'rm -rf ~')?.inside).toBe(1);
    expect(group.commands[1]?.words).toEqual([]);
    expect(find(parse('for f in $(rm -rf ~); do ls; done'), 'rm -rf ~')?.inside).toBe(0);
    expect(find(parse('ls > >(rm -rf ~)'), 'rm -rf ~')?.inside).toBe(0);
  });
});

describe('R-SH-7 assigns', () => {
  it.each([
    ['X=1 ls', ['X']],
    ['X=1 Y=2', ['X', 'Y']],
    ['export A B=2 "C=3"', ['A', 'B', 'C']],
    ['export -p', undefined],
    ['declare -f f', undefined],
    ['local x=$(id)', ['x']],
    ['declare -n ref=PATH', ['ref', 'PATH']],
    ['readonly R', ['R']],
    ['typeset -x T=1', ['T']],
    ['read', ['REPLY']],
    ['read -r -p "x: " a b', ['a', 'b']],
    ['read -ra arr', ['arr']],
    ['read "$v"', ['*']],
    ['mapfile -t lines', ['lines']],
    ['readarray', ['MAPFILE']],
    ['printf -v PATH x', ['PATH']],
    ['printf -vOUT %s x', ['OUT']],
    ['printf "$fmt" x', ['*']],
    ['printf %s x', undefined],
    ['getopts "ab:" opt', ['opt', 'OPTARG', 'OPTIND']],
    ['unset -v x "y" $z', ['x', 'y', '*']],
    ['unset -f g', undefined],
    ['let x=1 "y += 2" z++', ['x', 'y', 'z']],
    ['let "$e"', ['*']],
    ['(( i++ ))', ['i']],
    ['(( a[i] = 1 ))', ['*']],
    ['echo $((n = 1))', ['n']],
    ['echo ${d:=e}', ['d']],
    ['wait -p pid', ['pid']],
    ['cd /tmp', ['PWD', 'OLDPWD']],
    ['$cmd x', ['*']],
    ['source ./env.sh', ['*']],
    ['eval "$x"', ['*']],
    ['exec {fd}>f', ['fd']],
    ['command read x', undefined],
  ])('%j assigns %j', (source, assigns) => {
    expect(parse(source).commands[0]?.assigns).toEqual(assigns);
  });

  it('a wrapped builtin assigns in the command it runs', () => {
    expect(parse('command read x').commands[1]?.assigns).toEqual(['x']);
    expect(parse('builtin printf -v P x').commands[1]?.assigns).toEqual(['P']);
  });

  it('an array subscript in an assigned name may run code', () => {
    expect(parse('read "a[$(id)]"').commands[0]?.unknown.join()).toMatch(/array subscript/);
    expect(parse('a[$i]=1').commands[0]).toMatchObject({ assignments: [{ name: 'a' }], assigns: ['a'] });
    expect(parse('a[$i]=1').commands[0]?.unknown.join()).toMatch(/array subscript/);
    expect(parse('a[2]=1').commands[0]?.unknown).toEqual([]);
  });
});
