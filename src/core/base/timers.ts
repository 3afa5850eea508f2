// Timers as a parameter (R-ARCH-2): services, channels and the exec runner take
// them, so tests drive time by hand. The one real implementation is here.

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

function timers(keepAlive: boolean): Timers {
  return {
    setTimeout: (callback, ms) => {
      const handle = setTimeout(callback, ms);
      if (!keepAlive) handle.unref?.();
      return handle;
    },
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  };
}

/** Real timers, unref'd: a pending deadline never keeps the daemon alive on its own. */
export const realTimers: Timers = timers(false);

/** Real timers that hold the process open: a CLI waiting for its child or a typed answer must not exit meanwhile. */
export const keepAliveTimers: Timers = timers(true);
