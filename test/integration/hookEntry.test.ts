// The built hook entry (dist/bin/assent-hook.js, SPEC §14, R-HOOK-8): a
// CommonJS entry that compiles one self-contained bundle with its V8 code
// cache, and whose allow path loads nothing beyond what one socket round trip
// needs — no module file but the entry, no ES module loader, no net or stream
// modules, no perf_hooks, no child_process — and which still answers deny when
// it cannot even start (R-HOOK-4).
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PIPE_HANDLE_NODE_MAJORS } from '../../src/heads/hook/nodePipe.js';
import { makeTempHome, REPO_ROOT, type CliResult, type TempHome } from '../helpers/daemon.js';
import { answerOf, HOOK_ENTRY, shellEvent } from '../helpers/hook.js';

/**
 * What the hook's run adds to a process that has just started (Node's own
 * bootstrap and CommonJS loader): these builtins and bindings, and nothing
 * else. A change that loads more makes every agent tool call slower; if it is
 * truly needed, add it here and run `node bench/hook.bench.mjs`.
 */
const ALLOW_PATH_LOADS = [
  'Internal Binding os', // statePaths: os.homedir()
  'NativeModule os',
  'NativeModule internal/abort_controller', // the withdrawal and the per-phase deadlines
  'Internal Binding signal_wrap', // SIGTERM, SIGINT, SIGHUP withdraw the call (R-HOOK-12)
  'Internal Binding pipe_wrap', // the daemon's socket and stdin on Node's pipe handle (nodePipe.ts)
  'Internal Binding stream_wrap',
  'NativeModule vm', // the entry compiles the bundle with its code cache
].sort();

/** Records, at exit, what the main module added to the loaded builtins and to require.cache. */
const PROBE = `
const before = new Set(process.moduleLoadList);
const self = __filename;
process.on('exit', () => {
  const loaded = process.moduleLoadList.filter((name) => !before.has(name));
  const files = Object.keys(require.cache).filter((file) => file !== self);
  require('node:fs').writeFileSync(process.env.PROBE_OUT, JSON.stringify({ loaded, files }));
});
`;

let home: TempHome;
let probe: string;

beforeAll(async () => {
  home = makeTempHome();
  mkdirSync(home.home, { recursive: true, mode: 0o700 });
  writeFileSync(home.paths.config, JSON.stringify({ notifications: false, web: { listen: '127.0.0.1:0' }, policy: { tools: { 'claude/Bash': 'allow' } } }), { mode: 0o600 });
  probe = join(home.home, '..', 'probe.cjs');
  writeFileSync(probe, PROBE);
  await home.startDaemon();
});
afterAll(async () => {
  await home.cleanup();
});

/** Runs `node [nodeArgs] assent-hook.js args` with `input` piped to stdin, as an agent runs it (or a descriptor as stdin). */
function runEntry(nodeArgs: string[], args: string[], input: string | number, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    // A number is a descriptor the hook gets as its stdin, as it is.
    const child = spawn(process.execPath, [...nodeArgs, HOOK_ENTRY, ...args], { env, stdio: [typeof input === 'number' ? input : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (typeof input === 'string') child.stdin?.end(input);
  });
}

describe('the built hook entry (SPEC §14, R-HOOK-8)', () => {
  it('is a CommonJS entry and one bundle that needs no other module, with a code cache this Node accepts', () => {
    expect(JSON.parse(readFileSync(join(REPO_ROOT, 'dist', 'bin', 'package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    const bundle = readFileSync(join(REPO_ROOT, 'dist', 'bin', 'assent-hook.bundle.js'), 'utf8');
    expect(bundle).toContain('Bundled by scripts/bundleHook.mjs');
    expect(bundle).not.toMatch(/\brequire\(|\bimport\(|\bimport\.meta\b/);
    const { compileBundle } = createRequire(import.meta.url)(HOOK_ENTRY) as { compileBundle: () => { script: { cachedDataRejected?: boolean } } };
    expect(compileBundle().script.cachedDataRejected).toBe(false);
  });

  // On a Node major without the pipe handle the hook loads net and the stream modules (nodePipe.ts).
  it.skipIf(!PIPE_HANDLE_NODE_MAJORS.includes(process.versions.node.split('.')[0] ?? ''))('allows, loading no module file but the entry and no builtin beyond ALLOW_PATH_LOADS', async () => {
    const out = join(home.home, '..', 'probe.json');
    const result = await runEntry(['--require', probe], ['claude-code', '--timeout', '136'], JSON.stringify(shellEvent('claude-code', 'git status')), { ...home.env, PROBE_OUT: out });
    expect(result.code).toBe(0);
    expect(answerOf(result.stdout).decision).toBe('allow');
    expect(result.stderr).toBe('');
    const { loaded, files } = JSON.parse(readFileSync(out, 'utf8')) as { loaded: string[]; files: string[] };
    expect(files).toEqual([HOOK_ENTRY]);
    expect(loaded.sort()).toEqual(ALLOW_PATH_LOADS);
    rmSync(out);
  });

  it('reads an event from a file on stdin too (no pipe to poll), and answers the same', async () => {
    const event = join(home.home, '..', 'event.json');
    writeFileSync(event, JSON.stringify(shellEvent('claude-code', 'git status')));
    const fd = openSync(event, 'r');
    try {
      const result = await runEntry([], ['claude-code'], fd, home.env);
      expect(result.code).toBe(0);
      expect(answerOf(result.stdout).decision).toBe('allow');
    } finally {
      closeSync(fd);
    }
  });

  it('R-HOOK-4 answers deny (exit 2) when it cannot even start, and after a call only says so (exit 0)', async () => {
    // A builtin that cannot be had while the hook's modules load: the bundle's import fails as a whole.
    const broken = join(home.home, '..', 'broken.cjs');
    writeFileSync(broken, "process.getBuiltinModule = () => { throw new Error('no builtins today'); };\n");
    const before = await runEntry(['--require', broken], ['claude-code'], JSON.stringify(shellEvent('claude-code', 'git status')), home.env);
    expect(before.code).toBe(2);
    const answer = answerOf(before.stdout);
    expect(answer.decision).toBe('deny');
    expect(answer.reason).toMatch(/the hook could not start \(no builtins today\)/);
    expect(before.stderr.trim()).toBe(answer.reason);
    const after = await runEntry(['--require', broken], ['claude-code', '--after'], '{}', home.env);
    expect(after.code).toBe(0);
    expect(after.stdout).toBe('{}\n');
    expect(after.stderr).toMatch(/not recorded \(the hook could not start: no builtins today\)/);
  });
});
