// The schema side of portableJson: jsonLimits.ts holds the checks themselves and
// loads no schema library, so the gateway's call path does not pull zod in.
import { z } from 'zod';
import { findJsonProblem } from './jsonLimits.js';

/**
 * Wraps a params schema so free-form JSON is checked on the value as it
 * arrived, before the schema copies it (a record parse drops an own
 * `__proto__` key silently, which would hide it from the digest while the
 * sender still holds it). The issue carries the path; the JSON Schema of the
 * inner schema is unchanged.
 */
export function portableJson<T extends z.ZodType>(schema: T) {
  return z.preprocess((value, context) => {
    const problem = typeof value === 'object' && value !== null ? findJsonProblem(value) : undefined;
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem.message, path: problem.path });
    return value;
  }, schema);
}
