// The daemon's own operations: the version handshake every client makes first
// (R-D-3), the status view and a graceful stop (R-D-1).
import { z } from 'zod';
import { AssentError } from '../core/base/errors.js';
import type { DaemonContext } from './daemonContext.js';
import { VERSION } from '../version.js';
import { defineOperation } from './operation.js';
import type { Operation } from './operation.js';

const HANDSHAKE_ONLY = { rationale: 'the version handshake belongs to the socket transport; other heads are served by the daemon itself' };
const NOT_ON_MCP_LIFECYCLE = {
  rationale: 'an agent must not be able to switch off its own oversight; stopping the daemon is an operator action',
};
const NOT_ON_HTTP_LIFECYCLE = { rationale: 'stopping the daemon from a browser tab widens what a stolen page session can do; use the CLI' };

export const HelloParamsSchema = z.strictObject({ version: z.string().min(1).max(64) });
export const HelloResultSchema = z.object({ version: z.string(), pid: z.number().int() });

export const DaemonStatusSchema = z
  .object({
    pid: z.number().int(),
    version: z.string(),
    startedAt: z.number(),
    uptimeMs: z.number(),
    socket: z.string(),
    home: z.string(),
    connections: z.number().int(),
  })
  .catchall(z.unknown());
export type DaemonStatus = z.infer<typeof DaemonStatusSchema>;

export const ShutdownResultSchema = z.object({ stopping: z.literal(true), pid: z.number().int() });

export interface DaemonOperationOptions {
  /** The version this daemon speaks; tests use another to provoke a mismatch. */
  version?: string;
  now?: () => number;
}

/** The handshake, status and shutdown operations for one daemon. */
export function daemonOperations(ctx: DaemonContext, options: DaemonOperationOptions = {}): Operation[] {
  const version = options.version ?? VERSION;
  const now = options.now ?? Date.now;
  return [
    defineOperation({
      name: 'daemon.hello',
      summary: 'Version handshake every client makes first; a different version is refused (R-D-3).',
      params: HelloParamsSchema,
      result: HelloResultSchema,
      class: 'read',
      exposure: { cli: HANDSHAKE_ONLY, rpc: true, http: HANDSHAKE_ONLY, mcp: HANDSHAKE_ONLY },
      handler: async (params) => {
        if (params.version !== version) {
          throw new AssentError(
            'version_mismatch',
            `This client is assent ${params.version} but the running daemon is assent ${version}. Stop the old daemon with \`assent daemon stop\`, then retry (the next command starts a matching one).`,
            { details: { clientVersion: params.version, daemonVersion: version, pid: process.pid } },
          );
        }
        return { version, pid: process.pid };
      },
    }),
    defineOperation({
      name: 'daemon.status',
      summary: 'Pid, version, uptime, socket, open connections and the status of every service in the daemon.',
      params: z.strictObject({}),
      result: DaemonStatusSchema,
      class: 'read',
      exposure: { cli: true, rpc: true, http: true, mcp: true },
      handler: async () => {
        const sections: Record<string, unknown> = {};
        for (const [name, section] of Object.entries(ctx.status)) {
          try {
            sections[name] = section();
          } catch (error) {
            ctx.logger.error('status section failed', { section: name, error });
            sections[name] = { error: 'unavailable; see daemon.log' };
          }
        }
        return {
          ...sections,
          pid: process.pid,
          version,
          startedAt: ctx.startedAt,
          uptimeMs: Math.max(0, now() - ctx.startedAt),
          socket: ctx.paths.socket,
          home: ctx.paths.home,
          connections: ctx.connections(),
        };
      },
    }),
    defineOperation({
      name: 'daemon.shutdown',
      summary: 'Stop the daemon gracefully: pending calls are denied with reason shutdown, the audit log is flushed.',
      params: z.strictObject({}),
      result: ShutdownResultSchema,
      class: 'write',
      exposure: { cli: true, rpc: true, http: NOT_ON_HTTP_LIFECYCLE, mcp: NOT_ON_MCP_LIFECYCLE },
      handler: async () => {
        // Answer first, then stop: the reply is written before the server closes.
        setImmediate(() => ctx.requestShutdown('daemon.shutdown'));
        return { stopping: true as const, pid: process.pid };
      },
    }),
  ];
}
