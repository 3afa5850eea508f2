#!/usr/bin/env node
import { main } from '../heads/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
