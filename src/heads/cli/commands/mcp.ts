// `assent mcp [--server ALIAS]…` (R-MCP-1): the stdio MCP server an MCP client
// launches in place of the real servers. stdout carries only the protocol;
// every message for people goes to stderr.
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { Config } from '../../../core/config/config.js';
import { AssentError } from '../../../core/base/errors.js';
import { resolveStatePaths } from '../../../state/statePaths.js';
import { createGateForCli } from '../../mcp/gateFactory.js';
import { startGateway } from '../../mcp/gateway.js';
import { LineLink } from '../../mcp/lineLink.js';
import { createLevelLogger, logLevelFrom } from '../../mcp/stderrLogger.js';
import type { UpstreamSpec } from '../../mcp/upstream.js';
import { escapeText } from '../../../core/base/escape.js';
import { shellQuote } from '../output.js';
import { fetchUnconfirmedChange, unconfirmedChangeNote } from '../pinnedConfig.js';

interface McpOptions {
  server: string[];
  assentTools?: boolean;
}

/** Registers the `mcp` commands on the program. */
export function registerMcpCommands(program: Command): void {
  program
    .command('mcp')
    .description('Run the stdio MCP gateway in front of the servers in config.json; every tools/call passes policy first.')
    .option('--server <alias>', 'front only this server alias (repeatable; default: every configured server)', collect, [])
    .option('--assent-tools', "also offer assent's own read operations as assent__* tools (never approvals or other decisions)")
    .addHelpText(
      'after',
      '\nConfigure your MCP client to launch `assent mcp` instead of the real servers; see docs/mcp.md.\n' +
        'Logs go to stderr (ASSENT_LOG_LEVEL=debug|info|warn|error, default warn).',
    )
    .action((options: McpOptions) => runMcp(options));
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Where the servers come from: the file itself, or the revision the daemon pinned (and whether the file differs). */
export interface ConfigSource {
  path: string;
  /** Set when the servers come from the daemon's pinned revision. */
  pinned?: { unconfirmedChange: string | undefined };
}

/** The upstreams to start: the named aliases in the order given, or every configured server. */
export function selectUpstreams(config: Config, aliases: string[], source: ConfigSource): UpstreamSpec[] {
  const servers = config.servers;
  const configured = Object.keys(servers);
  const chosen = aliases.length > 0 ? [...new Set(aliases)] : configured;
  const where = source.pinned === undefined ? `in ${source.path}` : `in the configuration the daemon pinned from ${source.path}`;
  const note = source.pinned?.unconfirmedChange === undefined ? '' : ` ${source.pinned.unconfirmedChange}`;
  if (chosen.length === 0) {
    const add = `add one under "servers" (e.g. "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]})`;
    throw new AssentError(
      'config_invalid',
      note === ''
        ? `No MCP servers configured ${where}; ${add}${source.pinned === undefined ? '' : ', then apply it with `assent config reload`'}.`
        : `No MCP servers configured ${where}.${note}`,
      { details: { path: source.path } },
    );
  }
  return chosen.map((alias) => {
    const server = servers[alias];
    if (server === undefined) {
      throw new AssentError(
        'usage',
        `--server ${alias}: no such server ${where}; configured: ${configured.length > 0 ? configured.join(', ') : '(none)'}.${note}`,
        { details: { alias } },
      );
    }
    return {
      alias,
      ...(server.command === undefined ? {} : { command: server.command }),
      ...(server.args === undefined ? {} : { args: server.args }),
      ...(server.env === undefined ? {} : { env: server.env }),
      ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
      ...(server.url === undefined ? {} : { url: server.url }),
      ...(server.headers === undefined ? {} : { headers: server.headers }),
    };
  });
}

/**
 * For a person who typed `assent mcp` into a terminal: it is a server that an
 * MCP client launches. It still runs (a person may be testing it by hand), so
 * the note says how to register it and how to stop it.
 */
export function launchedByHandNote(node: string, entry: string): string {
  const json = JSON.stringify({ mcpServers: { assent: { command: node, args: [entry, 'mcp'] } } });
  return [
    'assent mcp is meant to be launched by an MCP client: it speaks the MCP protocol on stdin and stdout, so typing here does nothing useful.',
    'Register it with your client instead, for example:',
    `  claude mcp add --scope user assent -- ${shellQuote(node)} ${shellQuote(entry)} mcp`,
    `  or in the client's JSON config: ${json}`,
    'See docs/mcp.md for Claude Code, Claude Desktop and Codex. It keeps running here, reading MCP messages from this terminal; Ctrl+D or Ctrl+C stops it.',
    '',
  ]
    .map((line) => escapeText(line))
    .join('\n');
}

async function runMcp(options: McpOptions): Promise<void> {
  const env = process.env;
  if (process.stdin.isTTY) process.stderr.write(launchedByHandNote(process.execPath, process.argv[1] ?? 'assent'));
  const logger = createLevelLogger(process.stderr, logLevelFrom(env), { component: 'assent-mcp' });
  const paths = resolveStatePaths(env);
  const sessionId = randomUUID();
  const { config, configPath, gate, mode } = await createGateForCli({ paths, env, logger, sessionId });
  let upstreams: UpstreamSpec[];
  try {
    // Servers come from the daemon's pinned revision (R-D-5); a newer file is named, never silently used.
    const unconfirmed = mode === 'daemon' ? await fetchUnconfirmedChange(env) : undefined;
    const unconfirmedChange = unconfirmed === undefined ? undefined : unconfirmedChangeNote(unconfirmed);
    const source: ConfigSource = mode === 'daemon' ? { path: configPath, pinned: { unconfirmedChange } } : { path: configPath };
    upstreams = selectUpstreams(config, options.server, source);
    if (unconfirmedChange !== undefined) logger.warn(unconfirmedChange, { path: configPath });
  } catch (error) {
    await gate.close?.();
    throw error;
  }
  // Opt-in, and it brings the operation registry with it: loaded only when asked for.
  const operationTools = options.assentTools ? (await import('../../mcp/operationTools.js')).connectOperationTools(paths.socket) : undefined;
  let gateway;
  try {
    gateway = await startGateway({
      // Line framing of its own: JSON.parse only, unchanged messages written on as they came, one write per turn.
      clientTransport: new LineLink(process.stdin, process.stdout, { peer: 'the MCP client', closeOnEnd: true, answerBatches: true }),
      upstreams,
      gate,
      logger,
      sessionId,
      ...(operationTools === undefined ? {} : { operationTools: operationTools.host }),
    });
  } catch (error) {
    operationTools?.close();
    await gate.close?.();
    throw error;
  }
  // A client that goes away must take its upstreams with it (the link also closes at the end of stdin).
  const stop = (): void => {
    void gateway.close();
  };
  // stdin ending or failing, stdout breaking (EPIPE: a client that died) and signals all mean: disconnect.
  const sources: [NodeJS.EventEmitter, string][] = [
    [process.stdin, 'end'],
    [process.stdin, 'close'],
    [process.stdin, 'error'],
    [process.stdout, 'error'],
    [process, 'SIGINT'],
    [process, 'SIGTERM'],
    [process, 'SIGHUP'],
  ];
  for (const [emitter, event] of sources) emitter.on(event, stop);
  await gateway.closed;
  operationTools?.close();
  await gate.close?.();
  for (const [emitter, event] of sources) emitter.off(event, stop);
  // Everything is closed; a stray handle (e.g. a paused stdin) must not keep the gateway alive.
  setTimeout(() => process.exit(0), 500).unref();
}
