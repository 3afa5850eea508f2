// The names the HTTP head answers to (R-WEB-1, R-REM-1, R-REM-7): the bound
// address, the host of web.publicUrl and web.allowedHosts — exactly those.
import { describe, expect, it } from 'vitest';
import { webAccess } from '../../../src/core/config/webOrigins.js';

const LOOPBACK = { listenAddress: '127.0.0.1:7788', scheme: 'http' as const };

describe('Host and Origin guards (issue 13 item 1)', () => {
  it('R-WEB-1 with no extra names only the bound address is accepted, as before', () => {
    const access = webAccess({ ...LOOPBACK, web: { allowedHosts: [] } });
    expect(access.hostAllowed('127.0.0.1:7788')).toBe(true);
    for (const host of [undefined, '', 'localhost:7788', '127.0.0.1:7789', '127.0.0.1', 'evil.example:7788']) expect(access.hostAllowed(host)).toBe(false);
    expect(access.originAllowed('http://127.0.0.1:7788')).toBe(true);
    for (const origin of ['https://127.0.0.1:7788', 'http://localhost:7788', 'http://evil.example', 'null']) expect(access.originAllowed(origin)).toBe(false);
    expect(access.pageUrl).toBe('http://127.0.0.1:7788/');
    expect(access.secureCookies).toBe(false);
  });

  it('R-REM-1 web.publicUrl adds exactly its host (default port 443) and its https origin; cookies become Secure', () => {
    const access = webAccess({ ...LOOPBACK, web: { publicUrl: 'https://laptop.example.ts.net/', allowedHosts: [] } });
    expect(access.hostAllowed('laptop.example.ts.net')).toBe(true);
    expect(access.hostAllowed('LAPTOP.example.ts.net:443')).toBe(true);
    expect(access.hostAllowed('127.0.0.1:7788')).toBe(true);
    for (const host of ['laptop.example.ts.net:8443', 'other.example.ts.net', 'example.ts.net', 'laptop.example.ts.net.evil.example']) expect(access.hostAllowed(host)).toBe(false);
    expect(access.originAllowed('https://laptop.example.ts.net')).toBe(true);
    for (const origin of ['http://laptop.example.ts.net', 'https://laptop.example.ts.net:8443', 'https://evil.example']) expect(access.originAllowed(origin)).toBe(false);
    expect(access.pageUrl).toBe('https://laptop.example.ts.net/');
    expect(access.secureCookies).toBe(true);
  });

  it('R-REM-7 an allowedHosts name allows any port; name:port only that port; https origins only', () => {
    const access = webAccess({ ...LOOPBACK, web: { allowedHosts: ['any.example', 'fixed.example:8443'] } });
    for (const host of ['any.example', 'any.example:1', 'any.example:8443', 'fixed.example:8443']) expect(access.hostAllowed(host)).toBe(true);
    for (const host of ['fixed.example', 'fixed.example:443', 'fixed.example:8444', 'sub.any.example', 'any.example.evil']) expect(access.hostAllowed(host)).toBe(false);
    expect(access.originAllowed('https://any.example:9999')).toBe(true);
    expect(access.originAllowed('https://fixed.example:8443')).toBe(true);
    expect(access.originAllowed('https://fixed.example')).toBe(false);
    // Plain http would carry the cookie in clear: refused for a non-loopback name.
    expect(access.originAllowed('http://any.example:9999')).toBe(false);
    expect(access.secureCookies).toBe(false);
  });

  it('R-REM-1 a loopback name in allowedHosts may be used over plain http, still only with its port rule', () => {
    const access = webAccess({ ...LOOPBACK, web: { allowedHosts: ['localhost:7788'] } });
    expect(access.hostAllowed('localhost:7788')).toBe(true);
    expect(access.originAllowed('http://localhost:7788')).toBe(true);
    expect(access.originAllowed('http://localhost:7789')).toBe(false);
  });

  it('R-REM-2 serving TLS itself: the https origin of the bound address, Secure cookies, never the http one', () => {
    const access = webAccess({ listenAddress: '192.0.2.2:7788', scheme: 'https', web: { allowedHosts: [] } });
    expect(access.originAllowed('https://192.0.2.2:7788')).toBe(true);
    expect(access.originAllowed('http://192.0.2.2:7788')).toBe(false);
    expect(access.pageUrl).toBe('https://192.0.2.2:7788/');
    expect(access.secureCookies).toBe(true);
  });

  it('R-REM-2 a wildcard listen answers to this machine\'s own addresses with the bound port, and nothing else', () => {
    const access = webAccess({ listenAddress: '0.0.0.0:7788', scheme: 'https', web: { allowedHosts: [] }, ownAddresses: ['192.0.2.2:7788', '[fd00::2]:7788'] });
    expect(access.hostAllowed('192.0.2.2:7788')).toBe(true);
    expect(access.hostAllowed('[FD00::2]:7788')).toBe(true);
    expect(access.originAllowed('https://192.0.2.2:7788')).toBe(true);
    expect(access.hostAllowed('192.0.2.3:7788')).toBe(false);
    expect(access.hostAllowed('192.0.2.2:7789')).toBe(false);
  });
});
