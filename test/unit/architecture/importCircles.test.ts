// Issue 37 item 1: no import circle anywhere in src/. Two files that import
// each other (a type counts too) cannot be read, tested or moved one without
// the other; the shared type or function belongs in a file both import. The
// graph is the TypeScript compiler's own module resolution over every import,
// `import type`, `export … from` and `import()` of src/.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importCircles, type ImportCircle } from '../../helpers/importCircles.js';
import { moduleGraph } from '../../helpers/moduleGraph.js';

const root = join(import.meta.dirname, '../../..');
const srcDir = join(root, 'src');

function describeCircle(circle: ImportCircle): string {
  const named = (file: string): string => `src/${file}`;
  return (
    `import circle among ${circle.files.map(named).join(', ')} (${circle.path.map(named).join(' → ')}); ` +
    'move what both sides share into a file both import, or pass what the lower file needs as an interface'
  );
}

describe('no import circle in src/ (issue 37 item 1)', () => {
  it('the import graph of src/, as the compiler resolves it, has no circle', () => {
    const graph = moduleGraph(srcDir, root);
    // The graph is the real one: hundreds of files, and the arrows a reader knows are there.
    expect(graph.size).toBeGreaterThan(300);
    expect(graph.get('heads/mcp/gateway.ts')).toContain('heads/mcp/relay.ts');
    expect(importCircles(graph).map(describeCircle)).toEqual([]);
  });

  it('the check itself finds a circle added later, on a synthetic graph, and names every file of it in order', () => {
    const graph = new Map<string, string[]>([
      ['gateway.ts', ['relay.ts', 'gate.ts']],
      ['relay.ts', ['callPipeline.ts', 'routing.ts', 'wire.ts']],
      ['callPipeline.ts', ['routing.ts', 'wire.ts']],
      ['routing.ts', ['gateway.ts', 'wire.ts']],
      ['gate.ts', []],
      ['wire.ts', []],
      ['self.ts', ['self.ts']],
      ['x.ts', ['y.ts', 'elsewhere/outside.ts']],
      ['y.ts', ['x.ts']],
    ]);
    expect(importCircles(graph)).toEqual([
      { files: ['callPipeline.ts', 'gateway.ts', 'relay.ts', 'routing.ts'], path: ['callPipeline.ts', 'routing.ts', 'gateway.ts', 'relay.ts', 'callPipeline.ts'] },
      { files: ['self.ts'], path: ['self.ts', 'self.ts'] },
      { files: ['x.ts', 'y.ts'], path: ['x.ts', 'y.ts', 'x.ts'] },
    ]);
    expect(describeCircle({ files: ['x.ts', 'y.ts'], path: ['x.ts', 'y.ts', 'x.ts'] })).toBe(
      'import circle among src/x.ts, src/y.ts (src/x.ts → src/y.ts → src/x.ts); ' +
        'move what both sides share into a file both import, or pass what the lower file needs as an interface',
    );
    // Untied (routing no longer imports the gateway), nothing is reported; a chain is not a circle.
    graph.set('routing.ts', ['wire.ts']);
    graph.delete('self.ts');
    graph.set('y.ts', []);
    expect(importCircles(graph)).toEqual([]);
    const chain = new Map(Array.from({ length: 5000 }, (_, i) => [`f${i}.ts`, i + 1 < 5000 ? [`f${i + 1}.ts`] : []] as [string, string[]]));
    expect(importCircles(chain)).toEqual([]);
    chain.set('f4999.ts', ['f0.ts']);
    expect(importCircles(chain)[0]?.path).toHaveLength(5001);
  });

  describe('the graph reads every kind of import the way the compiler resolves it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'assent-import-graph-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('type-only imports, re-exports, import() and a file in a subfolder count; a comment, a string and a package do not', () => {
      const src = join(dir, 'src');
      mkdirSync(join(src, 'deep'), { recursive: true });
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      writeFileSync(
        join(src, 'a.ts'),
        [
          "import type { B } from './b.js';",
          "export { C } from './deep/c.js';",
          "export type { D } from './d.js';",
          "const e = await import('./e.js');",
          "// import { f } from './f.js';",
          "const text = \"import { g } from './g.js'\";",
          "import { z } from 'zod';",
        ].join('\n'),
      );
      for (const name of ['b', 'd', 'e', 'f', 'g']) writeFileSync(join(src, `${name}.ts`), "import { a } from './a.js';\n");
      writeFileSync(join(src, 'deep/c.ts'), "import { a } from '../a.js';\n");
      const graph = moduleGraph(src, dir);
      expect([...(graph.get('a.ts') ?? [])].sort()).toEqual(['b.ts', 'd.ts', 'deep/c.ts', 'e.ts']);
      expect(graph.get('deep/c.ts')).toEqual(['a.ts']);
      // So each of them closes a circle with a.ts; f.ts and g.ts, never imported, do not.
      expect(importCircles(graph).map((circle) => circle.files)).toEqual([['a.ts', 'b.ts', 'd.ts', 'deep/c.ts', 'e.ts']]);
    });
  });
});
