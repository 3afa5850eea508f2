// The keys of `policy.tools` and `policy.quorum` are tool ids, `<server alias>/<tool name>`
// (R-CFG-1): one check for both, so they refuse the same keys with the same words.
import type { z } from 'zod';

/** Adds an issue for each key of `record` that is not `<server>/<tool>` (a slash with text on both sides). */
export function checkToolIdKeys(record: Record<string, unknown>, ctx: z.RefinementCtx): void {
  for (const id of Object.keys(record)) {
    const slash = id.indexOf('/');
    if (slash <= 0 || slash === id.length - 1) {
      ctx.addIssue({
        code: 'custom',
        path: [id],
        message: `the key ${JSON.stringify(id)} is not a tool id; expected "<server alias>/<tool name>", e.g. "fs/write_file"`,
      });
    }
  }
}
