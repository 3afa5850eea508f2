// JSON that is already serialized, for results too large to encode on every read.

/**
 * A result that is already JSON text, so a head can write it without
 * serializing again (used where a large answer is kept serialized, e.g. the
 * pending list). The text may come in pieces that a head writes one after the
 * other, so a list of thousands is never copied into one large string.
 * Anything that serializes it generically still gets the value.
 */
export class JsonText {
  readonly pieces: readonly string[];

  constructor(text: string | readonly string[]) {
    this.pieces = typeof text === 'string' ? [text] : text;
  }

  /** The whole text in one string. */
  get text(): string {
    return this.pieces.length === 1 ? (this.pieces[0] ?? '') : this.pieces.join('');
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
