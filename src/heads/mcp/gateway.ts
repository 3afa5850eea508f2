// The stdio MCP gateway (SPEC §10): relays JSON-RPC messages between one MCP
// client and the configured upstream servers, mapping request ids per
// direction, and stops every `tools/call` at the gate before an upstream sees it.
//
// What is intercepted, and why:
//   initialize         several upstreams: fanned out, capabilities merged.
//   tools/list         annotations learnt for policy; several upstreams: names become `<alias>__<tool>`.
//   tools/call         decided by the CallGate first (R-MCP-3), keep-alive progress while it waits (R-MCP-4).
//   resources/prompts/completion/logging/tasks (several upstreams only): routed to the owning upstream.
//   a method that only looks unlike tools/call (`Tools/Call`, ` tools/call`…): refused, never relayed.
// Everything else, including unknown and future methods, is relayed as it is.
//
// Who owns what: relay.ts the message relay and its id maps, routing.ts several
// upstreams, callPipeline.ts the tools/call gate pipeline, upstream.ts one
// upstream link, wire.ts the message shapes, relayPort.ts what the relay lends the
// pipeline and the routing; this file checks the options and starts them.
import { AssentError } from '../../core/base/errors.js';
import { MAX_KEEP_ALIVE_MS, type Gateway, type GatewayOptions } from './gatewayOptions.js';
import { GatewayRelay } from './relay.js';

export { MAX_KEEP_ALIVE_MS };
export type { Gateway, GatewayOptions };

/**
 * Starts every upstream, then listens to the client. Rejects (and stops what
 * it started) when an upstream cannot be started, naming it, because a
 * gateway silently missing a server is harder to diagnose than one that
 * refuses to start.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const keepAliveMs = options.keepAliveMs ?? 10_000;
  if (!(keepAliveMs > 0 && keepAliveMs <= MAX_KEEP_ALIVE_MS)) {
    throw new AssentError(
      'invalid_params',
      `keepAliveMs must be between 1 and ${MAX_KEEP_ALIVE_MS} (got ${String(keepAliveMs)}); clients abort calls that stay silent longer.`,
    );
  }
  if (options.upstreams.length === 0) {
    throw new AssentError(
      'config_invalid',
      'No MCP servers to front: config.json "servers" is empty or --server named none. Add a server under "servers" in config.json.',
    );
  }
  const seen = new Set<string>();
  for (const spec of options.upstreams) {
    if (seen.has(spec.alias)) {
      throw new AssentError('config_invalid', `Server alias "${spec.alias}" is listed twice; each alias must be unique.`);
    }
    seen.add(spec.alias);
  }
  const relay = new GatewayRelay(options, keepAliveMs);
  await relay.start();
  return relay;
}
