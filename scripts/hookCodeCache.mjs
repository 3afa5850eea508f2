// One trial allow of the bundled hook, to fill its V8 code cache
// (dist/bin/assent-hook.bundle.cache, read by dist/bin/assent-hook.js): the
// bundle is compiled as the entry compiles it, runs the hook on the event on
// stdin against a stand-in daemon in this process that allows everything, and
// at the hook's exit V8's code — what the allow path compiled — is written.
// Run by scripts/bundleHook.mjs; stdout is the hook's answer.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';

const binDir = join(import.meta.dirname, '..', 'dist', 'bin');
const { compileBundle } = createRequire(import.meta.url)(join(binDir, 'assent-hook.js'));

// Under /tmp: a Unix socket path must stay short.
const root = mkdtempSync('/tmp/assent-build-');
const home = join(root, 'h');
mkdirSync(home, { mode: 0o700 });
process.env.HOME = root;
process.env.ASSENT_HOME = home;

/** Answers the hook's hello and its authorize: allow. */
const daemon = createServer((socket) => {
  let buffered = '';
  socket.on('data', (chunk) => {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const request = JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      const result = request.method === 'agents.authorize' ? { decision: 'allow', message: 'assent: the build trial allows it' } : { version: request.params?.version };
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: request.id, result })}\n`);
    }
  });
});

daemon.listen(join(home, 'daemon.sock'), () => {
  const bundle = compileBundle(binDir);
  if (bundle === undefined) throw new Error(`no bundle in ${binDir}; run \`npm run build\``);
  process.on('exit', () => {
    writeFileSync(join(binDir, 'assent-hook.bundle.cache'), bundle.script.createCachedData());
    rmSync(root, { recursive: true, force: true });
  });
  void bundle.run().runHookProcess(['claude-code', '--timeout', '136']);
});
