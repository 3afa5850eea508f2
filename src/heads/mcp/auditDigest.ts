// The digest of a settled call's arguments, taken on the gateway's hot path (its
// audit spool writes one per call within milliseconds). RFC 8785 orders object
// keys and otherwise writes JSON as JSON.stringify does (numbers, strings,
// literals alike), so arguments whose keys are already in that order at every
// level — the usual case — canonicalize to their JSON.stringify text, which the
// native serializer writes several times faster than the general path. Anything
// else (keys out of order, a lone surrogate, an object that is not plain) takes
// the general path, which also refuses what has no canonical form.
import { hasLoneSurrogate } from '../../core/base/jsonLimits.js';
import { nativeDigestOf, nativeSha256Hex } from '../../journal/nativeHash.js';

/** Nesting beyond which the general path decides (it also bounds this check's recursion). */
const MAX_FAST_DEPTH = 64;

/** `v1:sha256:<hex>` of the RFC 8785 form of `args`: exactly `nativeDigestOf(args)`, faster for the usual arguments. */
export function argsDigest(args: Record<string, unknown>): string {
  return isStringifyCanonical(args, 0) ? `v1:sha256:${nativeSha256Hex(JSON.stringify(args))}` : nativeDigestOf(args);
}

/** Whether JSON.stringify(value) is already its RFC 8785 form. */
export function isStringifyCanonical(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
      return !hasLoneSurrogate(value);
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
      return true;
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_FAST_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i += 1) if (!(i in value) || !isStringifyCanonical(value[i], depth + 1)) return false;
        return true;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      let previous: string | undefined;
      const record = value as Record<string, unknown>;
      for (const key in record) {
        // UTF-16 code unit order, as RFC 8785 sorts; integer-like keys, which objects list first, fail it unless already in order.
        if (!Object.prototype.hasOwnProperty.call(record, key) || (previous !== undefined && !(previous < key)) || hasLoneSurrogate(key)) return false;
        previous = key;
        if (!isStringifyCanonical(record[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}
