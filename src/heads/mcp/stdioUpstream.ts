// One stdio upstream: the child process the gateway starts for a `command`
// server, spoken to over its stdin/stdout with the line framing of lineLink.ts
// (its stderr goes to the gateway's stderr). Stopping it follows the MCP stdio
// convention the SDK uses: close stdin, then SIGTERM, then SIGKILL.
import { spawn as nodeSpawn, type ChildProcess } from 'node:child_process';
import { AssentError } from '../../core/base/errors.js';
import { LineLink } from './lineLink.js';
import { MESSAGE_LINK, type MessageLink } from './messageLink.js';
import type { WireMessage } from './wire.js';

export type SpawnChild = typeof nodeSpawn;

export interface StdioUpstreamOptions {
  /** The upstream's alias, for error texts. */
  alias: string;
  command: string;
  args: string[];
  /** The complete child environment (never the gateway's whole environment). */
  env: Record<string, string>;
  cwd?: string;
  spawn?: SpawnChild;
  /** How long each stop step waits for the child to exit before the next, stronger one. */
  stopGraceMs?: number;
}

export class StdioUpstreamLink implements MessageLink {
  readonly [MESSAGE_LINK] = true as const;
  onmessage?: (message: WireMessage, line: string | undefined) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  online?: (line: string) => boolean;
  private child: ChildProcess | undefined;
  private lines: LineLink | undefined;

  constructor(private readonly options: StdioUpstreamOptions) {}

  /** Resolves once the child is running; rejects when it cannot be spawned (e.g. the command is not on PATH). */
  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new AssentError('internal', `MCP server "${this.options.alias}" was already started.`));
    const { command, args, env, cwd } = this.options;
    return new Promise((resolve, reject) => {
      const child = (this.options.spawn ?? nodeSpawn)(command, args, {
        env,
        stdio: ['pipe', 'pipe', 'inherit'],
        shell: false,
        ...(cwd === undefined ? {} : { cwd }),
      });
      this.child = child;
      if (child.stdout !== null && child.stdin !== null) {
        const lines = new LineLink(child.stdout, child.stdin, { peer: `MCP server "${this.options.alias}"` });
        lines.onmessage = (message, line) => this.onmessage?.(message, line);
        lines.online = (line) => this.online !== undefined && this.online(line);
        lines.onerror = (error) => this.onerror?.(error);
        void lines.start();
        this.lines = lines;
      }
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('close', () => {
        this.child = undefined;
        this.onclose?.();
      });
    });
  }

  send(message: WireMessage, line?: string, onLateFailure?: (error: unknown) => void): boolean {
    return this.lines?.send(message, line, onLateFailure) ?? false;
  }

  /** Writes what is queued, closes the child's stdin and waits for it to exit, escalating to SIGTERM and SIGKILL. */
  async close(): Promise<void> {
    const child = this.child;
    await this.lines?.close();
    if (child === undefined) return;
    // Keep draining its stdout: a child blocked writing to a full pipe would not notice stdin closing.
    child.stdout?.resume();
    const grace = this.options.stopGraceMs ?? 2000;
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const running = (): boolean => child.exitCode === null && child.signalCode === null;
    const waitForExit = (): Promise<void> => Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, grace).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // Already closed: the signals below still stop it.
    }
    await waitForExit();
    if (running()) {
      child.kill('SIGTERM');
      await waitForExit();
    }
    if (running()) child.kill('SIGKILL');
  }
}
