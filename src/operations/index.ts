// The manifest of an operation registry (R-OPS-2): what `assent operations
// --json`, docs/operations.json and the heads generated from it describe. The
// registry itself is assembled by the daemon's composition root
// (heads/daemon/daemonRuntime.ts, allOperations).
import { z } from 'zod';
import type { Exposure, HeadName, Operation, OperationClass } from './operation.js';

export interface ManifestEntry {
  name: string;
  summary: string;
  class: OperationClass;
  exposure: Record<HeadName, Exposure>;
  params: unknown;
  result: unknown;
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): unknown {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any' });
}

/** The manifest of `assent operations --json` and docs/operations.json, sorted by name so diffs are stable. */
export function operationManifest(operations: readonly Operation[]): ManifestEntry[] {
  return [...operations]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((operation) => ({
      name: operation.name,
      summary: operation.summary,
      class: operation.class,
      exposure: operation.exposure,
      params: jsonSchemaOf(operation.params, 'input'),
      result: jsonSchemaOf(operation.result, 'output'),
    }));
}
