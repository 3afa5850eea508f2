// `npm run queries`: compiles every query and table written once in
// src/journal/sql/queries.ts (kysely) for both engines and writes
// src/journal/sql/compiled.ts, which the engines read at run time.
// test/unit/journal/compiledQueries.test.ts fails while it is stale.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const { compileAll, renderCompiled } = await import(join(root, 'dist', 'journal', 'sql', 'queries.js'));
const target = join(root, 'src', 'journal', 'sql', 'compiled.ts');
writeFileSync(target, renderCompiled(compileAll()));
console.log(`written ${target}`);
