// What `assent init --merge` adds to a config.json and what `assent init --force`
// would discard from one (R-POL-8): pure functions over parsed JSON. Sections are
// the top-level keys and the keys of `policy`; a section the file has is kept
// whole, even where it leaves parts to the defaults.
import { canonicalJson } from '../base/canonical.js';
import { escapeText } from '../base/escape.js';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sections whose keys are sections too (a missing one of them is added on its own). */
const NESTED_SECTIONS = new Set(['policy']);

/** `existing` with every section of `defaults` it lacks added at the end; the names added, as `policy.paths`. */
export function mergeConfigDefaults(existing: JsonObject, defaults: JsonObject): { merged: JsonObject; added: string[] } {
  const merged: JsonObject = structuredClone(existing);
  const added: string[] = [];
  for (const [key, value] of Object.entries(defaults)) {
    const have = merged[key];
    if (have === undefined) {
      merged[key] = structuredClone(value);
      added.push(key);
    } else if (NESTED_SECTIONS.has(key) && isObject(have) && isObject(value)) {
      for (const [inner, innerValue] of Object.entries(value)) {
        if (have[inner] !== undefined) continue;
        have[inner] = structuredClone(innerValue);
        added.push(`${key}.${inner}`);
      }
    }
  }
  return { merged, added };
}

/**
 * What replacing `existing` with `defaults` loses: each leaf (arrays as one
 * value) the file has with a value the defaults do not, by its dotted path.
 */
export function discardedByDefaults(existing: unknown, defaults: unknown, path = ''): string[] {
  if (isObject(existing) && isObject(defaults)) {
    return Object.entries(existing).flatMap(([key, value]) => discardedByDefaults(value, defaults[key], path === '' ? escapeText(key) : `${path}.${escapeText(key)}`));
  }
  if (isObject(existing) && defaults === undefined) return Object.keys(existing).length === 0 ? [] : [path];
  if (defaults !== undefined && canonicalJson(existing) === canonicalJson(defaults)) return [];
  return [path];
}
