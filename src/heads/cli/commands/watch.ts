// `assent approve --watch` / `assent watch` (R-CLI-3): the live queue. Every new
// request is shown with its complete escaped preview; the oldest one is the
// current item: `n` denies it at once, approving needs its fresh code typed.
import { randomBytes } from 'node:crypto';
import { approvalSubject, renderApprovalPreview } from '../../../core/approval/approvalPreview.js';
import { readApprovalRisk } from '../../../core/approval/approvalRisk.js';
import { newApprovalCode } from '../../../core/base/ids.js';
import type { ApprovalView, DecidedView } from '../../../service/approvalService.js';
import type { BusEvent } from '../../../service/eventBus.js';
import type { DaemonClient } from '../../daemon/rpcClient.js';
import { approvalText } from '../decisionText.js';
import { requireInteractiveTerminal } from '../terminal.js';

/**
 * A fresh approve code for the watch view. With nothing typed yet, `n` denies and
 * `q` quits at a single key, so a code never starts with either: typing a code
 * must never be read as one of those keys.
 */
export function newWatchCode(random: (n: number) => Uint8Array = (n) => randomBytes(n)): string {
  for (;;) {
    const code = newApprovalCode(random);
    if (!code.startsWith('n') && !code.startsWith('q')) return code;
  }
}

export interface WatchOptions {
  selector: string | undefined;
  json: boolean;
}

function subscribeParams(selector: string | undefined): Record<string, unknown> {
  const params: Record<string, unknown> = { kinds: ['approval_requested', 'approval_resolved'] };
  if (selector !== undefined) params['selector'] = selector;
  return params;
}

/** Resolves when the operator quits (q, Ctrl+C), a signal arrives or the daemon goes away. */
function untilStopped(client: DaemonClient, extra?: (stop: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    client.onClose(stop);
    extra?.(stop);
  });
}

async function watchJson(client: DaemonClient, selector: string | undefined): Promise<void> {
  client.onNotification('event', (params) => process.stdout.write(`${JSON.stringify(params)}\n`));
  await client.call('events.subscribe', subscribeParams(selector));
  const pending = await client.call<ApprovalView[]>('approvals.list', selector === undefined ? {} : { selector });
  for (const approval of pending) {
    process.stdout.write(`${JSON.stringify({ kind: 'approval_pending', data: { approval } })}\n`);
  }
  await untilStopped(client);
}

export async function runWatch(client: DaemonClient, options: WatchOptions): Promise<void> {
  if (options.json) return watchJson(client, options.selector);
  requireInteractiveTerminal('`assent watch`');
  const write = (text: string): void => void process.stderr.write(text);
  const queue = new Map<string, ApprovalView>();
  /** Approvals whose decision this view sent and has not yet confirmed. */
  const deciding = new Set<string>();
  let current: { id: string; code: string } | undefined;
  let buffer = '';

  const prompt = (): void => {
    if (current === undefined) {
      write(`Waiting for requests${options.selector ? ` matching ${options.selector}` : ''}… (q to quit)\n`);
      return;
    }
    // The level again right where the code is typed, so it is read even when the preview has scrolled away (R-POL-10).
    const risk = readApprovalRisk(queue.get(current.id)?.caller['risk']);
    const level = risk === undefined ? '' : `risk ${risk.level} — `;
    write(`${level}[${current.id}] type ${current.code} + Enter to approve once, ${current.code}! for the session, n to deny, q to quit: `);
  };
  const advance = (): void => {
    buffer = '';
    const next = queue.values().next();
    current = next.done ? undefined : { id: next.value.id, code: newWatchCode() };
    if (current !== undefined && queue.size > 1) write(renderApprovalPreview(queue.get(current.id) as ApprovalView, Date.now()));
    prompt();
  };
  const show = (approval: ApprovalView): void => {
    queue.set(approval.id, approval);
    write(`\n${renderApprovalPreview(approval, Date.now())}`);
    if (current === undefined) advance();
    else prompt();
  };

  client.onNotification('event', (params) => {
    const event = params as BusEvent;
    if (event.kind === 'approval_requested') {
      const approval = event.data['approval'] as ApprovalView;
      show({ ...approval, args: (event.data['args'] as Record<string, unknown> | undefined) ?? approval.args ?? {} });
    } else if (event.kind === 'approval_resolved') {
      const id = event.data['id'] as string;
      const item = queue.get(id);
      if (item === undefined) return;
      queue.delete(id);
      // Decided here: decide() prints the confirmation and then moves on, so the
      // operator reads "Approved …" before the next prompt, not after it.
      if (deciding.has(id)) return;
      const via = event.data['channel'] === undefined ? '' : ` via ${String(event.data['channel'])}`;
      // Nobody decided a withdrawn call: its agent went away (R-HOOK-12). An expiry happens
      // nowhere in particular: it is said as such, not as a decision made elsewhere.
      const withdrawn = event.data['reason'] === 'withdrawn' && event.data['channel'] === undefined;
      const what = withdrawn ? 'was withdrawn by the agent' : event.data['state'] === 'expired' ? 'expired' : `was ${String(event.data['state'])}${via} elsewhere`;
      write(`\n${id} (${approvalSubject(item)}) ${what}; removed.\n`);
      if (current?.id === id) advance();
    }
  });
  await client.call('events.subscribe', subscribeParams(options.selector));
  const pending = await client.call<ApprovalView[]>('approvals.list', options.selector === undefined ? {} : { selector: options.selector });
  for (const approval of pending) queue.set(approval.id, approval);
  if (pending.length > 0) write(`${pending.length} pending:\n`);
  for (const approval of pending) write(renderApprovalPreview(approval, Date.now()));
  advance();

  /**
   * Sends one decision, then says how it went, then shows the next prompt — in
   * that order, whichever of the reply and the `approval_resolved` event
   * arrives first.
   */
  const decide = async (id: string, behavior: 'allow' | 'deny', scope: 'call' | 'session'): Promise<void> => {
    deciding.add(id);
    try {
      const params: Record<string, unknown> = { id, behavior, channel: 'watch' };
      if (behavior === 'allow') params['scope'] = scope;
      const result = await client.call<DecidedView>('approvals.decide', params);
      // R-TEAM-3: under a quorum the approval may stay pending; this view has given its one approval and moves on.
      write(behavior === 'allow' ? `${approvalText(id, result, scope === 'session' ? ' for the session' : '')}\n` : `Denied ${id}.\n`);
      queue.delete(id);
    } catch (error) {
      write(`Could not decide ${id}: ${error instanceof Error ? error.message : String(error)}\n`);
    } finally {
      deciding.delete(id);
    }
    if (current?.id !== id) return;
    if (queue.has(id)) prompt();
    else advance();
  };

  await untilStopped(client, (stop) => {
    const stdin = process.stdin;
    const onData = (chunk: Buffer): void => {
      for (const byte of chunk) {
        if (byte === 0x03 || byte === 0x04) return stop();
        if (buffer === '' && byte === 0x71 /* q */) return stop();
        if (current === undefined || deciding.has(current.id)) continue;
        if (buffer === '' && (byte === 0x6e /* n */ || byte === 0x4e)) {
          write('n\n');
          void decide(current.id, 'deny', 'call');
          continue;
        }
        if (byte === 0x1b) {
          buffer = '';
          write('\n');
          prompt();
          continue;
        }
        if (byte === 0x7f || byte === 0x08) {
          if (buffer.length > 0) {
            buffer = buffer.slice(0, -1);
            write('\b \b');
          }
          continue;
        }
        if (byte === 0x0d || byte === 0x0a) {
          const typed = buffer;
          buffer = '';
          write('\n');
          if (typed === current.code) void decide(current.id, 'allow', 'call');
          else if (typed === `${current.code}!`) void decide(current.id, 'allow', 'session');
          else {
            write('The code did not match; nothing was decided.\n');
            prompt();
          }
          continue;
        }
        if (byte >= 0x20 && byte <= 0x7e && buffer.length < 16) {
          buffer += String.fromCharCode(byte);
          write(String.fromCharCode(byte));
        }
      }
    };
    stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
    client.onClose(() => write('\nThe daemon connection closed.\n'));
    const cleanup = (): void => {
      stdin.off('data', onData);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
    };
    process.once('exit', cleanup);
  });
  if (process.stdin.isTTY) process.stdin.setRawMode(false);
  process.stdin.pause();
}
