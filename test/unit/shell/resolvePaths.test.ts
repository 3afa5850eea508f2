// R-PATH-1: paths are judged where the kernel lands them, a dangling symlink by
// its link text. The kernel itself is the oracle: after predicting a landing
// path, each test writes through the link and looks where the file appeared.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePlan, type ActionPlan } from '../../../src/core/policy/actionPlan.js';
import { DEFAULT_CONFIG } from '../../../src/core/config/config.js';
import { compilePaths } from '../../../src/core/policy/pathPolicy.js';
import { judgePaths, judgeShell } from '../../../src/shell/judgeAction.js';
import { physicalPath, resolvePathRequest, resolvePathRequests, SYMLINK_HOPS } from '../../../src/shell/resolvePaths.js';
import { loadShellParser } from '../../../src/shell/shellParser.js';
import { makeShellHost } from '../../helpers/shellFixture.js';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'assent-paths-')));
  mkdirSync(join(root, 'home', '.ssh'), { recursive: true });
  mkdirSync(join(root, 'proj', 'docs'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Writes through `path` as a shell redirection would (O_CREAT, following links) and returns where the file is, or the errno. */
function kernelWrite(path: string): string {
  try {
    writeFileSync(path, 'x');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error';
  }
  return realpathSync.native(path);
}

/** The prediction, then the kernel's answer for the same path. */
function predictThenWrite(path: string): { predicted: string | undefined; landed: string } {
  const predicted = physicalPath(path);
  return { predicted, landed: kernelWrite(path) };
}

describe('R-PATH-1 physicalPath follows dangling symlinks by their link text', () => {
  it('a dangling relative link (docs/notes.md -> ../../home/.ssh/authorized_keys2) lands in ~/.ssh', () => {
    symlinkSync('../../home/.ssh/authorized_keys2', join(root, 'proj', 'docs', 'notes.md'));
    const { predicted, landed } = predictThenWrite(join(root, 'proj', 'docs', 'notes.md'));
    expect(predicted).toBe(join(root, 'home', '.ssh', 'authorized_keys2'));
    expect(landed).toBe(predicted);
  });

  it('a dangling absolute link lands at its text', () => {
    symlinkSync(join(root, 'home', '.ssh', 'k'), join(root, 'proj', 'abs'));
    const { predicted, landed } = predictThenWrite(join(root, 'proj', 'abs'));
    expect(predicted).toBe(join(root, 'home', '.ssh', 'k'));
    expect(landed).toBe(predicted);
  });

  it('a chain of links, the last one dangling, is followed to its end', () => {
    symlinkSync('b', join(root, 'proj', 'a'));
    symlinkSync('docs/c', join(root, 'proj', 'b'));
    symlinkSync('../../home/.ssh/x', join(root, 'proj', 'docs', 'c'));
    const { predicted, landed } = predictThenWrite(join(root, 'proj', 'a'));
    expect(predicted).toBe(join(root, 'home', '.ssh', 'x'));
    expect(landed).toBe(predicted);
  });

  it('a dangling link in a middle component (link/sub/file, link -> a missing dir) lands under the link text', () => {
    symlinkSync('../home/.ssh/missing', join(root, 'proj', 'link'));
    const path = join(root, 'proj', 'link', 'sub', 'file');
    const predicted = physicalPath(path);
    expect(predicted).toBe(join(root, 'home', '.ssh', 'missing', 'sub', 'file'));
    // The kernel cannot create the missing directories; once they exist, the same write lands there.
    expect(kernelWrite(path)).toBe('ENOENT');
    mkdirSync(dirname(predicted as string), { recursive: true });
    expect(kernelWrite(path)).toBe(predicted);
  });

  it('`..` after a link applies to where the link landed, not to the text', () => {
    symlinkSync('../home/.ssh', join(root, 'proj', 'd'));
    symlinkSync('d/../z', join(root, 'proj', 'e'));
    const { predicted, landed } = predictThenWrite(join(root, 'proj', 'e'));
    expect(predicted).toBe(join(root, 'home', 'z'));
    expect(landed).toBe(predicted);
    expect(physicalPath(`${root}/proj/d/../new/f`)).toBe(join(root, 'home', 'new', 'f'));
  });

  it('an existing path and a new file beneath existing directories resolve as before', () => {
    symlinkSync('../home/.ssh', join(root, 'proj', 'keys'));
    expect(physicalPath(join(root, 'proj', 'keys'))).toBe(join(root, 'home', '.ssh'));
    expect(physicalPath(join(root, 'proj', 'keys', 'new'))).toBe(join(root, 'home', '.ssh', 'new'));
    expect(physicalPath(`${root}/proj/missing/../x`)).toBe(join(root, 'proj', 'x'));
  });

  it('loops are undefined, as the kernel refuses them with ELOOP', () => {
    symlinkSync('b', join(root, 'proj', 'a'));
    symlinkSync('a', join(root, 'proj', 'b'));
    symlinkSync('self', join(root, 'proj', 'self'));
    symlinkSync('grow/x', join(root, 'proj', 'grow'));
    for (const path of ['a', 'self', 'grow', 'a/below', 'self/x/y']) {
      const { predicted, landed } = predictThenWrite(join(root, 'proj', path));
      expect(predicted, path).toBeUndefined();
      expect(landed, path).toMatch(/^E(LOOP|NOENT|NOTDIR)$/);
    }
    expect(kernelWrite(join(root, 'proj', 'a'))).toBe('ELOOP');
  });

  it(`${SYMLINK_HOPS} links are followed and one more is a loop, exactly as for the kernel`, () => {
    const chain = (length: number, name: string): string => {
      for (let i = 0; i < length; i += 1) symlinkSync(i === length - 1 ? `../home/${name}` : `${name}${i + 1}`, join(root, 'proj', `${name}${i}`));
      return join(root, 'proj', `${name}0`);
    };
    const ok = predictThenWrite(chain(SYMLINK_HOPS, 'ok'));
    expect(ok.predicted).toBe(join(root, 'home', 'ok'));
    expect(ok.landed).toBe(ok.predicted);
    const long = predictThenWrite(chain(SYMLINK_HOPS + 1, 'long'));
    expect(long.predicted).toBeUndefined();
    expect(long.landed).toBe('ELOOP');
  });

  it('caches by path: the cache map holds the answer, undefined included', () => {
    symlinkSync('self', join(root, 'proj', 'self'));
    const cache = new Map<string, string | undefined>();
    physicalPath(join(root, 'proj', 'self'), cache);
    expect(cache.has(join(root, 'proj', 'self'))).toBe(true);
  });
});

describe('R-PATH-1 resolvePathRequests: an unresolvable path has no forms, and decidePlan prompts for it', () => {
  it('gives lexical and physical forms, and none at all (with the reason in resolvePathRequest) for a loop', () => {
    symlinkSync('../../home/.ssh/k', join(root, 'proj', 'docs', 'notes.md'));
    symlinkSync('loop', join(root, 'proj', 'loop'));
    const requests = [
      { text: 'docs/notes.md', bases: [join(root, 'proj')] },
      { text: 'loop', bases: [join(root, 'proj')] },
    ];
    expect(resolvePathRequests(requests)).toEqual([[join(root, 'proj', 'docs', 'notes.md'), join(root, 'home', '.ssh', 'k')], []]);
    expect(resolvePathRequest(requests[1] as (typeof requests)[number])).toEqual({
      forms: [join(root, 'proj', 'loop')],
      unresolved: `${join(root, 'proj', 'loop')} does not resolve: a symlink loop or more than ${SYMLINK_HOPS} symlinks`,
    });
  });

  it('an empty forms list is prompt even where every rule and default allows (evaluatePathForms falls back to prompt)', () => {
    const cwd = join(root, 'proj');
    const paths = compilePaths({ read: 'allow', write: 'allow', rules: [{ glob: '**/*', access: 'any', decision: 'allow' }] }, { home: join(root, 'home'), assentHome: '/nonexistent/.assent', codexHome: '/nonexistent/.codex' });
    const plan: ActionPlan = { parts: [], paths: [{ shown: 'loop', access: 'write', request: 0 }], requests: [{ text: 'loop', bases: [cwd] }], cwd };
    const verdict = decidePlan(plan, [[]], paths, [cwd]);
    expect(verdict.decision).toBe('prompt');
    expect(verdict.parts).toEqual([{ kind: 'path', text: 'write loop', decision: 'prompt', rule: 'policy.paths.write' }]);
  });

  it('end to end: a write through a dangling link into ~/.ssh is denied by the default policy, for the Write tool and a redirection', async () => {
    const host = makeShellHost();
    try {
      mkdirSync(join(host.cwd, 'docs'));
      // cwd is root/work/proj; root/home/u/.ssh holds the keys.
      symlinkSync('../../../home/u/.ssh/authorized_keys2', join(host.cwd, 'docs', 'notes.md'));
      expect(existsSync(join(host.cwd, 'docs', 'notes.md'))).toBe(false);
      const snapshot = host.snapshot(DEFAULT_CONFIG.policy);
      const write = judgePaths(snapshot, ['docs/notes.md'], 'write', host.cwd);
      expect(write.decision).toBe('deny');
      expect(write.parts[0]?.reason).toContain(join(host.home, '.ssh', 'authorized_keys2'));
      const parser = await loadShellParser();
      expect(judgeShell(parser, snapshot, 'echo KEY > docs/notes.md', host.cwd).decision).toBe('deny');
    } finally {
      host[Symbol.dispose]();
    }
  });
});
