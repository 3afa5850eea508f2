// What free-form JSON (tool arguments, callers, exec actions) may contain so
// that every reader sees the same value: the approver's preview, the digest,
// the policy and the upstream. Checked at every edge before anything decides.
/**
 * Deepest nesting of objects and arrays accepted, counting the outermost
 * value as level 1. Real tool arguments are a few levels deep; the bound keeps
 * recursive readers (canonical JSON, previews, schema validators) far from
 * their stack limits.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a value was refused; `path` is where, as JSON Pointer segments. */
export interface JsonProblem {
  kind: 'proto_key' | 'lone_surrogate' | 'too_deep' | 'not_json';
  path: (string | number)[];
  /** What is wrong there and why it matters, without the path. */
  message: string;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** True when the text has a UTF-16 surrogate without its partner, which UTF-8 and RFC 8785 cannot encode. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** The text with each lone surrogate replaced by U+FFFD, for informative fields that must not be refused. */
export function toWellFormed(text: string): string {
  return text.replace(/\p{Cs}/gu, '\ufffd');
}

/**
 * The first thing in `value` that not every JSON reader would read the same:
 * an own `__proto__` key (dropped or turned into a prototype by object-building
 * parsers, kept by others), a lone surrogate in a key or a string (not
 * encodable as UTF-8, so no canonical bytes), nesting deeper than `maxDepth`,
 * or something that is not JSON at all (a non-finite number, undefined, a
 * function). Undefined when the value is plain, portable JSON.
 */
export function findJsonProblem(value: unknown, maxDepth: number = MAX_JSON_DEPTH): JsonProblem | undefined {
  // Almost every value is clean: say so without building a path per node, then look for the problem only when there is one.
  if (isPortable(value, maxDepth)) return undefined;
  // Iterative, so the check itself has no stack limit; depth is bounded anyway.
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: (string | number)[] };
    if (typeof current === 'string') {
      if (hasLoneSurrogate(current)) return { kind: 'lone_surrogate', path, message: 'the string has a lone UTF-16 surrogate, which has no UTF-8 encoding' };
      continue;
    }
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return { kind: 'not_json', path, message: 'the number is not finite, which JSON cannot represent' };
      continue;
    }
    if (current === null || typeof current === 'boolean') continue;
    if (typeof current !== 'object') return { kind: 'not_json', path, message: `a ${typeof current} is not a JSON value` };
    if (path.length + 1 > maxDepth) {
      return { kind: 'too_deep', path, message: `objects and arrays nest deeper than ${maxDepth} levels` };
    }
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index -= 1) stack.push({ value: current[index], path: [...path, index] });
      continue;
    }
    const keys = Object.keys(current);
    for (const key of keys) {
      if (key === '__proto__') {
        return { kind: 'proto_key', path: [...path, key], message: 'the key "__proto__" is not accepted: JSON readers disagree on it (some drop it, some keep it), so what was shown and what would run could differ' };
      }
      if (hasLoneSurrogate(key)) return { kind: 'lone_surrogate', path: [...path, key], message: 'the key has a lone UTF-16 surrogate, which has no UTF-8 encoding' };
    }
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index] as string;
      stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return undefined;
}

/**
 * True exactly when findJsonProblem finds nothing, allocating nothing on the
 * way (it runs per call on the gateway and per audit record in the daemon).
 * Recursion is bounded: it stops at `levelsLeft` levels, at most MAX_JSON_DEPTH in practice.
 */
function isPortable(value: unknown, levelsLeft: number): boolean {
  switch (typeof value) {
    case 'string':
      return !hasLoneSurrogate(value);
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (levelsLeft < 1) return false;
      if (Array.isArray(value)) {
        for (const item of value as unknown[]) if (!isPortable(item, levelsLeft - 1)) return false;
        return true;
      }
      for (const key of Object.keys(value)) {
        if (key === '__proto__' || hasLoneSurrogate(key)) return false;
        if (!isPortable((value as Record<string, unknown>)[key], levelsLeft - 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** A path as a JSON Pointer for messages; lone surrogates are shown as `\uXXXX` and very long paths are shortened. */
export function jsonPointerOf(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(the whole value)';
  const shown = path.length > 12 ? [...path.slice(0, 10), '…', ...path.slice(-1)] : path;
  return shown
    .map((segment) =>
      `/${String(segment)
        .replace(/~/g, '~0')
        .replace(/\//g, '~1')
        .replace(/\p{Cs}/gu, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)}`,
    )
    .join('');
}
