// A policy decision as written in config.json (R-CFG-2); its own module so the
// config schema and the agent-policy schemas can share it without a cycle.
import { z } from 'zod';

export const PolicyValueSchema = z.enum(['allow', 'deny', 'prompt'], { error: '"allow", "deny" or "prompt"' });
export type PolicyValue = z.infer<typeof PolicyValueSchema>;
