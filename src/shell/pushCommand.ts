// Records one simple command (R-SH-1, R-SH-7): where it runs (what runs it, the
// command holding its substitution, its pipeline stage) and what it assigns,
// then what it runs besides itself — wrappers (`sudo`, `env`, `find -exec`…),
// `-c`/`eval` strings and a shell's script given on its input, parsed again.
import { MAX_SHELL_DEPTH, commandBaseName, joinWords, type ShellAssignment, type ShellWord, type SimpleCommand } from '../core/policy/shellCommand.js';
import { findExecCommands, unwrapCommand } from '../core/policy/shellWrappers.js';
import { builtinEffects } from './shellBuiltins.js';
import type { Context } from './shellContext.js';
import type { WordSink } from './shellWords.js';

/** Records a command with where it runs and what it assigns, then what its wrappers, `-c` strings and `find -exec` run. */
export function pushCommand(ctx: Context, command: SimpleCommand, sink?: WordSink, assigns: readonly string[] = [], hops = 0): number {
  if (ctx.via !== undefined && command.via === undefined) command.via = ctx.via;
  if (ctx.inside !== undefined && command.inside === undefined) command.inside = ctx.inside;
  if (ctx.pipeline !== undefined) command.pipeline = ctx.pipeline;
  const effects = builtinEffects(command.words);
  if (effects !== undefined) command.unknown.push(...effects.unknown);
  if (command.assignments.length > 0 || effects !== undefined || (sink !== undefined && sink.assigns.length > 0) || assigns.length > 0) {
    const names = [...command.assignments.map((a) => a.name), ...(effects?.assigns ?? []), ...(sink?.assigns ?? []), ...assigns];
    if (names.length > 0) command.assigns = [...new Set(names)];
  }
  const index = ctx.state.out.commands.push(command) - 1;
  if (hops > 8) {
    command.unknown.push('wrappers nested too deeply to follow');
    return index;
  }
  // A wrapped command sees the same words, so what they may run is its concern too.
  const inherited: WordSink = sink ?? NO_SINK;
  if (commandBaseName(command.words[0]) === 'find') {
    for (const exec of findExecCommands(command.words)) {
      if (exec.words.length === 0) continue;
      pushCommand(ctx, innerCommand(command, exec.via, exec.words, [], [`${exec.via} runs it with file names found at run time`, ...inherited.code]), inherited, [], hops + 1);
    }
    return index;
  }
  const unwrapped = unwrapCommand(command.words);
  if (unwrapped === undefined) return index;
  command.unknown.push(...unwrapped.unknown);
  if (unwrapped.inner !== undefined) {
    const inner = innerCommand(command, unwrapped.via, unwrapped.inner.words, unwrapped.inner.assignments, [...unwrapped.inner.unknown, ...inherited.code]);
    if (unwrapped.inner.chdir !== undefined) inner.chdir = unwrapped.inner.chdir;
    pushCommand(ctx, inner, inherited, [], hops + 1);
  }
  if (unwrapped.reparse !== undefined) {
    if (!unwrapped.reparse.static) command.unknown.push(`the string given to ${unwrapped.via} is not a literal`);
    else if (ctx.depth + 1 > MAX_SHELL_DEPTH) command.unknown.push(`the string given to ${unwrapped.via} is nested past depth ${MAX_SHELL_DEPTH}`);
    else ctx.walk.parseInto({ ...ctx, depth: ctx.depth + 1, via: unwrapped.via, where: ` in the string given to ${unwrapped.via}` }, unwrapped.reparse.text);
  } else if (unwrapped.inner === undefined) scriptOnInput(ctx, command);
  return index;
}

/** What a command without word analysis passes on to the commands its wrappers run: nothing (read only). */
const NO_SINK: WordSink = Object.freeze({ code: Object.freeze([]) as unknown as string[], assigns: Object.freeze([]) as unknown as string[] });

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'yash']);
const STDIN = new Set(['<', '<<', '<<-', '<<<', '<&', '<>']);

/**
 * `bash <<EOF … EOF`, `sh <<< '…'`: a shell reading its script from a literal
 * here-document or here-string runs that text; it is decomposed like a `-c`
 * string (depth + 1). The shell stays not statically known (the wrapper says
 * it reads its input), so this only lets what the script does count too.
 */
function scriptOnInput(ctx: Context, command: SimpleCommand): void {
  const name = commandBaseName(command.words[0]);
  if (name === undefined || !SHELLS.has(name) || !command.words.slice(1).every((w) => w.static && w.text.startsWith('-'))) return;
  const input = command.redirects.filter((r) => (r.fd === undefined || r.fd === 0) && STDIN.has(r.op)).at(-1);
  if (input === undefined || input.op === '<' || input.op === '<&' || input.op === '<>' || !input.target.static) return;
  const via = `${name} ${input.op}`;
  if (ctx.depth + 1 > MAX_SHELL_DEPTH) command.unknown.push(`the script given to ${via} is nested past depth ${MAX_SHELL_DEPTH}`);
  else ctx.walk.parseInto({ ...ctx, depth: ctx.depth + 1, via, where: ` in the script given to ${via}` }, input.target.text);
}

function innerCommand(outer: SimpleCommand, via: string, words: ShellWord[], assignments: ShellAssignment[], unknown: string[]): SimpleCommand {
  const inner: SimpleCommand = {
    text: joinWords(words),
    words,
    assignments: [...outer.assignments, ...assignments],
    redirects: [],
    depth: outer.depth,
    via,
    unknown: [...new Set(unknown)],
  };
  if (outer.chdir !== undefined) inner.chdir = outer.chdir;
  return inner;
}
