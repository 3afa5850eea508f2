#!/usr/bin/env node
// `assent hook …` runs before every tool call an agent makes: it goes straight to
// the hook's thin entry, before anything of the CLI is loaded (R-HOOK-8).
if (process.argv[2] === 'hook') {
  const { runHookProcess } = await import('../heads/hook/hookProcess.js');
  await runHookProcess(process.argv.slice(3));
} else {
  const { main } = await import('../heads/cli/main.js');
  // A reader that goes away (`assent pending | head`) is not a crash: stop writing quietly.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.exitCode = await main(process.argv.slice(2));
}
