// The plugin file `assent install opencode|kilo` writes (R-HOOK-14): OpenCode
// and Kilo Code have no hook commands, only in-process plugins, so assent's
// hook reaches them through this small file. Its text is generated here, read
// back here (doctor, uninstall), and checked to load before it is installed.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AssentError } from '../../core/base/errors.js';
import type { AssentInstallation } from './hookCommand.js';

/** The first line of every plugin file assent writes: how assent tells its own file from anyone else's. */
export const PLUGIN_HEADER = '// assent plugin: written by `assent install`';

/** The file beside the plugin that the plugin rewrites each time the agent loads it; doctor reads it. */
export const LOAD_MARKER_NAME = 'assent.loaded.json';

export interface PluginSettings {
  agent: 'opencode' | 'kilo';
  installation: AssentInstallation;
  /** The agent's hook timeout this plugin brings, in seconds (R-HOOK-11); the hook answers before it. */
  timeoutSeconds: number;
}

const TITLES = { opencode: 'OpenCode', kilo: 'Kilo Code' } as const;

/** The plugin's whole text. Every value is written as JSON, so no path can break out of its string. */
export function pluginText(settings: PluginSettings): string {
  const { agent, installation, timeoutSeconds } = settings;
  const title = TITLES[agent];
  return `${PLUGIN_HEADER} ${agent}; \`assent uninstall ${agent}\` removes it, \`assent doctor\` checks it.
//
// ${title} runs this before every tool call, a subagent's too: it hands the call
// to assent's hook (${path.basename(installation.hookEntry)}) and lets the call run only when the hook
// answers allow. Anything else throws, and a thrown error is ${title}'s way to
// refuse a call: the error's message is what the model reads. So no daemon, a
// malformed answer, a crashed hook and a passed deadline all block the call.
// ${title} has no hook timeout of its own: DEADLINE_MS is this plugin's, and the
// hook, told the same timeout, answers deny a margin before it (R-HOOK-11).
// Each time ${title} loads this file it writes ${LOAD_MARKER_NAME} beside it, so that
// \`assent doctor\` can tell whether the last run loaded it. Edits are lost at the
// next \`assent install ${agent}\`.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE = ${JSON.stringify(installation.node)};
const HOOK = ${JSON.stringify(installation.hookEntry)};
const AGENT = ${JSON.stringify(agent)};
const TIMEOUT_SECONDS = ${JSON.stringify(timeoutSeconds)};
const DEADLINE_MS = TIMEOUT_SECONDS * 1000;
const MAX_OUTPUT_CHARS = 1048576;
const MARKER = join(dirname(fileURLToPath(import.meta.url)), ${JSON.stringify(LOAD_MARKER_NAME)});

/** Runs the hook once with one event on stdin; rejects on a spawn error or the deadline (the hook is killed then). */
function runHook(flags, event) {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [HOOK, AGENT, ...flags, '--timeout', String(TIMEOUT_SECONDS)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(\`assent's hook did not answer within \${TIMEOUT_SECONDS} s\`));
    }, DEADLINE_MS);
    child.stdout.setEncoding('utf8').on('data', (text) => { if (stdout.length < MAX_OUTPUT_CHARS) stdout += text; });
    child.stderr.setEncoding('utf8').on('data', (text) => { if (stderr.length < MAX_OUTPUT_CHARS) stderr += text; });
    child.on('error', (error) => { clearTimeout(timer); reject(error); });
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(event));
  });
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The MCP server a tool name \`<server>_<tool>\` belongs to, by the servers in the agent's config (the longest that fits). */
function serverOf(tool, servers) {
  const fits = servers.map((name) => name.replace(/[^a-zA-Z0-9_-]/g, '_')).filter((name) => tool.startsWith(\`\${name}_\`) && tool.length > name.length + 1);
  return fits.sort((a, b) => b.length - a.length)[0];
}

export const AssentPlugin = async (context) => {
  const cwd = typeof context?.directory === 'string' ? context.directory : process.cwd();
  let servers = [];
  // \`assent doctor\` loads the plugin itself to test it: that load is not the agent's.
  if (context?.assentDoctor !== true) {
    writeFileSync(MARKER, \`\${JSON.stringify({ agent: AGENT, loadedAt: new Date().toISOString(), pid: process.pid, directory: cwd })}\\n\`);
  }
  const eventOf = (name, input, args) => {
    const event = { hook_event_name: name, session_id: input?.sessionID, cwd, tool_name: input?.tool, tool_input: args, tool_use_id: input?.callID };
    const server = typeof input?.tool === 'string' ? serverOf(input.tool, servers) : undefined;
    if (server !== undefined) event.mcp_server = { name: server };
    return event;
  };
  return {
    config: async (config) => {
      servers = config !== null && typeof config === 'object' && config.mcp !== null && typeof config.mcp === 'object' ? Object.keys(config.mcp) : [];
    },
    'tool.execute.before': async (input, output) => {
      const subject = \`\${AGENT}/\${String(input?.tool)}\`;
      let run;
      try {
        run = await runHook([], eventOf('tool.execute.before', input, output?.args));
      } catch (error) {
        throw new Error(\`assent blocked \${subject}: \${error instanceof Error ? error.message : String(error)}. The call did not run. The operator can check the plugin with \\\`assent doctor\\\`.\`);
      }
      let answer;
      try {
        answer = JSON.parse(run.stdout);
      } catch {
        answer = undefined;
      }
      if (run.code === 0 && answer?.decision === 'allow') return;
      // R-SH-14: a confined allow runs the decided command, the original wrapped in \`assent confine\`, in place of the one asked.
      // Only this plugin knows 'confine': an older plugin throws on it, so it never runs the original unconfined.
      if (run.code === 0 && answer?.decision === 'confine' && isObject(answer.updatedInput) && isObject(output?.args)) {
        Object.assign(output.args, answer.updatedInput);
        return;
      }
      const reason = typeof answer?.reason === 'string' && answer.reason !== '' ? answer.reason : run.stderr.trim();
      throw new Error(reason !== '' ? reason : \`assent blocked \${subject}: the hook exited \${run.code ?? run.signal} with no answer. The call did not run.\`);
    },
    'tool.execute.after': async (input) => {
      // The call already ran: recording its end never blocks anything (R-HOOK-6).
      await runHook(['--after'], eventOf('tool.execute.after', input, input?.args)).catch(() => undefined);
    },
  };
};
`;
}

/** Whether a file's text is a plugin assent wrote. */
export function isAssentPlugin(text: string): boolean {
  return text.startsWith(PLUGIN_HEADER);
}

/** The settings a plugin file carries, read back from its `const NAME = <JSON>;` lines; undefined for a file assent did not write. */
export function readPluginSettings(text: string): { node: string; hookEntry: string; agent: string; timeoutSeconds: number } | undefined {
  if (!isAssentPlugin(text)) return undefined;
  const value = (name: string): unknown => {
    const line = new RegExp(`^const ${name} = (.+);$`, 'm').exec(text);
    if (line === null) return undefined;
    try {
      return JSON.parse(line[1] as string) as unknown;
    } catch {
      return undefined;
    }
  };
  const [node, hookEntry, agent, timeoutSeconds] = [value('NODE'), value('HOOK'), value('AGENT'), value('TIMEOUT_SECONDS')];
  if (typeof node !== 'string' || typeof hookEntry !== 'string' || typeof agent !== 'string' || typeof timeoutSeconds !== 'number') return undefined;
  return { node, hookEntry, agent, timeoutSeconds };
}

/**
 * Loads a plugin text the way the agent would (an ES module whose export is
 * the factory) and calls the factory, without writing a load marker; throws
 * `internal` when it does not load. Install runs this before writing, so no
 * install leaves a plugin the agent would skip.
 */
export async function verifyPluginText(text: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assent-plugin-check-'));
  const file = path.join(dir, `assent-${createHash('sha256').update(text).digest('hex').slice(0, 12)}-${randomBytes(4).toString('hex')}.mjs`);
  try {
    fs.writeFileSync(file, text, { mode: 0o600 });
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const factory = module['AssentPlugin'];
    if (typeof factory !== 'function') throw new Error('it exports no AssentPlugin function');
    const hooks = (await (factory as (context: unknown) => Promise<unknown>)({ directory: dir, assentDoctor: true })) as Record<string, unknown> | null;
    if (typeof hooks?.['tool.execute.before'] !== 'function') throw new Error('its factory returns no tool.execute.before hook');
  } catch (error) {
    throw new AssentError('internal', `the plugin file assent generated does not load (${error instanceof Error ? error.message : String(error)}); nothing was written. Please report this`, { cause: error });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
