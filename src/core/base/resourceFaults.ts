// A resource of the machine that ran out (issue 35 item 4): what an error of the
// system means in words an operator acts on, said the same way by the daemon's
// refusal, the CLI and the hook. Pure: it reads only an error's code and message.

/** What raises the daemon's limit of open files, for anyone who starts it. */
export const DESCRIPTOR_LIMIT_FIX =
  'raise the limit of open files of what starts the daemon (`ulimit -n 4096` in its shell, or LimitNOFILE=4096 in its systemd unit) and restart the daemon';

/** What lifts an address-space limit WebAssembly cannot live under, and what caps memory instead. */
export const ADDRESS_SPACE_FIX =
  'remove the address-space limit of what starts the daemon (`ulimit -v unlimited`, no LimitAS= in its systemd unit); to cap its memory use a cgroup (MemoryMax= in the unit) instead';

function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Whether the error is the system saying this process (EMFILE) or the whole system (ENFILE) has no file descriptor left. */
export function isDescriptorExhaustion(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'EMFILE' || code === 'ENFILE';
}

/** Whether WebAssembly could not reserve its memory: what an address-space limit (ulimit -v) does to it. */
export function isWasmReservationFailure(error: unknown): boolean {
  return error instanceof RangeError && /WebAssembly\.Memory|could not allocate memory|Out of memory/i.test(error.message);
}

/**
 * The cause and the fix of an error that says a resource ran out, as one
 * sentence to append to its message; undefined for any other error.
 */
export function resourceFaultHint(error: unknown): string | undefined {
  const code = codeOf(error);
  if (code === 'EMFILE') return `this process has no file descriptor left (EMFILE): ${DESCRIPTOR_LIMIT_FIX}`;
  if (code === 'ENFILE') return 'the system has no file descriptor left (ENFILE): close programs that hold many files, or raise fs.file-max, then retry';
  if (code === 'ENOMEM') return 'the system refused memory (ENOMEM): free memory or raise the memory limit of what starts the daemon, then retry';
  if (isWasmReservationFailure(error)) return `WebAssembly could not reserve its memory (${messageOf(error)}), which an address-space limit causes: ${ADDRESS_SPACE_FIX}`;
  return undefined;
}
