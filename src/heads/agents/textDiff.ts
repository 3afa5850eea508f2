// A unified line diff of two texts, for showing what `assent install` and
// `assent uninstall` change in an agent's settings file before (or as) they do.
// The edit script and the hunks are jsdiff's (`diff`); this file adds the
// header and the summary of a change too large to show.
import { formatPatch, OMIT_HEADERS, structuredPatch } from 'diff';

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
  // The hunks as jsdiff lays them out; the header is written here, since jsdiff's octal-escapes a non-ASCII path.
  return [...header, ...formatPatch(patch, OMIT_HEADERS).split('\n').slice(0, -1)];
}
