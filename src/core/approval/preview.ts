// The text a person reviews before an exec action runs once (R-TTY-3, R-TTY-4).
import type { ExecAction } from '../exec/action.js';
import { AssentError } from '../base/errors.js';
import { escapedJson } from '../base/escape.js';

/** Largest preview, instructions included, in bytes (R-TTY-4). */
export const MAX_PREVIEW_BYTES = 16 * 1024;

export interface ExecPreviewOptions {
  /** The effective action: env already holds the defaults the child will get (R-EXEC-2). */
  action: ExecAction;
  challenge: string;
  deadlineSeconds: number;
  policyDecision: 'ask' | 'allow';
}

/**
 * Renders the complete action as escaped JSON so terminal escapes, bidi
 * overrides and look-alikes are visible, never acting. Refuses rather than
 * truncates: a shortened preview would approve something the person did not see.
 */
export function renderExecPreview(options: ExecPreviewOptions): string {
  const { action } = options;
  const body = escapedJson(
    { executable: action.executable, cwd: action.cwd, args: action.args, env: action.env },
    2,
  );
  const text =
    `\nassent: review this exact action. It runs once, directly (no shell), only if you confirm.\n` +
    `policy decision: ${options.policyDecision}\n` +
    `${body}\n` +
    `Type exactly "RUN ${options.challenge}" and press Enter within ${options.deadlineSeconds} s to run it.\n` +
    `Anything else, Ctrl+C, Ctrl+D or Esc refuses.\n> `;
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_PREVIEW_BYTES) {
    throw new AssentError(
      'invalid_input',
      `The action's preview would be ${bytes} bytes; at most ${MAX_PREVIEW_BYTES} can be shown. Shorten the request's args or env so the whole action fits; it is never truncated.`,
      { details: { reason: 'preview-too-large', field: 'action', file: 'request' } },
    );
  }
  return text;
}
