#!/usr/bin/env node
// `assent hook …` runs before every tool call an agent makes: it goes straight to
// the hook's thin entry, before anything of the CLI is loaded (R-HOOK-8).
// src/bin is a CommonJS scope (its package.json) so the hook's bundled entry
// beside this file starts without Node's ES module loader; this entry loads the
// ES modules of the rest with import().
export {};

async function run(): Promise<void> {
  if (process.argv[2] === 'hook') {
    const { runHookProcess } = await import('../heads/hook/hookProcess.js');
    await runHookProcess(process.argv.slice(3));
    return;
  }
  const { main } = await import('../heads/cli/main.js');
  // A reader that goes away (`assent pending | head`) is not a crash: stop writing quietly.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.exitCode = await main(process.argv.slice(2));
}

void run();
