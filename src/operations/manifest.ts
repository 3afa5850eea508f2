// The operation list without a running daemon, for `assent operations --json`
// and docs/operations.json (R-OPS-2). Each family is built with inert
// dependencies: declarations only read them inside handlers, and a handler
// called here fails loudly instead of touching state.
import { AssentError } from '../core/base/errors.js';
import type { DaemonContext } from './daemonContext.js';
import { agentOperations, type AgentOperationDeps } from './agentOperations.js';
import { approvalOperations, type ApprovalOperationDeps } from './approvalOperations.js';
import { configOperations, type ConfigOperationDeps } from './configOperations.js';
import { passkeyOperations, type PasskeyOperationDeps } from './passkeyOperations.js';
import { daemonOperations } from './daemonOperations.js';
import { operationManifest, type ManifestEntry } from './index.js';
import type { Operation } from './operation.js';
import { policyOperations, type PolicyOperationDeps } from './policyOperations.js';
import { proofOperations, type ProofOperationDeps } from './proofOperations.js';
import { webOperations, type WebOperationDeps } from './webOperations.js';

/** Any property of it is itself; calling it throws. Enough to declare operations, useless to run them. */
function inert<T>(): T {
  const target = (): never => {
    throw new AssentError('internal', 'an operation from the static manifest was run; manifests describe operations, only the daemon runs them');
  };
  const proxy: unknown = new Proxy(target, {
    get: (_target, property) => (property === 'then' ? undefined : proxy),
  });
  return proxy as T;
}

/** Every operation the daemon serves, in the order allOperations builds them, declared without state. */
export function declaredOperations(): Operation[] {
  return [
    ...daemonOperations(inert<DaemonContext>()),
    ...webOperations(inert<WebOperationDeps>()),
    ...approvalOperations(inert<ApprovalOperationDeps>()),
    ...agentOperations(inert<AgentOperationDeps>()),
    ...configOperations(inert<ConfigOperationDeps>()),
    ...policyOperations(inert<PolicyOperationDeps>()),
    ...proofOperations(inert<ProofOperationDeps>()),
    ...passkeyOperations(inert<PasskeyOperationDeps>()),
  ];
}

/** The manifest printed by `assent operations --json` and committed as docs/operations.json. */
export function declaredManifest(): ManifestEntry[] {
  return operationManifest(declaredOperations());
}

export interface ExposureProblem {
  operation: string;
  head: string;
  problem: string;
}

/**
 * The parity rules of R-OPS-1..3 over a manifest: every head either exposes
 * an operation or says why not, and no human-decision operation reaches MCP.
 */
export function exposureProblems(manifest: readonly ManifestEntry[]): ExposureProblem[] {
  const problems: ExposureProblem[] = [];
  for (const entry of manifest) {
    for (const head of ['cli', 'rpc', 'http', 'mcp'] as const) {
      const exposure = (entry.exposure as Partial<Record<string, unknown>>)[head];
      const exposed = exposure === true;
      const rationale = typeof exposure === 'object' && exposure !== null ? (exposure as { rationale?: unknown }).rationale : undefined;
      if (!exposed && (typeof rationale !== 'string' || rationale.trim().length < 10)) {
        problems.push({ operation: entry.name, head, problem: 'not exposed and no written rationale' });
      }
      if (head === 'mcp' && exposed && entry.class === 'human-decision') {
        problems.push({ operation: entry.name, head, problem: 'human-decision operation exposed on MCP (R-OPS-3)' });
      }
    }
  }
  return problems;
}
