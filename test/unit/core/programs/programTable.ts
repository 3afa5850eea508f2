// Helpers for the program model tables: words from a command line, and
// expectations on what a model says of it.
import { expect } from 'vitest';
import { judgeProgram, type ProgramVerdict } from '../../../../src/core/policy/programs/index.js';
import type { ShellWord } from '../../../../src/core/policy/shellCommand.js';

/** A plain `$NAME` word, quoted or not. */
export function variable(name: string, quoted = true): ShellWord {
  return { text: quoted ? `"$${name}"` : `$${name}`, static: false, why: `a variable ($${name})`, plainVars: { names: [name], quoted } };
}

/** A word that is not static for another reason (a substitution). */
export function substitution(text = '$(cmd)'): ShellWord {
  return { text, static: false, why: 'a command substitution' };
}

/** Words of a command line split on spaces; `~…` words get `tilde`. Pass ShellWords for anything else. */
export function words(...parts: (string | ShellWord)[]): ShellWord[] {
  return parts.flatMap((part) =>
    typeof part === 'string' ? part.split(' ').filter((t) => t !== '').map((text): ShellWord => (text.startsWith('~') ? { text, static: true, tilde: true } : { text, static: true })) : [part],
  );
}

export function judge(command: string | ShellWord[], assigned: Iterable<string> = []): ProgramVerdict {
  const verdict = judgeProgram(typeof command === 'string' ? words(command) : command, new Set(assigned));
  if (verdict === undefined) throw new TypeError(`no model for ${String(command)}`);
  return verdict;
}

export interface Touches {
  model?: string;
  reads?: string[];
  writes?: string[];
  trees?: string[];
  hidden?: boolean;
  revisionPaths?: string[];
}

const texts = (list: readonly ShellWord[] | undefined): string[] => (list ?? []).map((w) => w.text);

/** The command is accepted, touching exactly what `touches` lists (fields left out are not checked). */
export function expectAccepted(command: string | ShellWord[], touches: Touches = {}, assigned: Iterable<string> = []): ProgramVerdict {
  const verdict = judge(command, assigned);
  expect(verdict.refused, `${String(command)} should be accepted`).toBeUndefined();
  if (touches.model !== undefined) expect(verdict.model).toBe(touches.model);
  if (touches.reads !== undefined) expect(texts(verdict.reads)).toEqual(touches.reads);
  if (touches.writes !== undefined) expect(texts(verdict.writes)).toEqual(touches.writes);
  if (touches.trees !== undefined) expect(verdict.trees.map((t) => t.dir.text)).toEqual(touches.trees);
  if (touches.hidden !== undefined) for (const tree of verdict.trees) expect(tree.hidden).toBe(touches.hidden);
  if (touches.revisionPaths !== undefined) expect(texts(verdict.revisionPaths)).toEqual(touches.revisionPaths);
  return verdict;
}

/** The command is refused; `option` (when given) is the option named, `why` a pattern the reason matches. */
export function expectRefused(command: string | ShellWord[], option?: string, why?: RegExp, assigned: Iterable<string> = []): ProgramVerdict {
  const verdict = judge(command, assigned);
  expect(verdict.refused, `${String(command)} should be refused`).toBeDefined();
  if (option !== undefined) expect(verdict.option).toBe(option);
  if (why !== undefined) expect(verdict.refused).toMatch(why);
  return verdict;
}
