const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/** The bytes of a string value kept when a JSON answer is read for its usage; the rest of a longer one is left out. */
export const KEPT_STRING_BYTES = 8 * 1024;

/**
 * Copies JSON text as it goes by with each string cut to its first KEPT_STRING_BYTES bytes, so that the copy is
 * still JSON of the same shape: what gw reads of an answer is its structure and counts, not the images or vectors
 * it carries in base64 (a gpt-image-1 answer is megabytes of `b64_json` around a usage of a few hundred bytes). A
 * string is cut only after a whole escape sequence; a cut through a multi-byte character decodes as U+FFFD.
 */
export class LongStringCutter {
  private readonly kept: Buffer[] = [];
  /** Bytes kept so far. */
  size = 0;
  private inString = false;
  private dropping = false;
  private stringBytes = 0;
  /** Bytes of an escape still to come: -1 right after the backslash, then 4 … 1 for the hex digits of a `\u` escape. */
  private escape = 0;

  push(chunk: Buffer): void {
    let runStart = this.dropping ? -1 : 0;
    // The next quote and backslash from where the scan is, looked up again only once passed (-1: none left).
    let quoteAt = -2;
    let backslashAt = -2;
    let at = 0;
    while (at < chunk.length) {
      if (!this.inString) {
        quoteAt = quoteAt >= at || quoteAt === -1 ? quoteAt : chunk.indexOf(QUOTE, at);
        if (quoteAt < 0) break;
        this.inString = true;
        this.stringBytes = 0;
        at = quoteAt + 1;
        continue;
      }
      if (this.escape !== 0) {
        this.escape = this.escape === -1 ? (chunk[at] === LETTER_U ? 4 : 0) : this.escape - 1;
        this.stringBytes++;
        at++;
        if (this.escape === 0 && !this.dropping && this.stringBytes >= KEPT_STRING_BYTES) {
          this.keep(chunk.subarray(runStart, at));
          this.dropping = true;
          runStart = -1;
        }
        continue;
      }
      // A run of plain bytes up to the next quote or backslash (base64 is one run).
      quoteAt = quoteAt >= at || quoteAt === -1 ? quoteAt : chunk.indexOf(QUOTE, at);
      backslashAt = backslashAt >= at || backslashAt === -1 ? backslashAt : chunk.indexOf(BACKSLASH, at);
      const special = Math.min(
        quoteAt < 0 ? chunk.length : quoteAt,
        backslashAt < 0 ? chunk.length : backslashAt,
      );
      if (!this.dropping && this.stringBytes + (special - at) >= KEPT_STRING_BYTES) {
        this.keep(chunk.subarray(runStart, at + (KEPT_STRING_BYTES - this.stringBytes)));
        this.dropping = true;
        runStart = -1;
      }
      this.stringBytes += special - at;
      at = special;
      if (at === chunk.length) break;
      if (chunk[at] === BACKSLASH) {
        this.escape = -1;
        this.stringBytes++;
      } else {
        this.inString = false;
        if (this.dropping) {
          // The closing quote is kept: the copy stays JSON.
          this.dropping = false;
          runStart = at;
        }
      }
      at++;
    }
    if (runStart >= 0) this.keep(chunk.subarray(runStart));
  }

  /** The text kept so far. */
  text(): string {
    return Buffer.concat(this.kept).toString('utf8');
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    // A copy: a view would hold on to the whole chunk it was cut from.
    this.kept.push(Buffer.from(bytes));
    this.size += bytes.length;
  }
}
