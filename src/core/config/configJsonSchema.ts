// A JSON Schema of config.json for editors (issue 37 item 5), generated from the
// zod schemas the loader uses, so completion and checking in an editor follow
// the same keys, types and ranges. What JSON Schema cannot say stays with the
// loader: cross-field checks (a tool id naming a configured server) and the
// words of its messages. `npm run config-schema` writes schema/config.schema.json.
import { z } from 'zod';
import { ConfigSchema } from './config.js';

type JsonSchema = Record<string, unknown>;

/** Where the committed schema lives in the package, relative to its root. */
export const CONFIG_SCHEMA_PATH = 'schema/config.schema.json';

/** An object schema with named keys (not a record): a key it does not name is unknown to the loader too. */
function closeObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) closeObjects(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as JsonSchema;
  if (schema['type'] === 'object' && schema['properties'] !== undefined && schema['additionalProperties'] === undefined) schema['additionalProperties'] = false;
  for (const value of Object.values(schema)) closeObjects(value);
}

/**
 * config.json's JSON Schema (draft 2020-12): what the loader accepts as input,
 * defaults shown, unknown keys refused (the loader refuses them inside
 * `policy` and ignores them with a warning elsewhere), and a `$schema` key
 * that names this schema.
 */
export function configJsonSchema(): JsonSchema {
  const generated = z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  const properties = generated['properties'] as Record<string, JsonSchema>;
  // `notifications: true|false` is read as `{"os": …}` before the object schema (notificationsConfig.ts).
  const notifications = properties['notifications'] as JsonSchema;
  const { default: notificationsDefault, ...notificationsObject } = notifications;
  properties['notifications'] = {
    default: notificationsDefault,
    anyOf: [{ type: 'boolean', description: 'OS notifications on (true) or off (false), no push targets' }, notificationsObject],
  };
  closeObjects(generated);
  const { $schema: draft, ...rest } = generated;
  return {
    $schema: draft,
    title: 'assent config.json',
    description: 'The configuration of assent (docs/configuration.md). `assent config check` judges a file with the same rules and more.',
    ...rest,
    properties: { $schema: { type: 'string', description: 'The JSON Schema of this file, for editors; assent ignores it' }, ...properties },
  };
}

/** The schema as the committed file holds it. */
export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
