// Parsing of the two exec action files (SPEC §6): request schema 1 and policy
// schema 2, from raw bytes, with every limit of R-EXEC-1. Pure: the bytes come
// from src/exec/readLimitedFile, which owns the file-system checks.
import { isPlainObject } from '../base/plainObject.js';
import type { ExecAction } from './action.js';
import { canonicalJson } from '../base/canonical.js';
import { AssentError } from '../base/errors.js';

/** Largest action file accepted, in bytes (R-EXEC-1). */
export const MAX_EXEC_FILE_BYTES = 64 * 1024;
/** Deepest container nesting accepted; the top-level value is depth 1. */
export const MAX_JSON_DEPTH = 8;
/** Most JSON values (containers and scalars, keys not counted) accepted. */
export const MAX_JSON_NODES = 2048;
export const MAX_EXEC_ARGS = 128;
export const MAX_EXEC_ENV = 64;
export const MAX_POLICY_RULES = 32;

export type ExecDecision = 'allow' | 'ask' | 'deny';

export interface ExecRequest {
  schemaVersion: 1;
  action: ExecAction;
}

export interface ExecRule {
  action: ExecAction;
  decision: ExecDecision;
}

export interface ExecPolicy {
  schemaVersion: 2;
  defaultDecision: 'deny' | 'ask';
  rules: ExecRule[];
}

/** Which action file a violation was found in; named in every message. */
export type ExecFileLabel = 'request' | 'policy';

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** A typed refusal naming the file, the field and a stable reason code; values are never echoed. */
export function execFileError(file: ExecFileLabel, field: string, reason: string, problem: string): AssentError {
  return new AssentError(
    'invalid_input',
    `The ${file} file is refused: ${field} ${problem} (${reason}). Fix the ${file} file and run the command again.`,
    { details: { reason, field, file } },
  );
}

/** Decodes strict UTF-8 JSON within the size, depth and node limits shared by both files. */
export function decodeLimitedJson(bytes: Uint8Array, file: ExecFileLabel): unknown {
  if (bytes.byteLength > MAX_EXEC_FILE_BYTES) {
    throw execFileError(file, '(file)', 'too-large', `is ${bytes.byteLength} bytes; at most ${MAX_EXEC_FILE_BYTES} are allowed`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw execFileError(file, '(file)', 'invalid-utf8', 'is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw execFileError(file, '(file)', 'invalid-json', 'is not valid JSON');
  }
  checkShape(value, file);
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) {
    const where = duplicate.length === 0 ? '(top level)' : duplicate.join('.');
    const envDuplicate = duplicate[duplicate.length - 1] === 'env';
    throw execFileError(
      file,
      where,
      envDuplicate ? 'duplicate-env-name' : 'duplicate-key',
      envDuplicate ? 'repeats a name (compared ignoring case)' : 'repeats a key',
    );
  }
  return value;
}

type ScanFrame = { kind: 'object'; keys: Set<string>; expectKey: boolean; lastKey: string | undefined } | { kind: 'array' };

/**
 * JSON.parse keeps the last of two equal keys, so a reviewer and a program could
 * read different values. This scan of already-valid JSON finds any repeated key
 * and returns the key path of the object holding it.
 */
function findDuplicateKey(text: string): string[] | undefined {
  const stack: ScanFrame[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '{') stack.push({ kind: 'object', keys: new Set(), expectKey: true, lastKey: undefined });
    else if (c === '[') stack.push({ kind: 'array' });
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',' && top?.kind === 'object') top.expectKey = true;
    else if (c === ':' && top?.kind === 'object') top.expectKey = false;
    else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.kind === 'object' && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return keyPathOf(stack);
        top.keys.add(key);
        top.lastKey = key;
      }
      i = j;
    }
  }
  return undefined;
}

/** Names of the keys leading to the innermost open object (the one holding the duplicate). */
function keyPathOf(stack: ScanFrame[]): string[] {
  const names: string[] = [];
  for (let k = 0; k < stack.length - 1; k += 1) {
    const frame = stack[k];
    if (frame?.kind === 'object' && frame.lastKey !== undefined) names.push(frame.lastKey);
  }
  return names;
}

/** Iterative walk so a hostile nesting cannot exhaust the stack before the limit is seen. */
function checkShape(root: unknown, file: ExecFileLabel): void {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 1 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop() as { value: unknown; depth: number };
    nodes += 1;
    if (nodes > MAX_JSON_NODES) {
      throw execFileError(file, '(file)', 'too-many-nodes', `has more than ${MAX_JSON_NODES} JSON values`);
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) {
      throw execFileError(file, '(file)', 'too-deep', `nests deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
}

function requireExactKeys(value: unknown, keys: readonly string[], file: ExecFileLabel, field: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw execFileError(file, field, 'wrong-type', 'must be a JSON object');
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) {
      // The key name comes from the file; it is escaped-safe because only [A-Za-z0-9_] is echoed.
      const shown = /^[A-Za-z0-9_]{1,64}$/.test(key) ? `"${key}"` : 'a key';
      throw execFileError(file, field, 'unknown-key', `has unknown ${shown}; allowed keys are ${keys.join(', ')}`);
    }
  }
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) {
      throw execFileError(file, `${field}.${key}`, 'missing-key', 'is missing');
    }
  }
  return value;
}

function requireAbsolutePath(value: unknown, file: ExecFileLabel, field: string, relativeReason: string): string {
  if (typeof value !== 'string') throw execFileError(file, field, 'wrong-type', 'must be a string');
  if (value.includes('\u0000')) throw execFileError(file, field, 'nul-byte', 'contains a NUL character');
  if (value.startsWith('//') || value.startsWith('\\\\')) {
    throw execFileError(file, field, 'network-path', 'must not start with // or \\\\');
  }
  if (!value.startsWith('/')) throw execFileError(file, field, relativeReason, 'must be an absolute path starting with /');
  return value;
}

/** Validates one complete action; used for the request and for every policy rule. */
export function parseExecAction(value: unknown, file: ExecFileLabel, field: string): ExecAction {
  const raw = requireExactKeys(value, ['executable', 'cwd', 'args', 'env'], file, field);
  const executable = requireAbsolutePath(raw['executable'], file, `${field}.executable`, 'relative-executable');
  const cwd = requireAbsolutePath(raw['cwd'], file, `${field}.cwd`, 'relative-cwd');
  const args = raw['args'];
  if (!Array.isArray(args)) throw execFileError(file, `${field}.args`, 'wrong-type', 'must be an array of strings');
  if (args.length > MAX_EXEC_ARGS) {
    throw execFileError(file, `${field}.args`, 'too-many-args', `has ${args.length} entries; at most ${MAX_EXEC_ARGS} are allowed`);
  }
  args.forEach((arg, index) => {
    if (typeof arg !== 'string') throw execFileError(file, `${field}.args[${index}]`, 'wrong-type', 'must be a string');
    if (arg.includes('\u0000')) throw execFileError(file, `${field}.args[${index}]`, 'nul-byte', 'contains a NUL character');
  });
  const env = raw['env'];
  if (!isPlainObject(env)) throw execFileError(file, `${field}.env`, 'wrong-type', 'must be an object of strings');
  const names = Object.keys(env);
  if (names.length > MAX_EXEC_ENV) {
    throw execFileError(file, `${field}.env`, 'too-many-env', `has ${names.length} entries; at most ${MAX_EXEC_ENV} are allowed`);
  }
  // Case-folded duplicates are checked first: `FOO` and `Foo` is a duplicate before it is a bad name.
  const seen = new Set<string>();
  names.forEach((name, index) => {
    const folded = name.toUpperCase();
    if (seen.has(folded)) {
      throw execFileError(file, `${field}.env entry ${index + 1}`, 'duplicate-env-name', 'repeats a name (compared ignoring case)');
    }
    seen.add(folded);
  });
  names.forEach((name, index) => {
    const where = `${field}.env entry ${index + 1}`;
    if (!ENV_NAME.test(name)) throw execFileError(file, where, 'invalid-env-name', 'has a name that does not match ^[A-Z_][A-Z0-9_]*$');
    const v = env[name];
    if (typeof v !== 'string') throw execFileError(file, where, 'wrong-type', 'must have a string value');
    if (v.includes('\u0000')) throw execFileError(file, where, 'nul-byte', 'has a value containing a NUL character');
  });
  return { executable, cwd, args: args as string[], env: { ...(env as Record<string, string>) } };
}

/** Request file, schema 1: exactly `{schemaVersion: 1, action}`. */
export function parseExecRequest(bytes: Uint8Array): ExecRequest {
  const raw = requireExactKeys(decodeLimitedJson(bytes, 'request'), ['schemaVersion', 'action'], 'request', '(top level)');
  if (raw['schemaVersion'] !== 1) throw execFileError('request', 'schemaVersion', 'unsupported-schema', 'must be the number 1');
  return { schemaVersion: 1, action: parseExecAction(raw['action'], 'request', 'action') };
}

const DECISIONS: readonly ExecDecision[] = ['allow', 'ask', 'deny'];

/** Policy file, schema 2: exactly `{schemaVersion: 2, defaultDecision, rules}`; equivalent rules are an error. */
export function parseExecPolicy(bytes: Uint8Array): ExecPolicy {
  const raw = requireExactKeys(decodeLimitedJson(bytes, 'policy'), ['schemaVersion', 'defaultDecision', 'rules'], 'policy', '(top level)');
  if (raw['schemaVersion'] !== 2) throw execFileError('policy', 'schemaVersion', 'unsupported-schema', 'must be the number 2');
  const defaultDecision = raw['defaultDecision'];
  if (defaultDecision !== 'deny' && defaultDecision !== 'ask') {
    throw execFileError('policy', 'defaultDecision', 'invalid-decision', 'must be "deny" or "ask"');
  }
  const rulesRaw = raw['rules'];
  if (!Array.isArray(rulesRaw)) throw execFileError('policy', 'rules', 'wrong-type', 'must be an array');
  if (rulesRaw.length > MAX_POLICY_RULES) {
    throw execFileError('policy', 'rules', 'too-many-rules', `has ${rulesRaw.length} entries; at most ${MAX_POLICY_RULES} are allowed`);
  }
  const seen = new Map<string, number>();
  const rules = rulesRaw.map((ruleRaw: unknown, index): ExecRule => {
    const field = `rules[${index}]`;
    const rule = requireExactKeys(ruleRaw, ['action', 'decision'], 'policy', field);
    const action = parseExecAction(rule['action'], 'policy', `${field}.action`);
    const decision = rule['decision'];
    if (typeof decision !== 'string' || !DECISIONS.includes(decision as ExecDecision)) {
      throw execFileError('policy', `${field}.decision`, 'invalid-decision', 'must be "allow", "ask" or "deny"');
    }
    const key = canonicalJson(action);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw execFileError('policy', field, 'duplicate-rule', `has the same action as rules[${earlier}]; remove one of them`);
    }
    seen.set(key, index);
    return { action, decision: decision as ExecDecision };
  });
  return { schemaVersion: 2, defaultDecision, rules };
}
