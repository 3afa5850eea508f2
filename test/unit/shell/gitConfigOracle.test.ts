// R-SH-12, with real git as the oracle (test/helpers/gitConfigOracle.ts):
// generated repository layouts and environment prefixes, an executing key in one
// file chosen at random, `git status` under strace. Every configuration file git
// opened is one assent inspected, and assent never says allow where git ran the
// key's program (a marker file proves it). npm test runs 500 layouts;
// `npm run bench` runs 5,000. GIT_ORACLE_RUNS / GIT_ORACLE_SEED override.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { checkGitConfigLayouts } from '../../helpers/gitConfigOracle.js';

const RUNS = Number(process.env.GIT_ORACLE_RUNS ?? 500);
const SEED = Number(process.env.GIT_ORACLE_SEED ?? 33);
const HAS_STRACE = spawnSync('strace', ['-V']).status === 0;

let parser: ShellParser;
let root: string;

beforeAll(async () => {
  parser = await loadShellParser();
  root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-gitcfg-')));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(!HAS_STRACE)('R-SH-12 git configuration, with real git under strace as the oracle', () => {
  it(`${RUNS} generated layouts: git opens no config assent did not inspect, and nothing that ran is allowed`, { timeout: 900_000 }, () => {
    const result = checkGitConfigLayouts(parser, root, SEED, RUNS);
    expect(result.checked).toBe(RUNS);
    expect(result.uninspected).toEqual([]);
    expect(result.mistrusted).toEqual([]);
    expect(result.unsound).toEqual([]);
    // The oracle is not vacuous: git ran the monitor in many layouts.
    expect(result.ran).toBeGreaterThan(RUNS / 4);
  });
});
