// JSON that is already serialized, for results too large to encode on every read.

/** Where a JsonText's pieces come from: ready strings, or a function that makes them one by one as a head writes them. */
export type JsonPieces = readonly string[] | (() => Iterable<string>);

/**
 * A result that is already JSON text, so a head can write it without
 * serializing again (used where a large answer is kept serialized, e.g. the
 * pending list). The text comes in pieces that a head writes one after the
 * other, so a list of thousands is never copied into one large string; pieces
 * made on demand exist only while they are written. Anything that serializes
 * it generically still gets the value.
 */
export class JsonText {
  private readonly source: JsonPieces;
  /** The text's length in characters (what a head counts against its write backlog). */
  readonly length: number;

  constructor(text: string | readonly string[], length?: number);
  constructor(text: () => Iterable<string>, length: number);
  constructor(text: string | JsonPieces, length?: number) {
    this.source = typeof text === 'string' ? [text] : text;
    this.length = length ?? (typeof this.source === 'function' ? 0 : this.source.reduce((sum, piece) => sum + piece.length, 0));
  }

  /** The pieces in order; a text made on demand makes each one as it is asked for. */
  pieces(): Iterable<string> {
    return typeof this.source === 'function' ? this.source() : this.source;
  }

  /** The whole text in one string. */
  get text(): string {
    const pieces = [...this.pieces()];
    return pieces.length === 1 ? (pieces[0] ?? '') : pieces.join('');
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
