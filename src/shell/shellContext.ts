// What the decomposer carries while it walks one bash tree: where it is (depth,
// what runs it, the command whose word holds the substitution, the pipeline
// stage) and the walk itself, handed to the builders in shellCommands.ts so
// they decompose what they contain without importing the walker.
import type * as TreeSitter from 'web-tree-sitter';
import type { ParsedShell, PipelineStage, SimpleCommand } from '../core/policy/shellCommand.js';
import type { KeywordHeader } from './shellKeywords.js';
import type { WordSink } from './shellWords.js';

export type Node = TreeSitter.Node;

/** State of one whole parse, shared by every context in it. */
export interface ParseState {
  parser: TreeSitter.Parser;
  out: ParsedShell;
  /** The last pipeline id given out. */
  pipelines: number;
  /** How deep the walk is in statements and word parts now (bounded, so a deep line cannot exhaust the stack). */
  level: number;
}

export interface Context {
  state: ParseState;
  walk: Walker;
  /** How many `-c`/`eval` strings were parsed again to get here. */
  depth: number;
  /** What runs the commands here besides the shell (`bash -c`, a command substitution). */
  via: string | undefined;
  /** For messages: ` in the string given to bash -c`, or empty. */
  where: string;
  /** The text the tree being walked was parsed from (offsets of its nodes point into it). */
  source: string;
  /** Index of the command whose word or redirection holds the substitution the walk is in. */
  inside: number | undefined;
  /** The pipeline stage the walk is in. */
  pipeline: PipelineStage | undefined;
  /** `coproc` headers still to emit, by the offset of the compound command they belong to. */
  headers: KeywordHeader[];
  /** Id of the string a here-document body was rewritten as: backticks in it are not inside double quotes. */
  hereDoc: number | undefined;
}

/** A text parsed with `time`/`coproc` read as bash reads them. */
export interface ParsedText {
  tree: TreeSitter.Tree;
  /** The text the tree was parsed from (keywords blanked). */
  source: string;
  headers: KeywordHeader[];
}

/** The walk, as the builders see it. */
export interface Walker {
  /** Decomposes a node in a statement position. */
  statement(ctx: Context, node: Node, type?: string): void;
  /** Walks part of a word or expression for the substitutions in it; `owner` is the command holding it. */
  part(ctx: Context, node: Node, owner: number | undefined, type?: string): void;
  /** Records a command (and what wrappers in it run); returns its index. */
  push(ctx: Context, command: SimpleCommand, sink?: WordSink, assigns?: readonly string[]): number;
  /** Parses `source` again as a command line in `ctx` (a `-c` string, a backtick body). */
  parseInto(ctx: Context, source: string): void;
  /** Parses a here-document body rewritten as a string, with `time`/`coproc` read as bash reads them. */
  parseText(ctx: Context, text: string): ParsedText | undefined;
}

/** Records an error (R-SH-3, R-SH-8: at least prompt); at most ten, each once. */
export function reportError(ctx: Context, message: string): void {
  const errors = ctx.state.out.errors;
  if (errors.length < 10 && !errors.includes(message)) errors.push(message);
}
