// What `assent mcp` loads before it answers its client. An agent starts its MCP
// servers with each session, and some (Codex) do not wait for a slow one before
// the first model request, so the gateway's start-up is part of every session's
// first step. With a daemon the gateway needs its line links, the daemon client
// and the policy evaluation; what only some gateways need is loaded when they
// need it: the SDK's transports (HTTP or Windows upstreams), the journal and
// the config schema (no daemon at start), the operation registry
// (--assent-tools), the terminal channel (a prompt asked there).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { staticGraph } from '../../../helpers/imports.js';

const srcDir = join(import.meta.dirname, '../../../../src');

describe('assent mcp start-up', () => {
  it('the mcp command loads no schema library, SDK transport, SQLite, journal, service or operation module statically', () => {
    const graph = [...staticGraph(srcDir, join(srcDir, 'heads', 'cli', 'commands', 'mcp.ts'))].sort();
    const forbidden = graph.filter(
      (module) =>
        module === 'zod' ||
        module === 'better-sqlite3' ||
        module === 'kysely' ||
        (module.startsWith('@modelcontextprotocol/sdk') && module !== '@modelcontextprotocol/sdk/shared/uriTemplate.js') ||
        module.startsWith('operations/') ||
        (module.startsWith('service/') && module !== 'service/logger.ts') ||
        module.startsWith('channels/') ||
        module.startsWith('core/config/') ||
        (module.startsWith('journal/') && !['state/statePaths.ts', 'journal/nativeHash.ts'].includes(module)),
    );
    expect(forbidden).toEqual([]);
    // The parts that moved behind import() are still what a gateway runs.
    expect(graph).toEqual(expect.arrayContaining(['heads/mcp/relay.ts', 'heads/mcp/daemonGate.ts', 'heads/mcp/lineLink.ts', 'core/policy/toolPolicy.ts']));
  });
});
