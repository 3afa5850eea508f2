// The cleanup list every process- or server-starting test file keeps: steps are
// pushed as things start and run in reverse after each test, each one even if
// an earlier one threw, so no process, server or temp dir outlives its test.
import { afterEach } from 'vitest';

/** Cleanup steps a test file runs (in reverse) after each test. */
export type Cleanups = (() => Promise<unknown> | unknown)[];

/** A fresh list, emptied after each test of the calling file. */
export function cleanupsAfterEach(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch {
        // Keep cleaning the rest.
      }
    }
  });
  return cleanups;
}
