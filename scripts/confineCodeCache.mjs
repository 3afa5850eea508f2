// One trial run of the bundled confine entry, to fill its V8 code cache
// (dist/bin/assent-confine.bundle.cache, read by dist/bin/assent-confine.js):
// the bundle is compiled as the entry compiles it and runs `true` confined
// from a temporary project, and at exit V8's code — what the run compiled —
// is written. The build machine need not have a working bubblewrap: the
// trial's PATH starts with a stand-in `bwrap` that runs the command after
// `--` unconfined, which is all a code cache needs (the code, not the
// sandbox). Run by scripts/bundleConfine.mjs; exits with the run's code.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const binDir = join(import.meta.dirname, '..', 'dist', 'bin');
const { compileBundle } = createRequire(import.meta.url)(join(binDir, 'assent-confine.js'));

const root = mkdtempSync('/tmp/assent-build-');
const home = join(root, 'h');
const project = join(home, 'project');
const bin = join(root, 'bin');
mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
mkdirSync(join(project, 'src'));
mkdirSync(bin);
writeFileSync(join(project, '.git', 'HEAD'), 'ref: refs/heads/main\n');
writeFileSync(join(project, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
writeFileSync(join(project, 'package.json'), '{"name":"trial","scripts":{"test":"true"}}\n');
writeFileSync(join(project, '.env'), 'TOKEN=x\n');
writeFileSync(join(bin, 'bwrap'), '#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n');
chmodSync(join(bin, 'bwrap'), 0o755);
process.env.HOME = home;
process.env.ASSENT_HOME = join(home, '.assent');
process.env.PATH = `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`;
process.chdir(project);

const bundle = compileBundle(binDir);
if (bundle === undefined) throw new Error(`no bundle in ${binDir}; run \`npm run build\``);
process.on('exit', () => {
  writeFileSync(join(binDir, 'assent-confine.bundle.cache'), bundle.script.createCachedData());
  rmSync(root, { recursive: true, force: true });
});
process.exitCode = await bundle.run().runConfineArgv(['--command', 'true']);
