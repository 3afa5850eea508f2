// SPEC §2, STYLE "layout shows the architecture": imports run one way, down the
// layers, and the daemon is assembled at the top (heads/daemon/daemonRuntime.ts),
// never from below. The same rules are written out in docs/architecture.md.
//
//   core ← state ← channels, journal, shell ← exec ← service ← operations ← heads ← bin
//
// Heads use one another only in three ways: the CLI launches any head; any head
// may use the daemon's socket client (rpcClient, autoSpawn, framing,
// clientConnection in heads/daemon); the daemon's composition root starts the
// HTTP head.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf, listTs } from '../../helpers/imports.js';
import { moduleGraph } from '../../helpers/moduleGraph.js';

const srcDir = join(import.meta.dirname, '../../../src');

type Layer = 'core' | 'state' | 'channels' | 'journal' | 'shell' | 'exec' | 'service' | 'operations' | 'heads' | 'bin' | 'version';

/** What each layer may import besides itself, and the rule as a reader should see it. */
const LAYERS: Record<Layer, { mayImport: readonly Layer[]; rule: string }> = {
  core: { mayImport: [], rule: 'src/core imports nothing outside src/core (R-ARCH-1)' },
  state: { mayImport: ['core'], rule: 'src/state (where the state lives and that it is private) may import only core' },
  channels: { mayImport: ['core', 'state'], rule: 'src/channels may import only core and state' },
  journal: { mayImport: ['core', 'state'], rule: 'src/journal may import only core and state: never a service, an operation or a head' },
  shell: { mayImport: ['core', 'state'], rule: 'src/shell (parsing commands, resolving paths) may import only core and state' },
  exec: { mayImport: ['core', 'state', 'channels'], rule: 'src/exec may import only core, state and channels' },
  service: {
    mayImport: ['core', 'state', 'channels', 'journal', 'shell'],
    rule: 'src/service may import only core, state, channels, journal and shell: never a head or an operation',
  },
  operations: {
    mayImport: ['core', 'state', 'channels', 'journal', 'shell', 'service', 'version'],
    rule: 'src/operations may import only core, state, channels, journal, shell, service and version.ts: never a head',
  },
  heads: {
    mayImport: ['core', 'state', 'channels', 'journal', 'shell', 'exec', 'service', 'operations', 'version'],
    rule: 'a head may import any layer below the heads',
  },
  bin: { mayImport: ['heads'], rule: 'src/bin may import only the CLI head' },
  version: { mayImport: [], rule: 'src/version.ts imports nothing' },
};

/** The daemon's socket client: the modules of heads/daemon that every head may use to talk to the daemon. */
const DAEMON_CLIENT = new Set(['heads/daemon/rpcClient.ts', 'heads/daemon/autoSpawn.ts', 'heads/daemon/framing.ts', 'heads/daemon/clientConnection.ts']);
/** The daemon's composition root, which starts the HTTP head inside the daemon process. */
const DAEMON_ROOT = 'heads/daemon/daemonRuntime.ts';
const HEAD_RULE =
  'a head imports another head only as the CLI launching it, through the daemon socket client (heads/daemon rpcClient, autoSpawn, framing, clientConnection), or from the daemon composition root (heads/daemon/daemonRuntime.ts) starting the HTTP head';

function layerOf(path: string): Layer | undefined {
  const top = path.split('/')[0] ?? '';
  if (path === 'version.ts') return 'version';
  return top in LAYERS ? (top as Layer) : undefined;
}

/** heads/<name> of a path under heads/, else undefined. */
function headOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'heads' ? `heads/${parts[1] ?? ''}` : undefined;
}

export interface LayerViolation {
  file: string;
  import: string;
  rule: string;
}

/**
 * The imports of one source file (`file` relative to src/, e.g. `service/x.ts`)
 * that run against the layer directions. Only relative imports are judged; npm
 * packages and node: modules are R-ARCH-1's concern.
 */
export function layerViolations(file: string, source: string): LayerViolation[] {
  const from = layerOf(file);
  if (from === undefined) return [{ file, import: '(file)', rule: `${file} is in no known layer; add its folder to the layer table and docs/architecture.md` }];
  const violations: LayerViolation[] = [];
  for (const spec of importsOf(source)) {
    if (!spec.startsWith('.')) continue;
    const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
    const to = layerOf(target);
    if (to === from) {
      if (from !== 'heads') continue;
      const fromHead = headOf(file);
      const toHead = headOf(target);
      if (fromHead === toHead || fromHead === 'heads/cli' || DAEMON_CLIENT.has(target) || (file === DAEMON_ROOT && toHead === 'heads/http')) continue;
      violations.push({ file, import: spec, rule: HEAD_RULE });
      continue;
    }
    if (to !== undefined && LAYERS[from].mayImport.includes(to)) continue;
    violations.push({ file, import: spec, rule: LAYERS[from].rule });
  }
  return violations;
}

function describeViolation(violation: LayerViolation): string {
  return `src/${violation.file} imports '${violation.import}': ${violation.rule}`;
}

describe('SPEC §2 import directions (structure A)', () => {
  it('no file under src imports against the layers: service never reaches a head or an operation, journal never a service, heads only as allowed', () => {
    const offenders = listTs(srcDir).flatMap((path) => {
      const file = relative(srcDir, path);
      return layerViolations(file, readFileSync(path, 'utf8')).map(describeViolation);
    });
    expect(offenders).toEqual([]);
  });

  it('the check itself catches a src/service → src/heads and a src/service → src/operations import, naming the file, the import and the rule', () => {
    expect(layerViolations('service/x.ts', "import { createHttpApp } from '../heads/http/httpApp.js';").map(describeViolation)).toEqual([
      "src/service/x.ts imports '../heads/http/httpApp.js': src/service may import only core, state, channels, journal and shell: never a head or an operation",
    ]);
    expect(layerViolations('service/x.ts', "import type { Operation } from '../operations/operation.js';").map(describeViolation)).toEqual([
      "src/service/x.ts imports '../operations/operation.js': src/service may import only core, state, channels, journal and shell: never a head or an operation",
    ]);
    expect(layerViolations('service/x.ts', "const m = await import('../heads/daemon/daemonMain.js');")).toHaveLength(1);
    expect(layerViolations('service/x.ts', "import { Journal } from '../journal/journal.js';\nimport { z } from 'zod';")).toEqual([]);
  });

  it('the check itself catches journal → service, journal → heads, core → journal, operations → heads and a head importing another head', () => {
    expect(layerViolations('journal/x.ts', "import type { Logger } from '../service/logger.js';")).toHaveLength(1);
    expect(layerViolations('journal/x.ts', "import { x } from '../heads/daemon/rpcClient.js';")).toHaveLength(1);
    expect(layerViolations('core/base/x.ts', "import { x } from '../../journal/journal.js';")).toHaveLength(1);
    expect(layerViolations('operations/x.ts', "import type { DaemonContext } from '../heads/daemon/daemonMain.js';")).toHaveLength(1);
    for (const [file, spec] of [
      ['heads/http/x.ts', '../mcp/gateway.js'],
      ['heads/mcp/x.ts', '../http/httpApp.js'],
      ['heads/mcp/x.ts', '../cli/daemonConnection.js'],
      ['heads/mcp/x.ts', '../daemon/daemonMain.js'],
      ['heads/daemon/rpcServer.ts', '../http/httpApp.js'],
    ] as const) {
      expect(layerViolations(file, `import { y } from '${spec}';`).map((v) => v.rule), `${file} -> ${spec}`).toEqual([HEAD_RULE]);
    }
  });

  it('the check allows what the rules allow: the CLI launching a head, any head using the daemon socket client, the composition root starting the HTTP head', () => {
    expect(layerViolations('heads/cli/commands/mcp.ts', "import { runGateway } from '../../mcp/gateway.js';")).toEqual([]);
    expect(layerViolations('heads/cli/commands/daemon.ts', "await import('../../daemon/daemonRuntime.js');")).toEqual([]);
    expect(layerViolations('heads/mcp/x.ts', "import { DaemonClient } from '../daemon/rpcClient.js';")).toEqual([]);
    expect(layerViolations('heads/mcp/x.ts', "import { connectForCli } from '../daemon/clientConnection.js';")).toEqual([]);
    expect(layerViolations('heads/daemon/daemonRuntime.ts', "import { createHttpApp } from '../http/httpApp.js';")).toEqual([]);
    expect(layerViolations('operations/x.ts', "import type { ApprovalService } from '../service/approvalService.js';")).toEqual([]);
  });
});

/** src/core's concern folders (issue 21 item 4), each named in docs/architecture.md with a README of its own. */
const CORE_FOLDERS = ['agent', 'approval', 'audit', 'base', 'config', 'exec', 'policy'] as const;

/** What is wrong with src/core's layout: a file directly in it, a folder not in the list, a folder without its README. */
export function coreLayoutProblems(coreDir: string): string[] {
  const problems: string[] = [];
  for (const entry of readdirSync(coreDir)) {
    const path = join(coreDir, entry);
    if (!statSync(path).isDirectory()) problems.push(`src/core/${entry} sits directly in src/core; move it into the concern folder that owns it (${CORE_FOLDERS.join(', ')})`);
    else if (!(CORE_FOLDERS as readonly string[]).includes(entry)) problems.push(`src/core/${entry}/ is not a known concern folder; add it to CORE_FOLDERS and docs/architecture.md`);
    else if (!existsSync(join(path, 'README.md'))) problems.push(`src/core/${entry}/ has no README.md naming what it owns`);
  }
  return problems;
}

describe('src/core in folders by concern (issue 21 item 4)', () => {
  it('every file of src/core is in a concern folder, and each folder has a README naming what it owns', () => {
    expect(coreLayoutProblems(join(srcDir, 'core'))).toEqual([]);
  });
});

/** Every file of src/ that `entry` reaches through any import (static, type-only or import()), itself included. */
export function reachableFrom(graph: ReadonlyMap<string, readonly string[]>, entry: string): string[] {
  const seen = new Set<string>();
  const todo = [entry];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...(graph.get(file) ?? []));
  }
  return [...seen].sort();
}

describe('the hook keeps away from the journal (issue 37 item 2)', () => {
  it('the hook entry, src/bin/assent-hook.ts, and everything it imports, at once or on demand, imports nothing of src/journal; the state paths come from src/state', () => {
    const graph = moduleGraph(srcDir, join(srcDir, '..'));
    const reached = reachableFrom(graph, 'bin/assent-hook.ts');
    expect(reached).toContain('heads/hook/hookRun.ts');
    expect(reached).toContain('state/statePaths.ts');
    expect(reached.filter((file) => file.startsWith('journal/'))).toEqual([]);
  });

  it('the check itself follows imports through any number of files and reports a journal file reached at the end of a chain', () => {
    const graph = new Map<string, string[]>([
      ['bin/assent-hook.ts', ['heads/hook/hookProcess.ts']],
      ['heads/hook/hookProcess.ts', ['heads/hook/hookRun.ts', 'bin/assent-hook.ts']],
      ['heads/hook/hookRun.ts', ['state/statePaths.ts', 'heads/daemon/autoSpawn.ts']],
      ['heads/daemon/autoSpawn.ts', ['journal/configFile.ts']],
      ['journal/configFile.ts', []],
    ]);
    expect(reachableFrom(graph, 'bin/assent-hook.ts').filter((file) => file.startsWith('journal/'))).toEqual(['journal/configFile.ts']);
    expect(layerViolations('state/x.ts', "import { Journal } from '../journal/journal.js';")).toHaveLength(1);
    expect(layerViolations('journal/x.ts', "import { resolveStatePaths } from '../state/statePaths.js';")).toEqual([]);
  });
});
