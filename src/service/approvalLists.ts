// Listing approvals (SPEC §14): the pending ones as views or as ready JSON
// text joined in pieces, and the selection a list asks for.
import { JsonText } from '../core/base/jsonText.js';
import type { ApprovalRecord } from '../journal/journal.js';
import { matchesSelector, type ApprovalView } from './approvalViews.js';
import type { PendingApproval } from './pendingApproval.js';

export interface ListOptions {
  selector?: string;
  state?: ApprovalRecord['state'];
  limit?: number;
}

/** About how long one piece of a serialized pending list is (see pendingAsJson). */
const LIST_PIECE_CHARS = 32 * 1024;

/**
 * The pending approvals a list selects, as ready JSON text: their texts are
 * taken now (the list is of this moment), and joined into pieces of about
 * 32 KiB only as a head writes them, so no copy of the whole list is ever
 * held (SPEC §14).
 */
export function pendingAsJson(entries: Iterable<PendingApproval>, options: ListOptions): JsonText {
  const texts: string[] = [];
  let length = 2;
  for (const entry of entries) {
    if (options.limit !== undefined && texts.length >= options.limit) break;
    if (!matchesSelector(entry, options.selector)) continue;
    texts.push(entry.json);
    length += entry.json.length + 1;
  }
  return new JsonText(() => joinedInPieces(texts), length);
}

/** `[`, the texts joined by commas in pieces of about LIST_PIECE_CHARS, `]`. */
function* joinedInPieces(texts: readonly string[]): Generator<string> {
  yield '[';
  let start = 0;
  let chars = 0;
  for (let index = 0; index < texts.length; index += 1) {
    chars += (texts[index] as string).length + 1;
    if (chars < LIST_PIECE_CHARS && index < texts.length - 1) continue;
    const piece = texts.slice(start, index + 1).join(',');
    yield start === 0 ? piece : `,${piece}`;
    start = index + 1;
    chars = 0;
  }
  yield ']';
}

/** The pending approvals a list selects, as views. */
export function pendingAsViews(entries: Iterable<PendingApproval>, options: ListOptions): ApprovalView[] {
  const selected: ApprovalView[] = [];
  for (const entry of entries) {
    if (matchesSelector(entry, options.selector)) selected.push(JSON.parse(entry.json) as ApprovalView);
    if (options.limit !== undefined && selected.length >= options.limit) break;
  }
  return selected;
}

/** What to ask the store for when a list is not of pending approvals; the selector is applied after. */
export function storedListFilter(options: ListOptions): { state?: ApprovalRecord['state']; limit?: number } {
  const filter: { state?: ApprovalRecord['state']; limit?: number } = { state: options.state ?? 'pending' };
  if (options.limit !== undefined && options.selector === undefined) filter.limit = options.limit;
  return filter;
}

/** The stored views a list selects. */
export function selectViews(views: ApprovalView[], options: ListOptions): ApprovalView[] {
  const selected = views.filter((view) => matchesSelector(view, options.selector));
  return options.limit === undefined ? selected : selected.slice(0, options.limit);
}
