// A unified-style line diff of two texts, for showing what `assent install` and
// `assent uninstall` change in an agent's settings file before (or as) they do.

type Edit = { op: ' ' | '-' | '+'; line: string };

/** Above this many changed lines the diff is summarised: settings files are small, and the search is O((n+m)·d). */
const MAX_EDIT_DISTANCE = 4000;

/** Lines with their terminators, so a missing final newline is a difference of its own. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Myers' shortest edit script between two line lists; undefined when they differ in more than MAX_EDIT_DISTANCE lines. */
function shortestEdits(a: string[], b: string[]): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d += 1) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0)) ? (v[offset + k + 1] ?? 0) : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, [...trace, next], d, offset);
    }
    v = next;
  }
  return undefined;
}

function backtrack(a: string[], b: string[], trace: Int32Array[], depth: number, offset: number): Edit[] {
  const edits: Edit[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = depth; d >= 0; d -= 1) {
    const v = trace[d] as Int32Array;
    const k = x - y;
    let prevK: number;
    if (d === 0) prevK = k;
    else prevK = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : (v[offset + prevK] ?? 0);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x -= 1;
      y -= 1;
      edits.push({ op: ' ', line: a[x] as string });
    }
    if (d > 0) {
      if (x === prevX) edits.push({ op: '+', line: b[prevY] as string });
      else edits.push({ op: '-', line: a[prevX] as string });
    }
    x = prevX;
    y = prevY;
  }
  return edits.reverse();
}

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
  const a = splitLines(before);
  const b = splitLines(after);
  const header = [`--- ${options.fromLabel}`, `+++ ${options.toLabel}`];
  const edits = shortestEdits(a, b);
  if (edits === undefined) return [...header, `@@ ${a.length} lines replaced by ${b.length} lines (too many changes to show line by line) @@`];
  const context = options.context ?? 3;
  const lines: string[] = [...header];
  let oldLine = 1;
  let newLine = 1;
  const positions = edits.map((edit) => {
    const here = { edit, oldLine, newLine };
    if (edit.op !== '+') oldLine += 1;
    if (edit.op !== '-') newLine += 1;
    return here;
  });
  let i = 0;
  while (i < positions.length) {
    if (positions[i]?.edit.op === ' ') {
      i += 1;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // One hunk while the next change is at most 2×context unchanged lines away.
    for (;;) {
      while (end < positions.length && positions[end]?.edit.op !== ' ') end += 1;
      let gap = end;
      while (gap < positions.length && positions[gap]?.edit.op === ' ') gap += 1;
      if (gap < positions.length && gap - end <= 2 * context) end = gap;
      else break;
    }
    const stop = Math.min(positions.length, end + context);
    const hunk = positions.slice(start, stop);
    const oldCount = hunk.filter((p) => p.edit.op !== '+').length;
    const newCount = hunk.filter((p) => p.edit.op !== '-').length;
    const first = hunk[0] as (typeof hunk)[number];
    lines.push(`@@ -${oldCount === 0 ? first.oldLine - 1 : first.oldLine},${oldCount} +${newCount === 0 ? first.newLine - 1 : first.newLine},${newCount} @@`);
    for (const p of hunk) {
      const text = p.edit.line;
      lines.push(`${p.edit.op}${text.endsWith('\n') ? text.slice(0, -1) : text}`);
      if (!text.endsWith('\n')) lines.push('\\ No newline at end of file');
    }
    i = stop;
  }
  return lines;
}
