// `assent demo`: the whole loop in one minute. A scripted MCP client calls a
// real upstream (server-everything) through the built `assent mcp`, with one
// tool set to `prompt`; the person approves or denies it from another
// terminal. It runs against its own state dir, never the user's config.json.
import { createRequire } from 'node:module';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { AssentError } from '../../../core/base/errors.js';
import { ensureStateDir, resolveStatePaths } from '../../../state/statePaths.js';
import type { StatePaths } from '../../../state/statePaths.js';
import { ExitWith, printJsonOk, shellQuote } from '../output.js';

/** The tool the demo gates, and what it sends. */
const DEMO_SERVER = 'everything';
const DEMO_TOOL = 'echo';
const DEMO_MESSAGE = 'Hello from the assent demo';
const CONSENT_TIMEOUT_SECONDS = 300;

interface DemoOptions {
  json?: boolean;
}

/** Registers `assent demo`. */
export function registerDemoCommands(program: Command): void {
  program
    .command('demo')
    .description('See the approval loop: an MCP client calls a tool through assent mcp and waits until you approve it from another terminal.')
    .option('--json', 'print the outcome as one JSON document on stdout (instructions go to stderr)')
    .addHelpText(
      'after',
      '\nUses its own state dir ($ASSENT_HOME/demo) and config; your config.json is never read or changed.\n' +
        'Needs @modelcontextprotocol/server-everything (a dev dependency: run `npm ci` in a clone). Ctrl+C stops the demo.',
    )
    .action((options: DemoOptions) => runDemo(options));
}

/** The demo's private home under the user's state dir, and an env pointing only at it. */
function demoEnvironment(): { paths: StatePaths; env: NodeJS.ProcessEnv } {
  const userPaths = resolveStatePaths(process.env);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('ASSENT_')) env[key] = value;
  env['ASSENT_HOME'] = join(userPaths.home, 'demo');
  return { paths: resolveStatePaths(env), env };
}

function everythingEntry(): string {
  try {
    const manifest = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json');
    const entry = join(dirname(manifest), 'dist', 'index.js');
    if (existsSync(entry)) return entry;
  } catch {
    // Reported below.
  }
  throw new AssentError(
    'unavailable',
    'The demo needs @modelcontextprotocol/server-everything, which is not installed next to assent. In a clone run `npm ci`; elsewhere run `npm install @modelcontextprotocol/server-everything`.',
    { details: { package: '@modelcontextprotocol/server-everything' } },
  );
}

/** Writes the demo config only when it differs, so a running demo daemon keeps its pinned revision. */
function writeDemoConfig(paths: StatePaths, upstream: string): void {
  const config = {
    servers: { [DEMO_SERVER]: { command: process.execPath, args: [upstream, 'stdio'] } },
    policy: {
      default: 'allow',
      destructive: 'allow',
      tools: { [`${DEMO_SERVER}/${DEMO_TOOL}`]: 'prompt' },
      consentTimeoutSeconds: CONSENT_TIMEOUT_SECONDS,
    },
  };
  const text = `${JSON.stringify(config, null, 2)}\n`;
  if (existsSync(paths.config) && readFileSync(paths.config, 'utf8') === text) return;
  const temp = `${paths.config}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600, flag: 'wx' });
  renameSync(temp, paths.config);
}

/** How to run this same binary in another terminal. */
function assentCommand(): string {
  const entry = process.argv[1] ?? 'assent';
  return basename(entry) === 'assent' ? 'assent' : `node ${shellQuote(entry)}`;
}

function cliEntry(): string {
  // dist/heads/cli/commands/demo.js → dist/bin/assent.js
  return fileURLToPath(new URL('../../../bin/assent.js', import.meta.url));
}

interface ApprovalEvent {
  kind: string;
  /** approval_requested carries `approval`; approval_resolved carries the id and outcome at the top level. */
  data?: { approval?: { id?: string; server?: string; tool?: string }; id?: string; state?: string; channel?: string; reason?: string };
}

async function runDemo(options: DemoOptions): Promise<void> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const { DaemonClient } = await import('../../daemon/rpcClient.js');
  const { connectForCli } = await import('../../daemon/clientConnection.js');
  const { isProcessAlive, readPidFile } = await import('../../daemon/autoSpawn.js');

  const say = (text: string): void => void (options.json ? process.stderr : process.stdout).write(text);
  const upstream = everythingEntry();
  const { paths, env } = demoEnvironment();
  // The demo's home lives inside the user's state dir, which a first run may not have created yet.
  ensureStateDir(resolveStatePaths(process.env));
  ensureStateDir(paths);
  writeDemoConfig(paths, upstream);
  const prefix = `ASSENT_HOME=${shellQuote(paths.home)} ${assentCommand()}`;

  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async (): Promise<void> => {
    for (const step of cleanups.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // Best effort: the remaining steps still run.
      }
    }
  };
  let interrupted = false;
  const onSignal = (): void => {
    interrupted = true;
    say('\nassent demo: stopping; the waiting call is abandoned.\n');
    void cleanup();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const alreadyRunning = await DaemonClient.probe(paths.socket);
    say(`assent demo — state dir ${paths.home} (your own config.json is not used)\n`);
    const daemon = await connectForCli({ env, autoSpawn: true });
    cleanups.push(() => daemon.close());
    if (!alreadyRunning) {
      say(`Started a demo daemon (pid ${daemon.daemon?.pid ?? '?'}); it stops when the demo ends.\n`);
      cleanups.push(async () => {
        const pid = readPidFile(paths.pid);
        const control = await DaemonClient.connect({ socketPath: paths.socket, autoSpawn: false });
        const closed = new Promise<void>((resolve) => control.onClose(resolve));
        await control.call('daemon.shutdown', {});
        await closed;
        control.close();
        const deadline = Date.now() + 5000;
        while (pid !== undefined && isProcessAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      });
    }

    let approvalId: string | undefined;
    daemon.onNotification('event', (params) => {
      const event = params as ApprovalEvent;
      const approval = event.data?.approval;
      if (event.kind === 'approval_requested' && approval?.server === DEMO_SERVER && approval.tool === DEMO_TOOL && approvalId === undefined && approval.id) {
        approvalId = approval.id;
        say(
          `\nThe call is waiting for you: approval ${approvalId} (${DEMO_SERVER}/${DEMO_TOOL} {"message": ${JSON.stringify(DEMO_MESSAGE)}}).\n` +
            'In another terminal, run one of:\n' +
            `  ${prefix} approve ${approvalId}     # shows the call; type the code it prints\n` +
            `  ${prefix} watch                # the live queue\n` +
            `  ${prefix} deny ${approvalId}        # refuse it\n` +
            `It waits up to ${CONSENT_TIMEOUT_SECONDS} s. Ctrl+C stops the demo.\n`,
        );
      } else if (event.kind === 'approval_resolved' && approvalId !== undefined && event.data?.id === approvalId) {
        const { state, channel, reason } = event.data;
        say(`Approval ${approvalId} resolved: ${state ?? 'decided'}${channel ? ` via ${channel}` : ''}${reason ? ` (${reason})` : ''}.\n`);
      }
    });
    await daemon.call('events.subscribe', { kinds: ['approval_requested', 'approval_resolved'] });

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliEntry(), 'mcp'],
      env: { ...getDefaultEnvironment(), ASSENT_HOME: paths.home },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', () => undefined);
    const client = new Client({ name: 'assent-demo', version: '1.0.0' });
    cleanups.push(() => client.close());
    say('Starting `assent mcp` in front of @modelcontextprotocol/server-everything…\n');
    await client.connect(transport);
    const { tools } = await client.listTools();
    say(`The gateway lists ${tools.length} tools from the upstream; policy sets ${DEMO_SERVER}/${DEMO_TOOL} to prompt, the rest to allow.\n`);
    say(`Calling ${DEMO_TOOL} — the gateway holds it until a person decides…\n`);
    const result = await client.callTool({ name: DEMO_TOOL, arguments: { message: DEMO_MESSAGE } }, undefined, {
      timeout: (CONSENT_TIMEOUT_SECONDS + 30) * 1000,
      resetTimeoutOnProgress: true,
      onprogress: () => undefined,
    });
    const text = (result.content as Array<{ type: string; text?: string }>).map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
    const denied = result.isError === true;
    if (options.json) printJsonOk({ approvalId: approvalId ?? null, outcome: denied ? 'refused' : 'ran', isError: denied, text });
    say(denied ? `\nThe call was refused; the upstream never saw it:\n  ${text}\n` : `\nApproved. The upstream answered:\n  ${text}\n`);
    await cleanup();
    if (denied) throw new ExitWith(77);
  } catch (error) {
    await cleanup();
    if (interrupted) throw new ExitWith(130);
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
