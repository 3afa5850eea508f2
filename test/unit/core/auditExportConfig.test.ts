// R-AUD-4 R-CFG-1: audit.export is validated like every other key, and what may
// be shown of a sink (status, logs, reload diffs) never holds a secret.
import { describe, expect, it } from 'vitest';
import { describeSink, diffAuditExport, sinkNameOf, type AuditConfig } from '../../../src/core/config/auditExportConfig.js';
import { validateConfig } from '../../../src/core/config/config.js';
import { diffPolicy } from '../../../src/core/config/configDiff.js';

const HEADER_SECRET = 'hdr-SECRET-value-42';

describe('R-AUD-4 audit.export configuration', () => {
  it('accepts each sink kind with its defaults', () => {
    const { config, problems } = validateConfig({
      audit: {
        export: [
          { kind: 'syslog', transport: 'tls', host: 'logs.example.org', port: 6514 },
          { kind: 'cef', file: '/var/log/assent.cef' },
          { kind: 'otlp', url: 'http://127.0.0.1:4318/v1/logs', headers: { 'x-api-key': HEADER_SECRET } },
          { kind: 'webhook', url: 'https://hooks.example.org/a', secretFile: '/home/me/.assent/hook.key' },
        ],
      },
    });
    expect(problems).toEqual([]);
    expect(config?.audit.export[0]).toMatchObject({ facility: 'authpriv', appName: 'assent', batchSize: 100, maxLag: 10_000 });
    expect(config?.audit.export.map((sink, index) => sinkNameOf(sink, index))).toEqual(['syslog-1', 'cef-2', 'otlp-3', 'webhook-4']);
  });

  it.each([
    ['plain http for a webhook', { kind: 'webhook', url: 'http://hooks.example.org', secretFile: '/k' }, 'audit.export.0.url'],
    ['a relative key file', { kind: 'webhook', url: 'https://h.example.org', secretFile: 'key' }, 'audit.export.0.secretFile'],
    ['tcp without a port', { kind: 'syslog', transport: 'tcp', host: 'h' }, 'audit.export.0'],
    ['unix without a path', { kind: 'syslog', transport: 'unix' }, 'audit.export.0.path'],
    ['a CEF sink with neither file nor transport', { kind: 'cef' }, 'audit.export.0'],
    ['an unknown kind', { kind: 'kafka' }, 'audit.export.0.kind'],
    ['a port out of range', { kind: 'syslog', transport: 'udp', host: 'h', port: 70000 }, 'audit.export.0.port'],
  ])('refuses %s, naming the key path', (_name, sink, path) => {
    const { config, problems } = validateConfig({ audit: { export: [sink] } });
    expect(config).toBeUndefined();
    expect(problems.filter((p) => p.severity === 'error').map((p) => p.path)).toContain(path);
  });

  it('refuses two sinks of one name', () => {
    const sink = { kind: 'cef', name: 'x', file: '/a' };
    expect(validateConfig({ audit: { export: [sink, { ...sink, file: '/b' }] } }).problems.map((p) => p.path)).toContain('audit.export.1.name');
  });

  it.each([
    ['audit.exprot, which would turn all export off', { exprot: [{ kind: 'cef', file: '/a' }] }, 'audit.exprot', 'export'],
    ["a sink's hedaers, which would drop its API key", { export: [{ kind: 'otlp', url: 'http://127.0.0.1:4318/v1/logs', hedaers: { 'x-api-key': HEADER_SECRET } }] }, 'audit.export.0.hedaers', 'headers'],
    ["a sink's batchsize", { export: [{ kind: 'syslog', transport: 'udp', host: 'h', port: 514, batchsize: 10 }] }, 'audit.export.0.batchsize', 'batchSize'],
    ["a CEF sink's fiel", { export: [{ kind: 'cef', name: 'x', file: '/a', fiel: '/c' }] }, 'audit.export.0.fiel', 'file'],
  ])('R-CFG-1 refuses an unknown key inside audit: %s, naming the key and the closest known one', (_name, audit, path, near) => {
    const { config, problems } = validateConfig({ audit });
    expect(config).toBeUndefined();
    expect(problems).toEqual([expect.objectContaining({ severity: 'error', path, message: expect.stringContaining(`did you mean ${JSON.stringify(near)}`) })]);
    expect(JSON.stringify(problems)).not.toContain(HEADER_SECRET);
  });

  it('describes and diffs sinks without header values or keys', () => {
    const before = validateConfig({ audit: { export: [{ kind: 'otlp', name: 'o', url: 'https://u:pw@otel.example.org/v1/logs?token=q', headers: { 'x-api-key': HEADER_SECRET } }] } }).config!;
    const after = validateConfig({ audit: { export: [{ kind: 'otlp', name: 'o', url: 'https://otel.example.org/v1/logs', headers: { 'x-api-key': `${HEADER_SECRET}2` } }, { kind: 'webhook', name: 'w', url: 'https://h.example.org/x', secretFile: '/k' }] } }).config!;
    const text = [...diffAuditExport(before.audit as AuditConfig, after.audit as AuditConfig), ...diffPolicy(before, after), ...after.audit.export.map(describeSink)].join('\n');
    expect(text).toContain('audit.export.o: changed');
    expect(text).toContain('audit.export.w: added');
    expect(text).toContain('x-api-key');
    for (const secret of [HEADER_SECRET, 'pw', 'token=q']) expect(text).not.toContain(secret);
  });
});
