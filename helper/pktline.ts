/**
 * pkt-line framing (gitprotocol-common: four hex digits of length including themselves, then the payload)
 * and the byte reader the remote helper uses for stdin.
 *
 * The helper's stdin carries text commands first and switches to pkt-lines after `stateless-connect`, on the
 * same pipe, so it is read as bytes with our own buffer: a line reader like `readline` would swallow bytes
 * that belong to the pkt-line phase.
 */

export type Pkt =
  | { readonly type: "flush" }
  | { readonly type: "delim" }
  | { readonly type: "response-end" }
  | { readonly type: "data"; readonly payload: Buffer };

export const FLUSH = Buffer.from("0000");
export const DELIM = Buffer.from("0001");
export const RESPONSE_END = Buffer.from("0002");

/** The largest pkt-line git sends or accepts: 65520 bytes including the 4-byte header. */
export const MAX_PKT_LENGTH = 65520;

export class PktLineError extends Error {}

export function encodePkt(payload: string | Buffer): Buffer {
  const data = typeof payload === "string" ? Buffer.from(payload) : payload;
  if (data.length + 4 > MAX_PKT_LENGTH)
    throw new PktLineError(`pkt-line payload of ${data.length} bytes is too long`);
  return Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, "0")), data]);
}

/**
 * Reads a pkt-line's 4-character length header: the special packets, the packet's whole length (header
 * included), or undefined when it is not 4 lower-case hex digits or names an impossible length (1-3 is no
 * special packet, over `MAX_PKT_LENGTH` too long).
 */
export function decodePktHeader(header: string): "flush" | "delim" | "response-end" | number | undefined {
  if (!/^[0-9a-f]{4}$/.test(header)) return undefined;
  const length = Number.parseInt(header, 16);
  if (length === 0) return "flush";
  if (length === 1) return "delim";
  if (length === 2) return "response-end";
  if (length < 4 || length > MAX_PKT_LENGTH) return undefined;
  return length;
}

/** A payload without its trailing newline, as text (for `want <oid>\n` and the like). */
export function pktText(pkt: Pkt): string | undefined {
  if (pkt.type !== "data") return undefined;
  const text = pkt.payload.toString("utf8");
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}

/** Buffered byte reader over a readable stream: text lines and pkt-lines from the same source. */
export class ByteReader {
  private buffer: Buffer = Buffer.alloc(0);
  private ended = false;
  private waiting: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(stream: NodeJS.ReadableStream) {
    stream.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    stream.on("end", () => {
      this.ended = true;
      this.wake();
    });
    stream.on("error", (error: Error) => {
      this.failure = error;
      this.wake();
    });
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  private async fill(): Promise<boolean> {
    if (this.failure) throw this.failure;
    if (this.ended) return false;
    await new Promise<void>((resolve) => {
      this.waiting = resolve;
    });
    if (this.failure) throw this.failure;
    return true;
  }

  /** The next line without its `\n`, or undefined at end of input. */
  async readLine(): Promise<string | undefined> {
    for (;;) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline !== -1) {
        const line = this.buffer.subarray(0, newline).toString("utf8");
        this.buffer = this.buffer.subarray(newline + 1);
        return line;
      }
      if (!(await this.fill())) {
        if (this.buffer.length === 0) return undefined;
        const rest = this.buffer.toString("utf8");
        this.buffer = Buffer.alloc(0);
        return rest;
      }
    }
  }

  private async need(bytes: number): Promise<boolean> {
    while (this.buffer.length < bytes) {
      if (!(await this.fill())) return false;
    }
    return true;
  }

  /** The next pkt-line with its raw bytes, or undefined at a clean end of input. */
  async readPkt(): Promise<{ pkt: Pkt; raw: Buffer } | undefined> {
    if (!(await this.need(4))) {
      if (this.buffer.length === 0) return undefined;
      throw new PktLineError("input ended inside a pkt-line header");
    }
    const header = decodePktHeader(this.buffer.subarray(0, 4).toString("latin1"));
    if (header === undefined) {
      throw new PktLineError(
        `bad pkt-line header ${JSON.stringify(this.buffer.subarray(0, 4).toString("latin1"))}`,
      );
    }
    const length = typeof header === "number" ? header : 4;
    if (!(await this.need(length))) throw new PktLineError("input ended inside a pkt-line");
    const raw = this.buffer.subarray(0, length);
    this.buffer = this.buffer.subarray(length);
    const pkt: Pkt =
      typeof header === "number" ? { type: "data", payload: raw.subarray(4) } : { type: header };
    return { pkt, raw };
  }
}
