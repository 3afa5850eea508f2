// JSON that is already serialized, for results too large to encode on every read.

/**
 * A result that is already JSON text, so a head can write it without
 * serializing again (used where a large answer is kept serialized, e.g. the
 * pending list). Anything that serializes it generically still gets the value.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
