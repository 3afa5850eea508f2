import { describe, expect, it } from 'vitest';
import type { DaemonContext } from '../../../src/heads/daemon/daemonMain.js';
import { resolveStatePaths } from '../../../src/state/statePaths.js';
import { daemonOperations } from '../../../src/operations/daemonOperations.js';
import { operationManifest } from '../../../src/operations/index.js';
import type { CallContext, Operation } from '../../../src/operations/operation.js';
import { silentLogger } from '../../../src/service/logger.js';

function fakeContext(overrides: Partial<DaemonContext> = {}): DaemonContext & { shutdowns: string[] } {
  const shutdowns: string[] = [];
  return {
    paths: resolveStatePaths({ ASSENT_HOME: '/tmp/as-unit-home' }),
    logger: silentLogger,
    startedAt: 1_000,
    principal: 'owner:test',
    onShutdown: () => undefined,
    requestShutdown: (reason = 'requested') => shutdowns.push(reason),
    status: {},
    connections: () => 4,
    shutdowns,
    ...overrides,
  };
}

const context: CallContext = { principal: 'owner:test', head: 'rpc' };

function operation(ops: Operation[], name: string): Operation {
  const found = ops.find((op) => op.name === name);
  if (!found) throw new Error(`no ${name}`);
  return found;
}

describe('daemon operations', () => {
  it('R-D-3 daemon.hello returns version and pid for the same version', async () => {
    const hello = operation(daemonOperations(fakeContext(), { version: '1.2.3' }), 'daemon.hello');
    await expect(hello.handler({ version: '1.2.3' }, context)).resolves.toEqual({ version: '1.2.3', pid: process.pid });
  });

  it('R-D-3 daemon.hello refuses another version with version_mismatch naming both and the fix', async () => {
    const hello = operation(daemonOperations(fakeContext(), { version: '1.2.3' }), 'daemon.hello');
    const error = await hello.handler({ version: '1.2.4' }, context).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'version_mismatch', details: { clientVersion: '1.2.4', daemonVersion: '1.2.3' } });
    expect((error as Error).message).toMatch(/1\.2\.4.*1\.2\.3.*assent daemon stop/s);
  });

  it('daemon.status reports uptime from the injected clock and the context connection count', async () => {
    const status = operation(daemonOperations(fakeContext(), { now: () => 6_000 }), 'daemon.status');
    await expect(status.handler({}, context)).resolves.toMatchObject({ uptimeMs: 5_000, startedAt: 1_000, connections: 4 });
  });

  it('daemon.status sections cannot overwrite the core fields', async () => {
    const ctx = fakeContext();
    ctx.status['pid'] = () => 'spoofed';
    const status = operation(daemonOperations(ctx), 'daemon.status');
    await expect(status.handler({}, context)).resolves.toMatchObject({ pid: process.pid });
  });

  it('daemon.shutdown answers before it requests the stop', async () => {
    const ctx = fakeContext();
    const shutdown = operation(daemonOperations(ctx), 'daemon.shutdown');
    await expect(shutdown.handler({}, context)).resolves.toEqual({ stopping: true, pid: process.pid });
    expect(ctx.shutdowns).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ctx.shutdowns).toEqual(['daemon.shutdown']);
  });

  it('R-OPS-1 every head either exposes each daemon operation or says why not; shutdown is never on MCP', () => {
    for (const op of daemonOperations(fakeContext())) {
      for (const head of ['cli', 'rpc', 'http', 'mcp'] as const) {
        const exposure = op.exposure[head];
        expect(exposure === true || (typeof exposure.rationale === 'string' && exposure.rationale.length > 20), `${op.name} on ${head}`).toBe(true);
      }
    }
    expect(operation(daemonOperations(fakeContext()), 'daemon.shutdown').exposure.mcp).not.toBe(true);
  });

  it('R-OPS-2 the manifest is sorted by name and carries JSON Schemas of params and result', () => {
    const manifest = operationManifest(daemonOperations(fakeContext()));
    expect(manifest.map((entry) => entry.name)).toEqual(['daemon.hello', 'daemon.shutdown', 'daemon.status']);
    const hello = manifest[0];
    expect(hello?.params).toMatchObject({ type: 'object', properties: { version: { type: 'string' } }, required: ['version'], additionalProperties: false });
    expect(hello?.result).toMatchObject({ type: 'object', properties: { pid: { type: 'integer' } } });
    expect(JSON.parse(JSON.stringify(manifest))).toEqual(manifest);
  });
});
