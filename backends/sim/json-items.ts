/**
 * The items of a JSON array that arrives in chunks (the simulator's issue listing, Document 1 "Limits" 3:
 * every issue in one response), handed out one at a time, each as the exact text of one item: the array can
 * be far larger than any string V8 can hold (1,000,000 issues are ~500 MB), an item cannot.
 *
 * It finds where each item ends and nothing more: strings (with their escapes) and nesting are followed,
 * everything else is left to `JSON.parse` of the item, which also refuses what is not JSON inside it. The
 * structure between items (`[`, `,`, `]`, white space) is checked here. Structural characters are ASCII,
 * never part of a multi-byte UTF-8 sequence, so chunks may split the text anywhere.
 */

/** Why the text is not a JSON array of items: what was expected, where, and what came instead. */
export class JsonItemsError extends Error {
  constructor(
    message: string,
    /** The item that is over `maxItemBytes`, by its index: the caller's message names the bound. */
    readonly tooLarge?: number,
  ) {
    super(message);
  }
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isSpace(byte: number): boolean {
  return byte === SPACE || byte === LF || byte === CR || byte === TAB;
}

/** What the splitter expects next, between items. */
type Between = "open" | "first" | "next" | "after" | "closed";

/** A byte for messages: the character when printable ASCII, else its code. */
function shown(byte: number): string {
  return byte > 0x20 && byte < 0x7f
    ? JSON.stringify(String.fromCharCode(byte))
    : `byte 0x${byte.toString(16)}`;
}

export class JsonItemSplitter {
  private between: Between = "open";
  /** Inside an item: the open `{`/`[` not yet closed; a string's state; a scalar (number, literal). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  /** The parts of the current item read so far, and their length. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  private offset = 0;
  private items = 0;

  /** `maxItemBytes`: the longest text one item may have. */
  constructor(private readonly maxItemBytes: number) {}

  /** The items that `chunk` completes, as text, in order. Throws `JsonItemsError`. */
  push(chunk: Buffer): string[] {
    const done: string[] = [];
    let start = -1; // where the current item began in this chunk, if it did
    if (this.inItem()) start = 0;
    let i = 0;
    // The chunk read as a one-byte string: offsets stay byte offsets, and its indexOf and charCodeAt are
    // V8's own. A Buffer's indexOf per string cost ~10-20 ms of a 10,000-issue listing in a new process.
    const text = chunk.toString("latin1");
    let nextBackslash = text.indexOf("\\");
    while (i < chunk.length) {
      if (this.inItem()) {
        if (this.inString) {
          // Jump to the next quote or backslash: strings are most of an issue's text.
          if (this.escaped) {
            this.escaped = false;
            i++;
            continue;
          }
          const quote = text.indexOf('"', i);
          // The next backslash is looked up again only once passed: most chunks hold none, and a search
          // for one from every string would read the rest of the chunk each time.
          if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = text.indexOf("\\", i);
          const backslash = nextBackslash;
          if (quote === -1 && backslash === -1) {
            i = chunk.length;
            continue;
          }
          if (backslash !== -1 && (quote === -1 || backslash < quote)) {
            this.escaped = true;
            i = backslash + 1;
            continue;
          }
          this.inString = false;
          i = quote + 1;
          if (this.depth === 0) done.push(this.endItem(chunk, start, i));
          continue;
        }
        const byte = text.charCodeAt(i);
        if (this.scalar) {
          if (byte === COMMA || byte === CLOSE_BRACKET || isSpace(byte)) {
            this.scalar = false;
            done.push(this.endItem(chunk, start, i));
            continue; // the separator is read as structure
          }
          i++;
          continue;
        }
        if (byte === QUOTE) this.inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
        else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
          this.depth--;
          if (this.depth === 0) {
            i++;
            done.push(this.endItem(chunk, start, i));
            continue;
          }
        }
        i++;
        continue;
      }
      const byte = text.charCodeAt(i);
      i++;
      if (isSpace(byte)) continue;
      if (this.between === "open") {
        if (byte !== OPEN_BRACKET)
          throw new JsonItemsError(`expected "[" at byte ${this.at(i)}, found ${shown(byte)}`);
        this.between = "first";
      } else if (this.between === "after") {
        if (byte === COMMA) this.between = "next";
        else if (byte === CLOSE_BRACKET) this.between = "closed";
        else
          throw new JsonItemsError(
            `expected "," or "]" after item ${this.items} at byte ${this.at(i)}, found ${shown(byte)}`,
          );
      } else if (this.between === "closed") {
        throw new JsonItemsError(`expected the end after "]" at byte ${this.at(i)}, found ${shown(byte)}`);
      } else if (byte === CLOSE_BRACKET && this.between === "first") {
        this.between = "closed";
      } else if (byte === COMMA || byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
        throw new JsonItemsError(`expected an item at byte ${this.at(i)}, found ${shown(byte)}`);
      } else {
        // An item begins.
        start = i - 1;
        this.between = "after";
        if (byte === QUOTE) this.inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth = 1;
        else this.scalar = true;
      }
    }
    if (this.inItem()) this.keep(chunk.subarray(Math.max(start, 0)));
    this.offset += chunk.length;
    return done;
  }

  /** Checks that the array was closed: throws `JsonItemsError` for text that stopped before its end. */
  end(): void {
    if (this.inItem() || this.between !== "closed") {
      throw new JsonItemsError(
        this.between === "open"
          ? "the text is empty"
          : `the text stops after ${this.offset} bytes, inside the array (after item ${this.items})`,
      );
    }
  }

  private inItem(): boolean {
    return this.depth > 0 || this.inString || this.scalar;
  }

  private at(indexInChunk: number): number {
    return this.offset + indexInChunk - 1;
  }

  private keep(part: Buffer): void {
    this.partBytes += part.length;
    if (this.partBytes > this.maxItemBytes) {
      throw new JsonItemsError(
        `item ${this.items + 1} is longer than ${this.maxItemBytes} bytes`,
        this.items + 1,
      );
    }
    // A copy: the chunk's memory may be reused by the stream it came from.
    this.parts.push(Buffer.from(part));
  }

  /** The item that ends at `end` of `chunk` (begun at `start`, or in an earlier chunk when `start` is 0). */
  private endItem(chunk: Buffer, start: number, end: number): string {
    const tail = chunk.subarray(Math.max(start, 0), end);
    let text: string;
    if (this.parts.length === 0) {
      if (tail.length > this.maxItemBytes) this.keep(tail);
      text = tail.toString("utf8");
    } else {
      this.keep(tail);
      text = Buffer.concat(this.parts, this.partBytes).toString("utf8");
    }
    this.parts = [];
    this.partBytes = 0;
    this.items++;
    return text;
  }
}
