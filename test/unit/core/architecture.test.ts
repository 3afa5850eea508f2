// R-ARCH-1: src/core is pure. It imports nothing from other src/ folders and no
// node: module (nor a bare builtin such as 'fs').
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, listTs } from '../../helpers/imports.js';

const coreDir = join(import.meta.dirname, '../../../src/core');

export function forbiddenCoreImports(file: string, source: string): string[] {
  const builtins = new Set(builtinModules);
  return importsOf(source).filter(
    (spec) =>
      spec.startsWith('node:') ||
      builtins.has(spec.split('/')[0] ?? '') ||
      (spec.startsWith('.') && !join(file, '..', spec).startsWith(coreDir)),
  );
}

describe('R-ARCH-1 core purity', () => {
  it('no file under src/core imports a node: module or another src folder', () => {
    const offenders = listTs(coreDir).flatMap((file) =>
      forbiddenCoreImports(file, readFileSync(file, 'utf8')).map((spec) => `${relative(coreDir, file)} -> ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the check itself catches a node: import, a bare builtin and an escape from core', () => {
    const file = join(coreDir, 'x.ts');
    expect(forbiddenCoreImports(file, "import { readFileSync } from 'node:fs';")).toEqual(['node:fs']);
    expect(forbiddenCoreImports(file, "import fs from 'fs';")).toEqual(['fs']);
    expect(forbiddenCoreImports(file, "import { x } from '../journal/db.js';")).toEqual(['../journal/db.js']);
    expect(forbiddenCoreImports(file, "import { y } from './errors.js';")).toEqual([]);
  });
});

function listFiles(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name), suffix) : entry.name.endsWith(suffix) ? [join(dir, entry.name)] : [],
  );
}

const srcDir = join(import.meta.dirname, '../../../src');
const testDir = join(import.meta.dirname, '../..');

describe('R-ARCH-2 side effects are injected, tests use fakes', () => {
  it('no test replaces one of our own modules with vi.mock or vi.doMock', () => {
    const offenders = listFiles(testDir, '.ts').filter((file) => /\bvi\.(do)?mock\(\s*['"]\.{1,2}\//.test(readFileSync(file, 'utf8')));
    expect(offenders.map((f) => relative(testDir, f))).toEqual([]);
  });

  it('the approval service, notifier and gateway take clock, timers, random bytes and spawn as parameters', () => {
    const service = readFileSync(join(srcDir, 'service/approvalService.ts'), 'utf8');
    for (const dependency of ['clock: Clock', 'random: RandomBytes', 'timers?: Timers', 'notifier: Notifier']) expect(service).toContain(dependency);
    expect(readFileSync(join(srcDir, 'channels/notifier.ts'), 'utf8')).toContain('spawn?: SpawnLike');
    expect(service).not.toMatch(/\bDate\.now\(\)|Math\.random\(|randomBytes\(/);
  });
});

describe('R-ARCH-3 heads are views over one service', () => {
  it('no head writes approvals or audit lines itself: only the service and the journal do', () => {
    const offenders = listFiles(join(srcDir, 'heads'), '.ts').filter((file) =>
      /\.(insertApproval|resolveApproval|appendEvent)\(/.test(readFileSync(file, 'utf8')),
    );
    expect(offenders.map((f) => relative(srcDir, f))).toEqual([]);
  });

  it('only the daemon composition root constructs the audit log and the approval service; no other head does (structure A)', () => {
    const builders = listFiles(join(srcDir, 'heads'), '.ts').filter((file) => /new AuditLog\(|new ApprovalService\(/.test(readFileSync(file, 'utf8')));
    expect(builders.map((f) => relative(srcDir, f))).toEqual(['heads/daemon/daemonRuntime.ts']);
  });

  it('no head evaluates exec or tool policy except the gateway gate, which uses the same pure function on the daemon snapshot', () => {
    const users = listFiles(join(srcDir, 'heads'), '.ts').filter((file) => /\bevaluateToolPolicy\(/.test(readFileSync(file, 'utf8')));
    expect(users.map((f) => relative(srcDir, f)).sort()).toEqual(['heads/mcp/daemonGate.ts', 'heads/mcp/gate.ts']);
  });
});

describe('R-MCP-10 ready-to-paste client configuration', () => {
  it('docs/mcp.md and the README carry Claude Code, Claude Desktop and Codex snippets', () => {
    for (const doc of ['docs/mcp.md', 'README.md']) {
      const text = readFileSync(join(srcDir, '..', doc), 'utf8');
      expect(text, doc).toContain('claude mcp add');
      expect(text, doc).toContain('"mcpServers"');
      expect(text, doc).toContain('[mcp_servers.assent]');
      expect(text, doc).toMatch(/"args": \["mcp"\]|args = \["mcp"\]/);
    }
  });
});
