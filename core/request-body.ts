/**
 * Reading an HTTP request's body on the server side: the simulator, the pulse daemon's API and the test
 * fakes all read bodies this one way.
 *
 * A server that refuses a large body must still answer it (413), and the answer must reach the client: so
 * the body is read to its end while dropping what is past `keepBytes`, and only past `drainBytes` does
 * reading stop. Then the request is left paused rather than destroyed (destroying it would take the socket
 * down before the 413 is written), and `abandoned` says the connection must be closed after the answer.
 */
import type { IncomingMessage } from "node:http";

export interface ReceivedBody {
  /** The body, or its first `keepBytes` (and a little more: whole chunks) when it was too large. */
  readonly bytes: Buffer;
  /** Longer than `keepBytes`. */
  readonly tooLarge: boolean;
  /** The client sent more than `drainBytes`; the connection must be closed after answering. */
  readonly abandoned: boolean;
}

export interface BodyLimits {
  /** Bodies longer than this are `tooLarge`. Default: no limit. */
  readonly keepBytes?: number;
  /** Past this, reading stops (`abandoned`); at least `keepBytes`. Default: `keepBytes`. */
  readonly drainBytes?: number;
}

export const NO_BODY: ReceivedBody = { bytes: Buffer.alloc(0), tooLarge: false, abandoned: false };

/** Reads `req`'s body within `limits`; rejects when the request fails or the client goes away first. */
export function readRequestBody(req: IncomingMessage, limits: BodyLimits = {}): Promise<ReceivedBody> {
  const keep = limits.keepBytes ?? Number.POSITIVE_INFINITY;
  const drain = Math.max(limits.drainBytes ?? keep, keep);
  // Most requests (GET, DELETE) have no body; waiting for their `end` event costs a turn of the event loop.
  if (req.headers["transfer-encoding"] === undefined && (req.headers["content-length"] ?? "0") === "0") {
    return Promise.resolve(NO_BODY);
  }
  if (Number(req.headers["content-length"] ?? 0) > drain) {
    req.pause();
    return Promise.resolve({ bytes: Buffer.alloc(0), tooLarge: true, abandoned: true });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total <= keep + chunk.length) chunks.push(chunk);
      if (total > drain) {
        stop();
        req.pause();
        resolve({ bytes: Buffer.concat(chunks), tooLarge: true, abandoned: true });
      }
    };
    const onEnd = () => {
      stop();
      resolve({ bytes: Buffer.concat(chunks), tooLarge: total > keep, abandoned: false });
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(new Error("the client closed the connection before the end of the request body"));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}
