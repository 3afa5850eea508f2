// assent's operations as MCP tools (R-OPS-1..3): the same schemas as the
// manifest, the daemon's result as the tool's text, no human decision listed
// even if a declaration wrongly exposed one.
import { describe, expect, it } from 'vitest';
import { AssentError } from '../../../../src/core/base/errors.js';
import { createOperationTools, operationToolName } from '../../../../src/heads/mcp/operationTools.js';
import type { ManifestEntry } from '../../../../src/operations/index.js';
import { declaredManifest } from '../../../../src/operations/manifest.js';

const SCOPE = { sessionId: 'mine' };

function text(result: Record<string, unknown>): string {
  return ((result['content'] as { text: string }[] | undefined) ?? []).map((c) => c.text).join('');
}

describe('operation tools', () => {
  it('R-OPS-2 each tool takes exactly the manifest params schema of its operation', () => {
    const manifest = declaredManifest();
    const host = createOperationTools({ manifest, callDaemon: async () => null });
    const tools = host.tools();
    const exposed = manifest.filter((entry) => entry.exposure.mcp === true);
    expect(tools.map((tool) => tool['name']).sort()).toEqual(exposed.map((entry) => operationToolName(entry.name)).sort());
    for (const entry of exposed) {
      const tool = tools.find((candidate) => candidate['name'] === operationToolName(entry.name));
      const { $schema: _ignored, ...params } = entry.params as Record<string, unknown>;
      expect(tool?.['inputSchema']).toEqual(params);
    }
  });

  it('R-OPS-3 a human-decision operation is never a tool, even if its declaration said mcp: true', () => {
    const manifest = JSON.parse(JSON.stringify(declaredManifest())) as ManifestEntry[];
    for (const entry of manifest) if (entry.class === 'human-decision') entry.exposure.mcp = true;
    const names = createOperationTools({ manifest, callDaemon: async () => null })
      .tools()
      .map((tool) => tool['name']);
    for (const entry of manifest.filter((candidate) => candidate.class === 'human-decision')) expect(names).not.toContain(operationToolName(entry.name));
    expect(names).toContain('assent__approvals_list');
  });

  it('R-WEB-5 a call runs the operation on the daemon and returns its JSON result; failures are tool errors with the type', async () => {
    const calls: [string, Record<string, unknown>][] = [];
    const host = createOperationTools({
      manifest: declaredManifest(),
      callDaemon: async (method, params) => {
        calls.push([method, params]);
        if (method === 'effects.get') throw new AssentError('not_found', 'no effect zzzzz');
        return [{ id: 'r1' }];
      },
    });
    expect(host.handles('assent__rules_list')).toBe(true);
    expect(host.handles('write_file')).toBe(false);
    const ok = await host.call('assent__rules_list', { includeInactive: true }, SCOPE);
    expect(JSON.parse(text(ok))).toEqual([{ id: 'r1' }]);
    expect(calls).toEqual([['rules.list', { includeInactive: true }]]);
    const failed = await host.call('assent__effects_get', { id: 'zzzzz' }, SCOPE);
    expect(failed['isError']).toBe(true);
    expect(text(failed)).toBe('not_found: no effect zzzzz');
    const decide = await host.call('assent__approvals_decide', { id: 'abcde', behavior: 'allow' }, SCOPE);
    expect(decide['isError']).toBe(true);
    expect(calls).toHaveLength(2);
  });
});

describe('operation tools see one session (hardening 4)', () => {
  const views = [
    { id: 'aaaaa', sessionId: 'mine', server: 'fs', tool: 'write_file', args: { path: '/mine' } },
    { id: 'bbbbb', sessionId: 'theirs', server: 'fs', tool: 'write_file', args: { path: '/theirs' } },
    { id: 'ccccc', sessionId: 'mine', server: 'web', tool: 'fetch', args: { url: 'https://example.test/' } },
  ];
  /** A daemon that, like a careless one, returns every session's approvals whatever the selector. */
  function careless(): { host: ReturnType<typeof createOperationTools>; calls: [string, Record<string, unknown>][] } {
    const calls: [string, Record<string, unknown>][] = [];
    const host = createOperationTools({
      manifest: declaredManifest(),
      callDaemon: async (method, params) => {
        calls.push([method, params]);
        return method === 'approvals.get' ? views.find((v) => v.id === params['id']) : views;
      },
    });
    return { host, calls };
  }

  it('R-OPS-3 assent__approvals_list asks the daemon for the calling session only and never shows another session, whatever the selector', async () => {
    const { host, calls } = careless();
    const ids = async (args: Record<string, unknown>): Promise<string[]> =>
      (JSON.parse(text(await host.call('assent__approvals_list', args, SCOPE))) as { id: string }[]).map((v) => v.id);
    expect(await ids({})).toEqual(['aaaaa', 'ccccc']);
    expect(calls[0]).toEqual(['approvals.list', { selector: 'mine' }]);
    expect(await ids({ selector: 'theirs' })).toEqual([]);
    expect(await ids({ selector: 'bbbbb' })).toEqual([]);
    expect(await ids({ selector: 'fs/' })).toEqual(['aaaaa']);
    expect(await ids({ selector: 'web/fetch', state: 'pending' })).toEqual(['ccccc']);
    expect(calls.at(-1)).toEqual(['approvals.list', { state: 'pending', selector: 'mine' }]);
    expect(await ids({ limit: 1 })).toEqual(['aaaaa']);
    const bad = await host.call('assent__approvals_list', { selector: 7 }, SCOPE);
    expect(bad['isError']).toBe(true);
    expect(text(bad)).toContain('invalid_params');
  });

  it('R-OPS-3 assent__approvals_get of another session’s approval is not_found and shows none of it', async () => {
    const { host } = careless();
    const other = await host.call('assent__approvals_get', { id: 'bbbbb' }, SCOPE);
    expect(other['isError']).toBe(true);
    expect(text(other)).toContain('not_found');
    expect(text(other)).not.toContain('/theirs');
    const own = await host.call('assent__approvals_get', { id: 'aaaaa' }, SCOPE);
    expect(JSON.parse(text(own))).toMatchObject({ id: 'aaaaa', args: { path: '/mine' } });
  });
});
