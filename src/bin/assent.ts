#!/usr/bin/env node
import { main } from '../heads/cli/main.js';

// A reader that goes away (`assent pending | head`) is not a crash: stop writing quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

process.exitCode = await main(process.argv.slice(2));
