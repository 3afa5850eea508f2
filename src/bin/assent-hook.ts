#!/usr/bin/env node
// The agent hook's own entry (R-HOOK-8): `assent-hook.js claude-code|codex|gemini [--after]`.
// It loads only what one socket round trip needs, never the CLI (SPEC §14).
import { runHookProcess } from '../heads/hook/hookProcess.js';

await runHookProcess(process.argv.slice(2));
