// The `web` section of config.json (R-REM-1, R-REM-2, R-REM-3, R-REM-7): every
// bad value is reported with its key path, its type and what is allowed.
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, validateConfig, type Config } from '../../../src/core/config/config.js';
import { diffPolicy } from '../../../src/core/config/configDiff.js';
import { isLoopbackListen, parseHostEntry, parsePublicUrl } from '../../../src/core/config/webConfig.js';

function problemsOf(web: unknown): { path: string; message: string; severity: string }[] {
  return validateConfig({ web }).problems;
}

describe('web config (issue 13 items 1-3)', () => {
  it('R-REM-1 defaults: loopback listen, no public URL, no extra hosts, no TLS, devices remembered 30 days', () => {
    expect(DEFAULT_CONFIG.web).toEqual({ listen: '127.0.0.1:7788', allowedHosts: [], deviceTtlDays: 30 });
  });

  it('R-REM-1 accepts an https publicUrl of a site root and allowedHosts names with and without a port', () => {
    const { config, problems } = validateConfig({
      web: { publicUrl: 'https://laptop.example.ts.net/', allowedHosts: ['laptop.example.ts.net', 'proxy.example:8443', '[fd00::2]:443', '192.0.2.2'] },
    });
    expect(problems).toEqual([]);
    expect(config?.web.publicUrl).toBe('https://laptop.example.ts.net/');
    expect(config?.web.allowedHosts).toHaveLength(4);
  });

  it.each([
    ['an http URL', 'http://laptop.example/', /got a string \("http:\/\/laptop.example\/"\); expected the https:\/\/ URL/],
    ['a path', 'https://laptop.example/assent/', /site root without path/],
    ['a query', 'https://laptop.example/?a=1', /site root without path, query or fragment/],
    ['credentials', 'https://user:pw@laptop.example/', /expected the https:\/\/ URL/],
    ['not a URL', 'laptop', /expected the https:\/\/ URL/],
  ])('R-REM-1 refuses a publicUrl with %s, naming web.publicUrl', (_what, publicUrl, message) => {
    const problems = problemsOf({ publicUrl });
    expect(problems).toEqual([{ severity: 'error', path: 'web.publicUrl', message: expect.stringMatching(message) }]);
  });

  it('R-REM-7 refuses malformed allowedHosts entries, naming each one by index', () => {
    const problems = problemsOf({ allowedHosts: ['good.example', 'bad host', 'x.example:99999', 'a:b:c', 5] });
    expect(problems.map((p) => p.path)).toEqual(['web.allowedHosts.1', 'web.allowedHosts.2', 'web.allowedHosts.3', 'web.allowedHosts.4']);
    expect(problems[0]?.message).toMatch(/got a string \("bad host"\); expected a host name \(any port\) or "name:port"/);
    expect(problems[3]?.message).toMatch(/got the integer 5/);
    expect(problemsOf({ allowedHosts: 'one.example' })[0]).toMatchObject({ path: 'web.allowedHosts', message: expect.stringMatching(/got a string.*expected an array of host names/) });
  });

  it('R-REM-2 a non-loopback web.listen without web.tls is an error at web.tls that says what to set', () => {
    for (const listen of ['0.0.0.0:7788', '192.0.2.2:7788', '[::]:7788', 'laptop.example:7788']) {
      const problems = problemsOf({ listen });
      expect(problems).toEqual([{ severity: 'error', path: 'web.tls', message: expect.stringContaining('set web.tls to "self-signed"') }]);
      expect(problems[0]?.message).toContain(listen);
      expect(problemsOf({ listen, tls: 'self-signed' })).toEqual([]);
      expect(problemsOf({ listen, tls: { cert: '/etc/assent/cert.pem', key: '/etc/assent/key.pem' } })).toEqual([]);
    }
    for (const listen of ['127.0.0.1:0', '127.3.4.5:80', '[::1]:7788', 'localhost:7788']) expect(problemsOf({ listen })).toEqual([]);
  });

  it.each([
    ['a misspelt mode', 'selfsigned'],
    ['a missing key', { cert: '/c.pem' }],
    ['an unknown field', { cert: '/c.pem', key: '/k.pem', chain: '/x' }],
    ['a boolean', true],
  ])('R-REM-2 refuses web.tls with %s, naming web.tls and both allowed forms', (_what, tls) => {
    const problems = problemsOf({ listen: '192.0.2.2:7788', tls });
    expect(problems).toEqual([{ severity: 'error', path: 'web.tls', message: expect.stringMatching(/expected "self-signed" .* or \{"cert": "\/absolute\/cert.pem", "key": "\/absolute\/key.pem"\}/) }]);
  });

  it('R-REM-2 a relative certificate path is named by its own key path', () => {
    expect(problemsOf({ listen: '192.0.2.2:7788', tls: { cert: 'cert.pem', key: '/k.pem' } })).toEqual([
      { severity: 'error', path: 'web.tls.cert', message: 'got a string ("cert.pem"); expected an absolute path to the certificate (PEM)' },
    ]);
  });

  it('R-REM-3 deviceTtlDays is an integer from 1 to 365', () => {
    expect(validateConfig({ web: { deviceTtlDays: 7 } }).config?.web.deviceTtlDays).toBe(7);
    for (const bad of [0, 366, 1.5, '30']) {
      expect(problemsOf({ deviceTtlDays: bad })).toEqual([{ severity: 'error', path: 'web.deviceTtlDays', message: expect.stringMatching(/expected an integer from 1 to 365/) }]);
    }
  });

  it('R-CFG-1 an unknown key under web is a warning that names it', () => {
    expect(problemsOf({ publicURL: 'https://x.example/' })).toEqual([
      { severity: 'warning', path: 'web.publicURL', message: expect.stringContaining('did you mean "publicUrl"') },
    ]);
  });

  it('R-CFG-4 the reload review shows a new public name, added and removed hosts and the TLS mode', () => {
    const before = DEFAULT_CONFIG;
    const after = validateConfig({ web: { publicUrl: 'https://phone-facing.example/', allowedHosts: ['extra.example'], tls: 'self-signed', deviceTtlDays: 7 } }).config as Config;
    expect(diffPolicy(before, after)).toEqual([
      'web.publicUrl: (unset) → "https://phone-facing.example/"',
      'web.allowedHosts: added "extra.example"',
      'web.tls: (unset) → "self-signed"',
      'web.deviceTtlDays: 30 → 7',
    ]);
    expect(diffPolicy(after, before)).toContain('web.allowedHosts: removed "extra.example"');
  });

  it('R-REM-7 host entries parse to a lower-case name and an optional port', () => {
    expect(parseHostEntry('Laptop.Example')).toEqual({ host: 'laptop.example' });
    expect(parseHostEntry('laptop.example:8443')).toEqual({ host: 'laptop.example', port: 8443 });
    expect(parseHostEntry('[FD00::2]:443')).toEqual({ host: '[fd00::2]', port: 443 });
    for (const bad of ['', ':80', 'a b', 'x:0', 'x:', '-x.example', 'x.example/']) expect(parseHostEntry(bad)).toBeUndefined();
    expect(parsePublicUrl('https://Laptop.Example:8443')).toEqual({ origin: 'https://laptop.example:8443', host: 'laptop.example:8443', hostname: 'laptop.example', url: 'https://laptop.example:8443/' });
    expect(isLoopbackListen('127.0.0.1:1')).toBe(true);
    expect(isLoopbackListen('0.0.0.0:1')).toBe(false);
  });
});
