// Issue 38, root 3: ripgrep searches a hidden file that an include glob names or
// that an ignore file whitelists (`!.env`), and reads flags from
// RIPGREP_CONFIG_PATH. Real rg is the witness: each case prints the .env canary
// (or runs the --pre program) in its layout, and assent does not allow it; the
// same search with no whitelist is allowed, and rg finds nothing secret.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { judgeShell } from '../../../src/shell/judgeAction.js';
import { loadShellParser, type ShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost, type ShellHost } from '../../helpers/shellFixture.js';

const CANARY = 'SECRET-CANARY-5d1e';
const HAS_RG = spawnSync('rg', ['--version']).status === 0;

interface Case {
  command: string;
  /** Files relative to the cwd (`~/` for HOME) written before the run. */
  files?: Record<string, string>;
  git?: boolean;
}

const WHITELISTED: readonly Case[] = [
  { command: 'rg -g .env SECRET' },
  { command: 'rg --glob=.env SECRET' },
  { command: "rg --iglob '*' SECRET" },
  { command: "rg -g '*' SECRET src config" },
  { command: "rg --type-add 'x:.env' -t x SECRET" },
  { command: 'rg --ignore-file ig.txt SECRET', files: { 'ig.txt': '!.env\n' } },
  { command: 'rg SECRET', files: { '.ignore': '!.env\n' } },
  { command: 'rg SECRET config', files: { 'config/.rgignore': '# keep\n!.env\n' } },
  { command: 'rg -l SECRET', files: { '.gitignore': 'build/\n!.env\n' }, git: true },
  { command: 'rg SECRET', files: { '.git/info/exclude': '!.env\n' }, git: true },
  { command: 'rg SECRET', files: { '~/.config/git/ignore': '!.env\n' }, git: true },
  { command: 'rg SECRET', files: { '~/.gitconfig': '[core]\n\texcludesFile = ~/my-ignore\n', '~/my-ignore': '!.env\n' }, git: true },
];

let parser: ShellParser;
beforeAll(async () => {
  parser = await loadShellParser();
});

function layout(c: Case): ShellHost {
  const host = makeShellHost();
  writeFileSync(join(host.cwd, '.env'), `SECRET=${CANARY}\n`);
  mkdirSync(join(host.cwd, 'config'));
  mkdirSync(join(host.cwd, 'src'));
  writeFileSync(join(host.cwd, 'config', '.env'), `SECRET=${CANARY}\n`);
  writeFileSync(join(host.cwd, 'src', 'a.ts'), 'const SECRET_NAME = 1;\n');
  if (c.git === true) spawnSync('git', ['init', '-q'], { cwd: host.cwd });
  for (const [name, content] of Object.entries(c.files ?? {})) {
    const path = name.startsWith('~/') ? join(host.home, name.slice(2)) : join(host.cwd, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return host;
}

function rg(host: ShellHost, command: string, env: Record<string, string> = {}): string {
  const run = spawnSync('bash', ['--norc', '--noprofile', '-c', command], { cwd: host.cwd, env: { PATH: '/usr/bin:/bin', HOME: host.home, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return run.stdout;
}

function decision(host: ShellHost, command: string): string {
  return judgeShell(parser, host.snapshot(DEFAULT_CONFIG.policy), command, host.cwd).decision;
}

describe.skipIf(!HAS_RG)('ripgrep as ripgrep walks', () => {
  it.each(WHITELISTED)('$command ($files) prints the hidden .env in real rg, and is not allow', (c) => {
    const host = layout(c);
    try {
      expect(rg(host, c.command)).toMatch(c.command.includes('-l') ? /\.env/ : new RegExp(CANARY));
      expect(decision(host, c.command)).not.toBe('allow');
    } finally {
      host[Symbol.dispose]();
    }
  });

  it('RIPGREP_CONFIG_PATH brings in --pre, which runs a program; the prefix is not allow', () => {
    const host = layout({ command: '' });
    try {
      writeFileSync(join(host.cwd, 'rgrc'), '--pre=./pre.sh\n');
      writeFileSync(join(host.cwd, 'pre.sh'), '#!/bin/sh\ntouch ran-pre\ncat "$1"\n');
      chmodSync(join(host.cwd, 'pre.sh'), 0o755);
      rg(host, 'RIPGREP_CONFIG_PATH=rgrc rg SECRET_NAME src');
      expect(existsSync(join(host.cwd, 'ran-pre'))).toBe(true);
      expect(decision(host, 'RIPGREP_CONFIG_PATH=rgrc rg SECRET_NAME src')).not.toBe('allow');
    } finally {
      host[Symbol.dispose]();
    }
  });

  it('keeps a search that reads no hidden file allowed, and rg finds no secret there', () => {
    for (const c of [
      { command: 'rg SECRET' },
      { command: "rg -g '!*.md' SECRET" },
      { command: 'rg SECRET', files: { '.gitignore': 'build/\n', '.ignore': 'dist/\n' }, git: true },
      { command: "rg -g '*.ts' SECRET src" },
    ] satisfies Case[]) {
      const host = layout(c);
      try {
        expect(rg(host, c.command), c.command).not.toContain(CANARY);
        // `-g '*.ts'` makes hidden files count, but src holds none.
        expect(decision(host, c.command), JSON.stringify(c)).toBe('allow');
      } finally {
        host[Symbol.dispose]();
      }
    }
  });
});
