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

/** The pending approvals a list selects, as ready JSON text. */
export function pendingAsJson(entries: Iterable<PendingApproval>, options: ListOptions): JsonText {
  // Joined in batches of about 32 KiB: each piece stays an ordinary young object
  // instead of one large copy of the whole list (SPEC §14).
  const pieces: string[] = ['['];
  let batch: string[] = [];
  let batchChars = 0;
  let count = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    if (pieces.length > 1) pieces.push(',');
    pieces.push(batch.join(','));
    batch = [];
    batchChars = 0;
  };
  for (const entry of entries) {
    if (options.limit !== undefined && count >= options.limit) break;
    if (!matchesSelector(entry, options.selector)) continue;
    batch.push(entry.json);
    batchChars += entry.json.length + 1;
    count += 1;
    if (batchChars >= LIST_PIECE_CHARS) flush();
  }
  flush();
  pieces.push(']');
  return new JsonText(pieces);
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
