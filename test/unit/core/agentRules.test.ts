// R-SH-2, R-URL-1, R-PATH-1: word patterns, URL globs and path globs as
// docs/policy.md describes them.
import { describe, expect, it } from 'vitest';
import { compilePaths, evaluatePath } from '../../../src/core/policy/pathPolicy.js';
import { literalWord } from '../../../src/core/policy/shellCommand.js';
import { compileUrls, evaluateUrl } from '../../../src/core/policy/urlPolicy.js';
import { compileWordPattern, patternMatches } from '../../../src/core/policy/wordPattern.js';

const words = (...texts: string[]) => texts.map(literalWord);

describe('R-SH-2 word patterns', () => {
  it('each word equals one word, * globs inside a word (slash included), a final lone * matches any remaining words', () => {
    const pattern = compileWordPattern('git push --force *');
    expect(patternMatches(pattern, words('git', 'push', '--force'))).toBe(true);
    expect(patternMatches(pattern, words('git', 'push', '--force', 'origin', 'main'))).toBe(true);
    expect(patternMatches(pattern, words('git', 'push', 'origin'))).toBe(false);
    expect(patternMatches(compileWordPattern('git status'), words('git', 'status', '--short'))).toBe(false);
    expect(patternMatches(compileWordPattern('git checkout feat/*'), words('git', 'checkout', 'feat/a/b'))).toBe(true);
    expect(patternMatches(compileWordPattern("git commit -m 'a b'"), words('git', 'commit', '-m', 'a b'))).toBe(true);
    expect(patternMatches(compileWordPattern('echo \\*'), words('echo', 'x'))).toBe(false);
  });

  it('a word that is not static never matches a pattern word, only the final *', () => {
    const dynamic = [literalWord('rm'), { text: '$x', static: false, why: 'a variable ($x)' }];
    expect(patternMatches(compileWordPattern('rm $x'), dynamic)).toBe(false);
    expect(patternMatches(compileWordPattern('rm *'), dynamic)).toBe(true);
  });

  it('the base-name match for /bin/rm is only for rules that deny or prompt', () => {
    const pattern = compileWordPattern('rm *');
    expect(patternMatches(pattern, words('/bin/rm', 'x'), true)).toBe(true);
    expect(patternMatches(pattern, words('/bin/rm', 'x'), false)).toBe(false);
  });
});

describe('R-URL-1 URL rules', () => {
  const urls = compileUrls({
    default: 'prompt',
    rules: [
      { match: 'https://docs.example.com/*', decision: 'allow' },
      { match: 'https://*.example.org/*', decision: 'allow' },
      { match: 'http://localhost:*/*', decision: 'allow' },
      { match: 'https://docs.example.com/private/*', decision: 'deny' },
    ],
  });

  it('normalises scheme, host and default port, and the most restrictive matching rule wins', () => {
    expect(evaluateUrl(urls, 'HTTPS://Docs.Example.COM:443/a/b?c=d')).toMatchObject({ decision: 'allow', normalized: 'https://docs.example.com/a/b?c=d' });
    expect(evaluateUrl(urls, 'https://docs.example.com/private/x').decision).toBe('deny');
    expect(evaluateUrl(urls, 'http://localhost:3000/x').decision).toBe('allow');
    expect(evaluateUrl(urls, 'https://docs.example.com.evil.com/').decision).toBe('prompt');
    expect(evaluateUrl(urls, 'https://docs.example.com@evil.com/').decision).toBe('prompt');
  });

  it('* in a host matches one label and never crosses a /', () => {
    expect(evaluateUrl(urls, 'https://docs.example.org/x').decision).toBe('allow');
    expect(evaluateUrl(urls, 'https://a.b.example.org/x').decision).toBe('prompt');
    expect(evaluateUrl(urls, 'https://evil.com/x.example.org/').decision).toBe('prompt');
  });

  it('what is not a URL is at least prompt', () => {
    expect(evaluateUrl(urls, 'not a url')).toMatchObject({ decision: 'prompt', reason: expect.stringContaining('not an absolute URL') });
  });
});

describe('R-PATH-1 path rules', () => {
  const vars = { home: '/h/u', assentHome: '/h/u/.assent', codexHome: '/h/u/.codex' };
  const paths = compilePaths(
    {
      read: 'allow',
      write: 'prompt',
      rules: [
        { glob: '~/.ssh/**', access: 'any', decision: 'deny' },
        { glob: '**/.env.!(example)', access: 'any', decision: 'deny' },
        { glob: '${cwd}/**', access: 'write', decision: 'allow' },
      ],
    },
    vars,
  );

  it('a glob ending in /** matches the directory itself; extglobs work; ${cwd} is the agent cwd', () => {
    expect(evaluatePath(paths, '/h/u/.ssh', 'read', ['/p']).decision).toBe('deny');
    expect(evaluatePath(paths, '/p/.env.local', 'read', ['/p']).decision).toBe('deny');
    expect(evaluatePath(paths, '/p/.env.example', 'read', ['/p']).decision).toBe('allow');
    expect(evaluatePath(paths, '/p/src/a.ts', 'write', ['/p'])).toEqual({ decision: 'allow', rule: 'policy.paths.rules.2 "${cwd}/**"' });
    expect(evaluatePath(paths, '/q/a.ts', 'write', ['/p'])).toEqual({ decision: 'prompt', rule: 'policy.paths.write' });
  });
});
