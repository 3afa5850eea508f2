// Terminal-safe rendering: everything a person reviews is JSON in which control
// characters and every code unit >= U+007F are escaped, so terminal escapes,
// bidi overrides and look-alike letters are visible instead of acting (R-TTY-3).

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\uffff]/g;

function escapeUnit(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Code units JSON.stringify leaves raw inside strings: DEL and everything above ASCII. */
const NON_ASCII = /[\u007f-\uffff]/g;

/**
 * JSON text of `value` with every unsafe code unit escaped as \uXXXX (lowercase
 * hex). JSON.stringify already escapes C0 controls inside strings, so any raw
 * newline left in the text is indentation, which stays readable.
 */
export function escapedJson(value: unknown, indent?: number): string {
  const text = JSON.stringify(value, null, indent);
  if (text === undefined) return 'null';
  return text.replace(NON_ASCII, escapeUnit);
}

/** A single string made safe for a terminal line (same escaping, no quotes added). */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, escapeUnit);
}
