// assent's operations as MCP tools (R-OPS-1..3): the same schemas as the
// manifest, the daemon's result as the tool's text, no human decision listed
// even if a declaration wrongly exposed one.
import { describe, expect, it } from 'vitest';
import { AssentError } from '../../../../src/core/errors.js';
import { createOperationTools, operationToolName } from '../../../../src/heads/mcp/operationTools.js';
import type { ManifestEntry } from '../../../../src/operations/index.js';
import { declaredManifest } from '../../../../src/operations/manifest.js';

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
        if (params['id'] === 'zzzzz') throw new AssentError('not_found', 'no approval zzzzz');
        return [{ id: 'abcde' }];
      },
    });
    expect(host.handles('assent__approvals_list')).toBe(true);
    expect(host.handles('write_file')).toBe(false);
    const ok = await host.call('assent__approvals_list', { selector: 'fs/' });
    expect(JSON.parse(text(ok))).toEqual([{ id: 'abcde' }]);
    expect(calls).toEqual([['approvals.list', { selector: 'fs/' }]]);
    const failed = await host.call('assent__approvals_get', { id: 'zzzzz' });
    expect(failed['isError']).toBe(true);
    expect(text(failed)).toBe('not_found: no approval zzzzz');
    const decide = await host.call('assent__approvals_decide', { id: 'abcde', behavior: 'allow' });
    expect(decide['isError']).toBe(true);
    expect(calls).toHaveLength(2);
  });
});
