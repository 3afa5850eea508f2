// `assent operations [--json]` (R-OPS-2): the generated operation manifest,
// built from the declarations without starting a daemon.
import type { Command } from 'commander';
import { printJsonOk } from '../output.js';

export function registerOperationsCommand(program: Command): void {
  program
    .command('operations')
    .description('List every operation with its class and the heads that expose it (docs/operations.json)')
    .option('--json', 'print the manifest as one JSON document')
    .action(async (options: { json?: boolean }) => {
      const { declaredManifest } = await import('../../../operations/manifest.js');
      const manifest = declaredManifest();
      if (options.json) return printJsonOk(manifest, { count: manifest.length });
      for (const entry of manifest) {
        const heads = (['cli', 'rpc', 'http', 'mcp'] as const).filter((head) => entry.exposure[head] === true).join(',');
        process.stdout.write(`${entry.name.padEnd(18)} ${entry.class.padEnd(15)} ${heads}\n`);
      }
      return undefined;
    });
}
