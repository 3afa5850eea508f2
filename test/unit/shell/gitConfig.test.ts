// R-SH-9: the config parser names every variable real git names, and refuses
// what git refuses. Real git is the oracle (`git config --file F --list --null`),
// on tricky cases written by hand and on seeded random texts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeExecutionKey, isExecutionKey, parseGitConfig, splitConfigKey } from '../../../src/shell/gitConfig.js';

const dir = mkdtempSync(join(tmpdir(), 'assent-gitconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

type Seen = { entries: [string, string | null][] } | { error: string };

/** What git makes of `text`: its variables, or its error message's line. */
function gitParse(text: string): Seen {
  const file = join(dir, 'c.cfg');
  writeFileSync(file, Buffer.from(text, 'latin1'));
  const run = spawnSync('git', ['config', '--file', file, '--list', '--null'], { env, encoding: 'latin1' });
  if (run.status !== 0) return { error: /bad config line (\d+)/.exec(run.stderr)?.[0] ?? run.stderr.trim() };
  const entries: [string, string | null][] = run.stdout
    .split('\0')
    .slice(0, -1)
    .map((item) => {
      const newline = item.indexOf('\n');
      return newline < 0 ? [item, null] : [item.slice(0, newline), item.slice(newline + 1)];
    });
  return { entries };
}

function ourParse(text: string): Seen {
  const parsed = parseGitConfig(text);
  if (parsed.error !== undefined) return { error: parsed.error };
  return { entries: parsed.entries.map((entry) => [entry.key, entry.value ?? null]) };
}

const HAND_CASES = [
  '[core]\n\tfsmonitor = /tmp/x\n',
  '[core] fsmonitor = x\n',
  '[core]k=1\n',
  'k = before any section\n',
  '[core]\nfsmonitor\n',
  '[core]\nfsmonitor',
  '[core]\nfsmonitor # comment after a bare key\n',
  '[core]\nfsmonitor=\n',
  '[Diff.X]\nTextConv = a\n',
  '[diff "X"]\nTextConv = a\n',
  '[DIFF "Mixed.Case"]\n\tTEXTCONV = a\n',
  '[a.b.c]\nk=1\n',
  '[core  "x"]\nk=1\n',
  '[core "x" ]\nk=1\n',
  '[core "a\\x\\"q"]\nk=1\n',
  '[core "a\\\n"]\nk=1\n',
  '[ "x"]\nk=1\n',
  '[]\nk=1\n',
  '[co_re]\nk=1\n',
  '[core\nk=1\n',
  '[core]]\nk=1\n',
  '[core]\n-k=1\n',
  '[core]\n1k=1\n',
  '[core]\nk-1=1\n',
  '[core]\nk.x=1\n',
  '[core]\npager = a\\\n b\n',
  '[core]\npager = a # c \\\n b=1\n',
  '[core]\npager = "a\\\nb"\n',
  '[core]\npager = "a ;b" #c\n',
  '[core]\npager = a\\\\q\n',
  '[core]\npager = \\x\n',
  '[core]\npager = \\t\\n\\b\\"\\\\\n',
  '[core]\npager = "unterminated\n',
  '[core]\npager = a"b\n c"d\n',
  '[core]\npager = "a"b" c"  d  \n',
  '[core]\n\tk\t=\t1  2\t\n',
  '[core]\r\nk=1\r\n',
  '[core]\nk=1\r\r\n',
  '[core]\nk=1\rb\n',
  '\u00ef\u00bb\u00bf[core]\nk=1\n',
  '\u00ef\u00bb[core]\nk=1\n',
  '; only a comment\n# and another\n',
  '',
  '[core]\n  [diff "x"]  textconv=1 ; c\n',
  '[alias]\n\tst = !sh -c "touch /tmp/x"\n',
  '[core]\nk = caf\u00c3\u00a9\n',
  '[core]\nk = v\\',
  '[core]\nk = "v\\"',
  '[include]\n\tpath = ../other.cfg\n[includeIf "gitdir:~/x/"]\n\tpath = ~/y\n',
];

describe('R-SH-9 parseGitConfig reads config files exactly as git does', () => {
  it.each(HAND_CASES)('%j', (text) => {
    expect(ourParse(text)).toEqual(gitParse(text));
  });

  it('agrees with git on 400 seeded random texts (seed printed on failure)', () => {
    const pieces = ['[core]', '[diff "x"]', '[Diff.Y]', '[a "b\\"c"]', '[s "t', ']', '[', 'k', 'Key', 'x-1', '=', ' = ', 'v', '"', '\\', '\\\n', '\\t', '\\q', '#', ';', ' ', '\t', '\n', '\r\n', '\r', '.', 'fsmonitor', 'pager', '!', 'é'];
    const seed = Number(process.env['GITCONFIG_SEED'] ?? 0x5eed);
    let state = seed;
    const random = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    for (let i = 0; i < 400; i += 1) {
      let text = ['[core]\n', '[diff "x"]\n', ''][random(3)] as string;
      const length = 1 + random(14);
      for (let j = 0; j < length; j += 1) text += pieces[random(pieces.length)];
      const latin1 = Buffer.from(text, 'utf8').toString('latin1');
      expect(ourParse(latin1), `seed ${seed}, case ${i}: ${JSON.stringify(latin1)}`).toEqual(gitParse(latin1));
    }
  });

  it('a NUL byte is an error (git would cut the value there)', () => {
    expect(parseGitConfig('[core]\npager = a\0b\n')).toEqual({ error: 'it holds a NUL byte' });
  });
});

describe('R-SH-9 execution keys', () => {
  it('splits a key as git does: section, subsection, last part', () => {
    expect(splitConfigKey('diff.My.Driver.textconv')).toEqual({ section: 'diff', subsection: 'My.Driver', name: 'textconv' });
    expect(splitConfigKey('core.pager')).toEqual({ section: 'core', subsection: undefined, name: 'pager' });
    expect(splitConfigKey('k')).toEqual({ section: '', subsection: undefined, name: 'k' });
  });

  it.each([
    'core.fsmonitor',
    'core.pager',
    'core.editor',
    'core.sshcommand',
    'core.askpass',
    'core.gitproxy',
    'core.alternaterefscommand',
    'sequence.editor',
    'diff.external',
    'diff.x.textconv',
    'diff.x.command',
    'difftool.t.cmd',
    'mergetool.t.path',
    'merge.x.driver',
    'filter.lfs.clean',
    'filter.x.smudge',
    'filter.x.process',
    'filter.x.required',
    'include.path',
    'includeif.gitdir:~/x/.path',
    'gpg.program',
    'gpg.ssh.program',
    'gpg.ssh.defaultkeycommand',
    'credential.helper',
    'credential.https://example.com.helper',
    'uploadpack.packobjectshook',
    'interactive.difffilter',
    'pager.log',
    'sendemail.tocmd',
    'remote.origin.uploadpack',
    'tar.tgz.command',
    'trailer.sign.command',
    'hook.lint.command',
  ])('%s executes (with a command as value)', (key) => {
    expect(isExecutionKey(key, '/tmp/x')).toBe(true);
    expect(describeExecutionKey(key)).toBeDefined();
  });

  it('values decide for aliases, per-command pagers, fsmonitor and submodule updates', () => {
    expect(isExecutionKey('alias.st', '!sh -c x')).toBe(true);
    expect(isExecutionKey('alias.st', 'status -sb')).toBe(false);
    expect(isExecutionKey('pager.log', 'false')).toBe(false);
    expect(isExecutionKey('pager.log', undefined)).toBe(false);
    expect(isExecutionKey('pager.log', 'less -S')).toBe(true);
    expect(isExecutionKey('core.fsmonitor', 'false')).toBe(false);
    expect(isExecutionKey('core.fsmonitor', '.git/hooks/fsmonitor-watchman')).toBe(true);
    expect(isExecutionKey('submodule.x.update', 'rebase')).toBe(false);
    expect(isExecutionKey('submodule.x.update', '!sh x')).toBe(true);
  });

  it('ordinary keys do not execute', () => {
    for (const key of ['core.bare', 'core.filemode', 'user.name', 'remote.origin.url', 'branch.main.merge', 'diff.x.xfuncname', 'filter.clean', 'core.x.pagerx']) {
      expect(isExecutionKey(key, 'x'), key).toBe(false);
    }
  });
});
