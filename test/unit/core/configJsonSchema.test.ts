// Issue 37 item 5: config.json has a JSON Schema for editors, generated from the
// zod schemas the loader uses; the committed file is the generated one, the
// configurations the docs show and `assent init` writes validate against it,
// and a typo'd key fails both the schema and `config check`'s rules.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ConfigSchema, DEFAULT_CONFIG, validateConfig } from '../../../src/core/config/config.js';
import { CONFIG_SCHEMA_PATH, configJsonSchemaText } from '../../../src/core/config/configJsonSchema.js';
import { defaultConfigDocument, installedConfigSchemaUrl } from '../../../src/heads/cli/commands/init.js';

const root = join(import.meta.dirname, '../../..');
const committed = readFileSync(join(root, CONFIG_SCHEMA_PATH), 'utf8');
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(JSON.parse(committed) as object);

/** Every ```json block of docs/*.md that is a whole config.json: an object whose keys are all top-level config keys. */
function docExampleConfigs(): { where: string; value: Record<string, unknown> }[] {
  const topKeys = new Set([...Object.keys(ConfigSchema.shape), '$schema']);
  const examples: { where: string; value: Record<string, unknown> }[] = [];
  for (const name of readdirSync(join(root, 'docs')).filter((file) => file.endsWith('.md'))) {
    const text = readFileSync(join(root, 'docs', name), 'utf8');
    for (const match of text.matchAll(/```json\n([\s\S]*?)```/g)) {
      let value: unknown;
      try {
        value = JSON.parse(match[1] ?? '');
      } catch {
        continue; // a fragment or an annotated sketch, not a whole file
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) continue;
      if (!Object.keys(value).every((key) => topKeys.has(key))) continue;
      examples.push({ where: `docs/${name} line ${text.slice(0, match.index).split('\n').length}`, value: value as Record<string, unknown> });
    }
  }
  return examples;
}

describe('config.json has a JSON Schema for editors (issue 37 item 5)', () => {
  it(`the committed ${CONFIG_SCHEMA_PATH} is the one the zod schemas generate now (run \`npm run config-schema\` when this fails)`, () => {
    expect(committed).toBe(configJsonSchemaText());
  });

  it('what assent init writes validates, its "$schema" names the shipped file, and the loader reads it as the defaults', () => {
    const document = defaultConfigDocument();
    expect(document['$schema']).toBe(installedConfigSchemaUrl());
    expect(readFileSync(fileURLToPath(installedConfigSchemaUrl()), 'utf8')).toBe(committed);
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    expect(validateConfig(document)).toEqual({ config: DEFAULT_CONFIG, problems: [] });
  });

  it('a sample config with servers, policy, notifications, web and audit export validates against the schema and the loader', () => {
    const sample = {
      $schema: './config.schema.json',
      servers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] }, api: { url: 'https://mcp.example.com/mcp' } },
      policy: { default: 'prompt', tools: { 'fs/write_file': 'deny' }, quorum: { 'fs/write_file': 2 }, consentTimeoutSeconds: 120 },
      notifications: false,
      web: { listen: '127.0.0.1:7788' },
      approvals: { fourEyes: true },
      auditRetentionDays: 90,
    };
    expect(validate(sample), JSON.stringify(validate.errors)).toBe(true);
    expect(validateConfig(sample).problems).toEqual([]);
    expect(validate({ notifications: { os: false, ntfy: { url: 'https://ntfy.sh', topic: 'assent-x' } } }), JSON.stringify(validate.errors)).toBe(true);
  });

  it('every whole config.json the docs show validates against the schema', () => {
    const examples = docExampleConfigs();
    expect(examples.length).toBeGreaterThan(3);
    const failing = examples.filter(({ value }) => !validate(value)).map(({ where }) => `${where}: ${JSON.stringify(validate.errors)}`);
    expect(failing).toEqual([]);
  });

  it('a typo\'d key fails the schema and config check alike; a wrong type and an out-of-range number fail the schema', () => {
    const typo = { policy: { defualt: 'deny' } };
    expect(validate(typo)).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ instancePath: '/policy', keyword: 'additionalProperties', params: { additionalProperty: 'defualt' } });
    expect(validateConfig(typo).problems).toMatchObject([{ severity: 'error', path: 'policy.defualt' }]);
    expect(validate({ policy: { default: 'maybe' } })).toBe(false);
    expect(validate({ policy: { consentTimeoutSeconds: 100_000 } })).toBe(false);
    expect(validate({ $schema: 7 })).toBe(false);
    expect(validateConfig({ $schema: 7 }).problems).toMatchObject([{ severity: 'error', path: '$schema' }]);
  });
});
