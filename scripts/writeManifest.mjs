// Regenerates docs/operations.json from the built operation declarations
// (R-OPS-2). Run with `npm run manifest` after changing an operation.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const out = execFileSync(process.execPath, [join(root, 'dist', 'bin', 'assent.js'), 'operations', '--json'], { encoding: 'utf8' });
const { data } = JSON.parse(out);
writeFileSync(join(root, 'docs', 'operations.json'), `${JSON.stringify(data, null, 2)}\n`);
console.log(`docs/operations.json: ${data.length ?? Object.keys(data).length} operations`);
