// The operation registry of one daemon (R-OPS-1) and the manifest generated
// from it (R-OPS-2). Heads list operations from here, never by hand.
import { z } from 'zod';
import type { DaemonContext } from '../heads/daemon/daemonMain.js';
import { createApprovalRuntime } from '../service/daemonRuntime.js';
import { daemonOperations } from './daemonOperations.js';
import type { Exposure, HeadName, Operation, OperationClass } from './operation.js';

/** Every operation the daemon serves: a plain concatenation of the families. */
export function allOperations(ctx: DaemonContext): Operation[] {
  const runtime = createApprovalRuntime(ctx);
  const operations = [...daemonOperations(ctx), ...runtime.operations];
  void runtime.serveHttp(() => operations);
  return operations;
}

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
