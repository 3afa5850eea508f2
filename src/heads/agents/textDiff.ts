// A unified line diff of two texts, for showing what `assent install` and
// `assent uninstall` change in an agent's settings file before (or as) they do.
// The edit script is jsdiff's (`diff`); this file only lays it out.
import { structuredPatch } from 'diff';

/** Above this many changed lines the diff is summarised: settings files are small, and the search is O((n+m)·d). */
const MAX_EDIT_LENGTH = 4000;

export interface DiffOptions {
  /** Shown on the `---` line. */
  fromLabel: string;
  /** Shown on the `+++` line. */
  toLabel: string;
  /** Unchanged lines shown around each change (default 3). */
  context?: number;
}

/** diff(1) numbers an empty side of a hunk from the line before it. */
const rangeOf = (start: number, count: number): string => `${count === 0 ? start - 1 : start},${count}`;

/**
 * The lines of a unified diff from `before` to `after` (`---`/`+++` header,
 * `@@` hunks, ` `/`-`/`+` lines); empty when the texts are equal. A missing
 * final newline is noted as `\ No newline at end of file`, as diff(1) does.
 */
export function unifiedDiff(before: string, after: string, options: DiffOptions): string[] {
  if (before === after) return [];
  const header = [`--- ${options.fromLabel}`, `+++ ${options.toLabel}`];
  const patch = structuredPatch(options.fromLabel, options.toLabel, before, after, undefined, undefined, {
    context: options.context ?? 3,
    maxEditLength: MAX_EDIT_LENGTH,
  });
  if (patch === undefined) {
    const count = (text: string): number => (text.match(/[^\n]*\n|[^\n]+$/g) ?? []).length;
    return [...header, `@@ ${count(before)} lines replaced by ${count(after)} lines (too many changes to show line by line) @@`];
  }
  const lines = [...header];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${rangeOf(hunk.oldStart, hunk.oldLines)} +${rangeOf(hunk.newStart, hunk.newLines)} @@`, ...hunk.lines);
  }
  return lines;
}
