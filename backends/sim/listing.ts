/**
 * Reading one of the simulator's listings: the issues (Document 1) and the comments (its extension, issue
 * 34) alike are one JSON array, not paginated (Document 1 "Limits" 3), so a listing has no cap as a whole
 * (1,000,000 issues are ~500 MB): it is read as it arrives, one item at a time, and each item is bounded
 * instead, by the client's cap on one response (`SVC_HTTP_MAX_RESPONSE_MIB`). Everything the server sends
 * is untrusted: each item is checked before it is handed on, an id listed twice fails the listing, and the
 * listing as a whole has `SVC_LISTING_TIMEOUT_MS`, checked as each chunk arrives.
 */
import { SvcError } from "../../core/errors.js";
import { type HttpClient, type HttpResponse, NotJsonError } from "../../core/http.js";
import { ListingDeadline } from "../../core/pagination.js";
import { JsonItemSplitter, JsonItemsError } from "./json-items.js";
import { COMMENTS_STATE_HEADER, LIVE_COUNT_HEADER } from "./schema.js";

const MIB = 1024 * 1024;

/** Items are handed on in batches of this many. */
const LISTING_BATCH = 2000;

export interface SimListingRequest<T> {
  readonly http: HttpClient;
  readonly origin: string;
  readonly url: string;
  /** For messages: `sim project demo at http://…`. */
  readonly description: string;
  /** What one item is: `issue`, `comment`. */
  readonly noun: string;
  /** For the deadline's message: `listing the issues of sim project demo`. */
  readonly listing: string;
  /** One item checked: what it becomes, or why it is malformed. */
  readonly convert: (value: unknown) => T | string;
  /** The item's id; a number where it is one (1,000,000 numbers are ~16 MB of the set that finds repeats). */
  readonly idOf: (item: T) => string | number;
  /** The error for an answer other than 200. */
  readonly refusal: (response: HttpResponse) => SvcError;
  /**
   * Gets how many items the project holds, when the server says (`LIVE_COUNT_HEADER`), and, for the issue
   * listings, where its comments stand (`COMMENTS_STATE_HEADER`).
   */
  readonly said: { liveCount?: number; commentsState?: string };
}

/** The items of the listing, validated, in batches as they arrive; each id once. */
export async function* streamSimItems<T>(request: SimListingRequest<T>): AsyncGenerator<readonly T[]> {
  const { http, url, description, noun } = request;
  const deadline = new ListingDeadline({ server: request.origin, listing: request.listing });
  const response = await http.request({ method: "GET", url, stream: true });
  if (response.status !== 200) throw request.refusal(response);
  const count = response.headers[LIVE_COUNT_HEADER];
  if (count !== undefined && /^\d{1,15}$/.test(count)) request.said.liveCount = Number(count);
  const comments = response.headers[COMMENTS_STATE_HEADER];
  if (comments !== undefined && /^\d{1,15}\.\d{1,19}\.\d{1,19}$/.test(comments)) {
    request.said.commentsState = comments;
  }
  const maxItemBytes = http.maxResponseBytes;
  const items = new JsonItemSplitter(maxItemBytes);
  const seen = new Set<string | number>();
  let head: Buffer | undefined;
  let batch: T[] = [];
  // A chunk's items are read in a plain loop: handing each one on through an async generator cost a
  // promise and a turn of the microtask queue per issue (~8 ms of a 10,000-issue listing).
  try {
    for await (const chunk of response.chunks ?? [response.body]) {
      deadline.check(`${seen.size} ${noun}s`);
      head ??= chunk.subarray(0, 200);
      for (const text of items.push(chunk)) {
        const item = request.convert(JSON.parse(text));
        if (typeof item === "string") {
          throw new SvcError(
            "SVC_BACKEND",
            `${description}: the server sent a malformed ${noun} (${item}); nothing was written`,
          );
        }
        const id = request.idOf(item);
        if (seen.has(id)) {
          throw new SvcError(
            "SVC_BACKEND",
            `${description}: the server listed ${noun} ${id} twice; nothing was written`,
          );
        }
        seen.add(id);
        batch.push(item);
        if (batch.length === LISTING_BATCH) {
          yield batch;
          batch = [];
        }
      }
    }
    items.end();
  } catch (error) {
    if (!(error instanceof JsonItemsError || error instanceof SyntaxError)) throw error;
    throw unreadable(request, error, head ?? Buffer.alloc(0), maxItemBytes);
  }
  if (batch.length > 0) yield batch;
}

/**
 * Why a listing's text could not be read: an item over the bound, JSON that is not an array, or (a page of
 * a proxy, a broken answer) text that is not JSON at all. `head` is where the text began.
 */
function unreadable(
  { url, description, noun }: Pick<SimListingRequest<unknown>, "url" | "description" | "noun">,
  error: JsonItemsError | SyntaxError,
  head: Buffer,
  maxItemBytes: number,
): SvcError {
  if (error instanceof JsonItemsError && error.tooLarge !== undefined) {
    const raised = Math.min(Math.max(Math.ceil(maxItemBytes / MIB), 1) * 2, 1024);
    return new SvcError(
      "SVC_BACKEND",
      `${description}: ${noun} ${error.tooLarge} of the listing is longer than ${maxItemBytes / MIB} MiB, the ` +
        `most svc accepts in one answer; svc closed the connection and kept none of the listing. If ${noun}s this ` +
        `large are expected, run the command again with e.g. SVC_HTTP_MAX_RESPONSE_MIB=${raised}; if not, ` +
        `report it to the admins of ${new URL(url).origin}`,
    );
  }
  // JSON that begins with something else than an array: an object, a string, a number, a literal.
  if (/^\s*[{"\-0-9tfn]/.test(head.toString("latin1")))
    return new SvcError("SVC_BACKEND", `${description}: the ${noun} list is not a JSON array`);
  return new NotJsonError(`${description}: listing ${noun}s`, 200, head);
}
