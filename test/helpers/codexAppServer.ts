// The real Codex as its own app server (`codex app-server`, JSON-RPC lines on
// stdio), offline against a fake model: the event stream Codex's TUI renders
// from, with `hook/completed` and its status (`completed`, `failed`, `blocked`)
// for every hook run — what `codex exec --json` leaves out. Hooks are trusted
// the way the /hooks review does it: Codex's `hooks/list` gives each hook's
// current hash, `config/batchWrite` records it in config.toml.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENTS_DIR, killProcess, prepareCodex } from './agentClis.js';
import { processesWithEnv } from './daemon.js';
import type { FakeModel } from './fakeModels.js';

const CODEX = join(AGENTS_DIR, 'node_modules', '@openai', 'codex-linux-x64', 'vendor', 'x86_64-unknown-linux-musl', 'bin', 'codex');

export interface AppServerMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: unknown;
}

export interface CodexTurnOptions {
  model: FakeModel;
  cwd: string;
  prompt: string;
  env?: Record<string, string>;
  /** Called with the temp HOME after the harness wrote its config and before the app server starts (e.g. `assent install codex`). */
  prepareHome?: (home: string) => void | Promise<void>;
  /** Called with the temp HOME after the hooks were trusted and the turn ended, before the HOME is removed. */
  inspectHome?: (home: string) => void;
  timeoutMs?: number;
}

export interface CodexTurn {
  /** Every notification of the run, in order. */
  notifications: AppServerMessage[];
  /** The `run` of each `hook/completed`. */
  hookRuns: { eventName: string; status: string; statusMessage: string | null }[];
  stderr: string;
}

/** One turn of the real Codex app server: initialize, trust every hook, start a thread, run the prompt until `turn/completed`. */
export async function runCodexTurn(options: CodexTurnOptions): Promise<CodexTurn> {
  const home = mkdtempSync(join(tmpdir(), 'assent-codex-app-'));
  mkdirSync(join(home, 'tmp'));
  const codexHome = join(home, '.codex');
  try {
    prepareCodex(home, { model: options.model, cwd: options.cwd }, options.prompt);
    await options.prepareHome?.(home);
    const closed = 'http://127.0.0.1:9';
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: join(home, 'tmp'),
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      NO_COLOR: '1',
      HTTPS_PROXY: closed,
      HTTP_PROXY: closed,
      https_proxy: closed,
      http_proxy: closed,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
      CODEX_HOME: codexHome,
      FAKE_API_KEY: 'fake-key',
      ...options.env,
    };
    const child = spawn(CODEX, ['app-server'], { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const notifications: AppServerMessage[] = [];
    const waiting = new Map<number, (message: AppServerMessage) => void>();
    let turnDone: (() => void) | undefined;
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      buffer += text;
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.trim() === '') continue;
        const message = JSON.parse(line) as AppServerMessage;
        if (message.id !== undefined && message.method === undefined) waiting.get(message.id)?.(message);
        else if (message.method !== undefined && message.id === undefined) {
          notifications.push(message);
          if (message.method === 'turn/completed') turnDone?.();
        }
      }
    });
    const timer = setTimeout(() => killProcess(-(child.pid ?? 0)), options.timeoutMs ?? 60_000);
    let nextId = 1;
    const request = (method: string, params: unknown): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, (message) => (message.error === undefined ? resolve(message.result ?? {}) : reject(new Error(`${method}: ${JSON.stringify(message.error)}\n${stderr}`))));
        child.once('exit', () => reject(new Error(`codex app-server exited during ${method}\n${stderr}`)));
        child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
      });
    try {
      await request('initialize', { clientInfo: { name: 'assent-test', title: null, version: '0.0.0' }, capabilities: null });
      child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
      const listed = (await request('hooks/list', { cwds: [options.cwd] })) as { data: { hooks: { key: string; currentHash: string }[] }[] };
      const state = Object.fromEntries(listed.data.flatMap((entry) => entry.hooks).map((hook) => [hook.key, { trusted_hash: hook.currentHash }]));
      await request('config/batchWrite', { edits: [{ keyPath: 'hooks.state', value: state, mergeStrategy: 'upsert' }], reloadUserConfig: true });
      const thread = (await request('thread/start', { cwd: options.cwd, approvalPolicy: 'never', sandbox: 'danger-full-access' })) as { thread: { id: string } };
      const done = new Promise<void>((resolve) => (turnDone = resolve));
      await request('turn/start', { threadId: thread.thread.id, input: [{ type: 'text', text: options.prompt, text_elements: [] }] });
      await done;
      options.inspectHome?.(home);
    } finally {
      clearTimeout(timer);
      killProcess(-(child.pid ?? 0));
    }
    const hookRuns = notifications
      .filter((message) => message.method === 'hook/completed')
      .map((message) => message.params?.['run'] as { eventName: string; status: string; statusMessage: string | null });
    return { notifications, hookRuns, stderr };
  } finally {
    for (const pid of processesWithEnv(`HOME=${home}`)) killProcess(pid);
    rmSync(home, { recursive: true, force: true });
  }
}
