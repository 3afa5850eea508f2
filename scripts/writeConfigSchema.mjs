// Regenerates schema/config.schema.json, config.json's JSON Schema for editors,
// from the built zod schemas (issue 37 item 5). Run with `npm run config-schema`
// after changing a config schema; test/unit/core/configJsonSchema.test.ts fails
// until the committed file is current.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const text = execFileSync(process.execPath, [join(root, 'dist', 'bin', 'assent.js'), 'config', 'schema'], { encoding: 'utf8' });
mkdirSync(join(root, 'schema'), { recursive: true });
writeFileSync(join(root, 'schema', 'config.schema.json'), text);
console.log(`schema/config.schema.json: ${Object.keys(JSON.parse(text).properties).length} top-level keys`);
