// The parity gate (R-OPS-1..3): the committed manifest is the generated one,
// the static declarations match what a live runtime serves, and every head
// either exposes an operation or says why not, never a human decision on MCP.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonContext } from '../../../src/heads/daemon/daemonMain.js';
import { ensureStateDir, resolveStatePaths } from '../../../src/state/statePaths.js';
import { daemonOperations } from '../../../src/operations/daemonOperations.js';
import { operationManifest, type ManifestEntry } from '../../../src/operations/index.js';
import { declaredManifest, declaredOperations, exposureProblems } from '../../../src/operations/manifest.js';
import { createApprovalRuntime } from '../../../src/heads/daemon/daemonRuntime.js';
import { silentLogger } from '../../../src/service/logger.js';

const DOCS_MANIFEST = join(import.meta.dirname, '..', '..', '..', 'docs', 'operations.json');
const REGENERATE = 'regenerate it with `npm run build && node dist/bin/assent.js operations --json > /tmp/ops.json` and copy its "data" into docs/operations.json (docs/web.md)';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function clone(manifest: readonly ManifestEntry[]): ManifestEntry[] {
  return JSON.parse(JSON.stringify(manifest)) as ManifestEntry[];
}

function entry(manifest: ManifestEntry[], name: string): ManifestEntry {
  const found = manifest.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`${name} is not in the manifest`);
  return found;
}

describe('operation manifest', () => {
  it('R-OPS-2 docs/operations.json equals the generated manifest', () => {
    const committed = JSON.parse(readFileSync(DOCS_MANIFEST, 'utf8')) as unknown;
    expect(committed, `docs/operations.json is stale; ${REGENERATE}`).toEqual(JSON.parse(JSON.stringify(declaredManifest())));
  });

  it('R-OPS-2 the static declarations are exactly the operations a live daemon runtime serves', async () => {
    const root = mkdtempSync(join(tmpdir(), 'as-ops-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const paths = resolveStatePaths({ ASSENT_HOME: join(root, 'h') });
    ensureStateDir(paths);
    writeFileSync(paths.config, JSON.stringify({ notifications: false }), { mode: 0o600 });
    const hooks: (() => Promise<void> | void)[] = [];
    cleanups.push(async () => {
      for (const hook of hooks) await hook();
    });
    const ctx: DaemonContext = {
      paths,
      logger: silentLogger,
      startedAt: 0,
      principal: 'owner:test',
      onShutdown: (hook) => hooks.push(hook),
      requestShutdown: () => undefined,
      status: {},
      connections: () => 0,
    };
    const live = [...daemonOperations(ctx), ...createApprovalRuntime(ctx).operations];
    expect(JSON.parse(JSON.stringify(operationManifest(live)))).toEqual(JSON.parse(JSON.stringify(declaredManifest())));
  });

  it('R-OPS-1 every head exposes each operation or gives a written rationale; no human decision reaches MCP', () => {
    expect(exposureProblems(declaredManifest())).toEqual([]);
    expect(new Set(declaredOperations().map((operation) => operation.name)).size).toBe(declaredOperations().length);
  });

  it('R-OPS-2 removing the MCP or HTTP exposure of a data operation without a rationale is caught', () => {
    for (const [name, head] of [
      ['approvals.list', 'mcp'],
      ['approvals.list', 'http'],
      ['rules.revoke', 'http'],
      ['audit.query', 'cli'],
    ] as const) {
      const dropped = clone(declaredManifest());
      delete (entry(dropped, name).exposure as Partial<Record<string, unknown>>)[head];
      expect(exposureProblems(dropped)).toContainEqual({ operation: name, head, problem: 'not exposed and no written rationale' });
      const blank = clone(declaredManifest());
      entry(blank, name).exposure[head] = { rationale: '' };
      expect(exposureProblems(blank)).toContainEqual({ operation: name, head, problem: 'not exposed and no written rationale' });
    }
  });

  it('R-OPS-3 human-decision operations are never exposed on MCP, with the rationale in the manifest', () => {
    const humanDecisions = declaredManifest().filter((operation) => operation.class === 'human-decision');
    expect(humanDecisions.map((operation) => operation.name)).toEqual(expect.arrayContaining(['approvals.decide', 'rules.add', 'tokens.create', 'web.pair']));
    for (const operation of humanDecisions) {
      expect(operation.exposure.mcp).not.toBe(true);
      expect((operation.exposure.mcp as { rationale: string }).rationale.length).toBeGreaterThan(10);
    }
    const widened = clone(declaredManifest());
    entry(widened, 'approvals.decide').exposure.mcp = true;
    expect(exposureProblems(widened)).toContainEqual({ operation: 'approvals.decide', head: 'mcp', problem: 'human-decision operation exposed on MCP (R-OPS-3)' });
  });

  it('R-OPS-2 a static declaration refuses to run: manifests describe, only the daemon runs', async () => {
    const decide = declaredOperations().find((operation) => operation.name === 'approvals.list');
    await expect(decide?.handler({}, { principal: 'test', head: 'cli' })).rejects.toMatchObject({ type: 'internal' });
  });
});
