// The hook's one socket round trip (R-HOOK-8): connect, send the version hello
// and the request in one write, read the two answers. No handshake round trip
// of its own and nothing of the CLI loaded: the hook runs before every tool call
// an agent makes (SPEC §14). Auto-spawn (R-D-1) is loaded only when no daemon answers.
import { AssentError, isErrorType } from '../../core/base/errors.js';
import { VERSION } from '../../version.js';
import { CANCEL_METHOD, encodeFrame, HELLO_METHOD, LineDecoder } from '../daemon/framing.js';
import { connectPipe, type HookSocket } from './nodePipe.js';

// Not `import … from 'node:fs'`: its ESM facade loads fs/promises and streams, a few ms of every hook run.
const { lstatSync } = process.getBuiltinModule('node:fs');

const HELLO_ID = 1;
const REQUEST_ID = 2;
/** Answers to a hook are small; a larger frame is not one. */
const MAX_ANSWER_BYTES = 1_048_576;
const CONNECT_TIMEOUT_MS = 5_000;
/** How long a withdrawal waits for the daemon to take the cancel before the connection closes anyway (closing withdraws too). */
const WITHDRAW_WAIT_MS = 500;

export interface HookRequest {
  socketPath: string;
  method: string;
  params: unknown;
  /** Server notifications on this connection (e.g. `agents.pending`). */
  onNotification?: (method: string, params: unknown) => void;
  /** Aborting ends the request (the connection closes, the daemon withdraws a waiting approval). */
  signal?: AbortSignal;
  /**
   * Aborting withdraws the request: the agent went away (R-HOOK-12). The daemon
   * is told with a cancel, its answer awaited briefly, then the request ends
   * with the signal's reason.
   */
  withdraw?: AbortSignal;
}

function notRunning(socketPath: string, cause?: unknown): AssentError {
  return new AssentError('unavailable', `no assent daemon answers on ${socketPath}`, { details: { socket: socketPath, reason: 'not-running' }, cause });
}

/** A socket another user owns could answer in the daemon's place; refused (R-STATE-1). */
function checkSocketOwner(socketPath: string): void {
  let uid: number;
  try {
    uid = lstatSync(socketPath).uid;
  } catch {
    return; // Missing: connecting says "not running".
  }
  const own = process.getuid?.();
  if (own !== undefined && uid !== own) {
    throw new AssentError('state_insecure', `${socketPath} is not owned by you (owner uid ${uid}); refusing to talk to it`, {
      details: { socket: socketPath, reason: 'socket-not-owned' },
    });
  }
}

function fromWire(error: unknown): AssentError {
  const body = typeof error === 'object' && error !== null ? (error as { message?: unknown; data?: { type?: unknown; details?: unknown } }) : {};
  const type = isErrorType(body.data?.type) ? body.data.type : 'internal';
  const details = typeof body.data?.details === 'object' && body.data.details !== null ? (body.data.details as Record<string, unknown>) : undefined;
  return new AssentError(type, typeof body.message === 'string' ? body.message : 'the daemon refused the request', details === undefined ? {} : { details });
}

/**
 * One request on a fresh connection. Rejects with `unavailable` (details.reason
 * `not-running`) when nothing listens, so the caller may start a daemon and try
 * once more; any other failure happens after the request may have been read and
 * must not be retried.
 */
export function requestOnce<T>(request: HookRequest): Promise<T> {
  checkSocketOwner(request.socketPath);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let connected = false;
    // Node's pipe handle where it can (nodePipe.ts); net, and the streams it loads, where not.
    const socket: HookSocket = connectPipe(request.socketPath) ?? process.getBuiltinModule('node:net').createConnection({ path: request.socketPath });
    const finish = (error: AssentError | undefined, value?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(withdrawTimer);
      request.signal?.removeEventListener('abort', onAbort);
      request.withdraw?.removeEventListener('abort', onWithdraw);
      socket.destroy();
      if (error === undefined) resolve(value as T);
      else reject(error);
    };
    const onAbort = (): void => {
      const reason: unknown = request.signal?.reason;
      finish(reason instanceof AssentError ? reason : new AssentError('timeout', 'the hook stopped waiting for the daemon'));
    };
    if (request.signal?.aborted) {
      queueMicrotask(onAbort);
    } else request.signal?.addEventListener('abort', onAbort, { once: true });
    let withdrawTimer: ReturnType<typeof setTimeout> | undefined;
    const onWithdraw = (): void => {
      const reason: unknown = request.withdraw?.reason;
      const withdrawn = reason instanceof AssentError ? reason : new AssentError('timeout', 'the agent withdrew the call');
      if (!connected) {
        finish(withdrawn);
        return;
      }
      socket.write(encodeFrame({ jsonrpc: '2.0', method: CANCEL_METHOD, params: { id: REQUEST_ID } }));
      pendingWithdrawal = withdrawn;
      withdrawTimer = setTimeout(() => finish(withdrawn), WITHDRAW_WAIT_MS);
    };
    let pendingWithdrawal: AssentError | undefined;
    if (request.withdraw?.aborted) queueMicrotask(onWithdraw);
    else request.withdraw?.addEventListener('abort', onWithdraw, { once: true });
    const connectTimer = setTimeout(
      () => finish(new AssentError('unavailable', `the daemon socket ${request.socketPath} did not accept a connection within ${CONNECT_TIMEOUT_MS} ms`, { details: { reason: 'connect-timeout' } })),
      CONNECT_TIMEOUT_MS,
    );
    const decoder = new LineDecoder({
      maxBytes: MAX_ANSWER_BYTES,
      onLine: (line) => {
        if (line.trim() === '') return;
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line) as Record<string, unknown>;
        } catch {
          finish(new AssentError('internal', 'the daemon sent a frame that is not JSON'));
          return;
        }
        if (typeof message !== 'object' || message === null) return;
        const id = message['id'];
        if (id === HELLO_ID) {
          if ('error' in message) finish(fromWire(message['error']));
          return;
        }
        if (id === REQUEST_ID) {
          if (pendingWithdrawal !== undefined) finish(pendingWithdrawal);
          else if ('error' in message) finish(fromWire(message['error']));
          else finish(undefined, message['result']);
          return;
        }
        if (id === null && 'error' in message) {
          finish(fromWire(message['error']));
          return;
        }
        if (typeof message['method'] === 'string') request.onNotification?.(message['method'], message['params']);
      },
      onOversize: () => finish(new AssentError('internal', 'the daemon sent an answer larger than 1 MiB')),
    });
    socket.on('connect', () => {
      connected = true;
      clearTimeout(connectTimer);
      const hello = { jsonrpc: '2.0', id: HELLO_ID, method: HELLO_METHOD, params: { version: VERSION } };
      const call = { jsonrpc: '2.0', id: REQUEST_ID, method: request.method, params: request.params };
      let frames: string;
      try {
        frames = encodeFrame(hello) + encodeFrame(call);
      } catch (error) {
        finish(new AssentError('invalid_input', 'the request cannot be encoded as JSON', { cause: error }));
        return;
      }
      socket.write(frames);
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && (error.code === 'ENOENT' || error.code === 'ECONNREFUSED')) finish(notRunning(request.socketPath, error));
      else if (!connected && (error.code === 'EACCES' || error.code === 'EPERM')) {
        finish(new AssentError('unavailable', `permission denied on the daemon socket ${request.socketPath}`, { details: { reason: 'permission' }, cause: error }));
      } else finish(new AssentError('unavailable', `the daemon connection failed (${error.code ?? error.message})`, { details: { reason: error.code ?? 'connect-failed' }, cause: error }));
    });
    socket.on('close', () =>
      finish(new AssentError('unavailable', `the daemon on ${request.socketPath} closed the connection before answering`, { details: { reason: 'closed' } })),
    );
  });
}

/** Whether an error means "nobody listens", the one case where starting a daemon and retrying is safe. */
export function isNotRunning(error: unknown): boolean {
  return error instanceof AssentError && error.details?.['reason'] === 'not-running';
}
