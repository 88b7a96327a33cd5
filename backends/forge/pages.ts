/**
 * The forge's listings by `updated_at` (the issues listing and the repository-wide comments listing share
 * it): conditional GETs against the validators the cache keeps, `Link: <…>; rel="next"` followed through the
 * pagination guard, and the delta a full listing primes so the first `git fetch` after it is all `304`.
 *
 * - Conditional requests: each result page's `ETag` is kept in the cache with the keys it listed; the next
 *   listing sends `If-None-Match`, and a `304` (which costs no quota) stands for the same keys.
 * - A next URL must be on the API's own origin (and pass the allowlist and the pagination guard) before it
 *   is asked: the token is never sent elsewhere.
 */
import { isObject } from "../../core/checks.js";
import { SvcError, UserFacingError } from "../../core/errors.js";
import { type HttpClient, serverClockFloor } from "../../core/http.js";
import { PageWalk } from "../../core/pagination.js";
import type { Validator, ValidatorStore } from "../backend.js";
import type { RestClient, RestResponse } from "../rest.js";
import { linkTarget } from "./link.js";

/** What a forge listing needs from its backend: the wire, the validators, the repository's refusals. */
export interface ForgeWire {
  readonly rest: RestClient;
  readonly http: HttpClient;
  /** The API's origin: the only one a next URL may name. */
  readonly origin: string;
  readonly baseUrl: string;
  readonly description: string;
  /** The cache's validators, once the sync has handed them over. */
  validators(): ValidatorStore | undefined;
  /** A repository-level refusal (404/410/403/422), or any other unexpected answer, as an error. */
  failure(what: string, response: RestResponse): SvcError;
}

export interface Answer {
  /** The server's answer: 200, a 304 for a kept answer, or a refusal. */
  readonly response: RestResponse;
  /** The JSON of a 200, or of the kept answer a 304 stands for; undefined for any other status. */
  readonly value?: unknown;
  /** The kept validator a `304` confirmed. */
  readonly reused?: Validator;
}

/** How a listing reads the items of one result page. */
export interface PageItems<T> {
  /** The items of a 200's JSON (those that are not records, such as pull requests, left out). */
  readonly read: (value: unknown, what: string, status: number) => T[];
  /** The key a kept page lists it by (an issue's number, a comment's id). */
  readonly key: (item: T) => string;
  readonly updatedAt: (item: T) => string;
}

/** A listing's items, with what the cache keeps and infers from it (backends/backend.ts `Listing`). */
export interface Pages<T> {
  readonly items: T[];
  /** Keys of result pages answered `304`: present, as the cache has them. */
  readonly unchanged: string[];
  readonly validators: Validator[];
  /** False when deletions must not be inferred (a delta, a page that may have been skipped, a cut listing). */
  readonly complete: boolean;
  /** `listSome`: more items than the limit. */
  readonly more: boolean;
  readonly cursorCeiling?: string;
  readonly replacesValidators?: string;
}

/** A listing by `updated_at` ascending: the URL of its full listing and of its delta from `since`. */
export interface UpdatedListing<T> extends PageItems<T> {
  readonly url: (since?: string) => string;
  /** `listing the issues of acme/widgets` (with `since` for a delta). */
  readonly what: (since?: string) => string;
  /** The overlap the sync leaves before its cursor (backends/backend.ts `overlapMs`). */
  readonly overlapMs: number;
}

/** The kept validator of `url` with its payload read, or undefined (none kept, or unreadable: ask afresh). */
function keptValidator(
  store: ValidatorStore | undefined,
  url: string,
): { validator: Validator; value: unknown } | undefined {
  const validator = store?.lookup(url);
  if (!validator) return undefined;
  try {
    return { validator, value: JSON.parse(validator.payload) };
  } catch {
    return undefined;
  }
}

/** A listing's query in the order given (kept validators are found by the URL, so the order is fixed). */
export function queryString(query: Readonly<Record<string, string | number | undefined>>): string {
  return Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`)
    .join("&");
}

/** RFC 3339 at second precision, as `since` is sent. */
export const toSeconds = (time: string): string => time.replace(/\.\d+Z$/, "Z");

export class ForgePages {
  constructor(private readonly wire: ForgeWire) {}

  /**
   * A GET made conditional by the validator kept for `url`: a `304` gives the kept answer back (and costs
   * no quota). Only `keep` answers' validators are written at once (one issue); a listing's are returned.
   */
  async conditionalGet(url: string, what: string, keep: "now" | "later"): Promise<Answer> {
    const store = this.wire.validators();
    const known = keptValidator(store, url);
    const etag = known?.validator.etag;
    const response = await this.wire.rest.call(
      "GET",
      url,
      undefined,
      etag === undefined ? {} : { "if-none-match": etag },
    );
    if (response.status === 304 && known) return { response, value: known.value, reused: known.validator };
    if (response.status !== 200) return { response };
    const value = this.wire.rest.parse(what, response);
    const kept = response.headers.etag;
    if (keep === "now" && kept && store) {
      store.remember({ url, etag: kept, payload: response.body.toString("utf8") });
    }
    return { response, value };
  }

  /** The next result page's URL from a `Link` header, checked before anything is sent to it. */
  private nextPage(link: string | undefined, walk: PageWalk, what: string): string | undefined {
    const next = linkTarget(link, "next");
    if (next === undefined || next === "") return undefined;
    const { origin, description } = this.wire;
    let url: URL;
    try {
      url = new URL(next, this.wire.baseUrl);
    } catch {
      throw new SvcError("SVC_BACKEND", `${description}: ${what}: the Link header's next URL is not a URL`);
    }
    if (url.origin !== origin) {
      throw new UserFacingError(
        "SVC_BACKEND",
        `${description}: ${what}: the Link header points the next result page to ${url.origin}, not to ${origin}; svc does not follow it (it would send FORGE_TOKEN there) and stopped the listing. Report it to the admins of ${origin}`,
        { data: { origin: url.origin } },
      );
    }
    this.wire.http.checkEgress(url.href);
    walk.follow(url.href);
    return url.href;
  }

  /**
   * Every result page from `first`. The order is by `updated_at`, paged by offset: an item updated while
   * the pages are read moves to the end and may push another past a page already read. When that can have
   * happened (an item updated after the listing began, with more than one page), the listing is marked
   * incomplete and its cursor held at `since`, so no deletion is inferred and the next sync asks again.
   */
  async walk<T>(
    first: string,
    what: string,
    items: PageItems<T>,
    since?: string,
    limit?: number,
  ): Promise<Pages<T>> {
    const walk = new PageWalk({ server: this.wire.origin, listing: what, pointer: 'Link rel="next"', first });
    const found: T[] = [];
    const unchanged: string[] = [];
    const validators: Validator[] = [];
    let startedAt: string | undefined;
    let pages = 0;
    for (let url: string | undefined = first; url !== undefined; pages++) {
      const answer = await this.conditionalGet(url, what, "later");
      const headers = answer.response.headers;
      startedAt ??= serverTime(headers.date);
      let next: string | undefined;
      if (answer.reused) {
        // Kept again with this listing: its validators may replace the earlier ones.
        validators.push(answer.reused);
        const kept = keptPage(answer.value);
        unchanged.push(...kept.keys);
        next = kept.next;
        if (linkTarget(headers.link, "next") !== undefined) next = headers.link;
      } else if (answer.response.status === 200) {
        const read = items.read(answer.value, what, answer.response.status);
        found.push(...read);
        next = headers.link;
        const etag = headers.etag;
        const page = { keys: read.map(items.key), next: headers.link ?? null };
        if (etag) validators.push({ url, etag, payload: JSON.stringify(page) });
      } else {
        throw this.wire.failure(what, answer.response);
      }
      if (limit !== undefined && found.length > limit)
        return { items: found, unchanged, validators, complete: false, more: true };
      url = this.nextPage(next, walk, what);
    }
    const moved =
      pages > 1 && startedAt !== undefined && found.some((item) => items.updatedAt(item) >= startedAt);
    return {
      items: found,
      unchanged,
      validators,
      complete: since === undefined && !moved,
      more: false,
      ...(moved && since !== undefined ? { cursorCeiling: since } : {}),
    };
  }

  /** Every item of `listing`, with the delta the next fetch will make primed (`primeDelta`). */
  async listAll<T>(listing: UpdatedListing<T>): Promise<Pages<T>> {
    return await this.primeDelta(listing, await this.walk(listing.url(), listing.what(), listing));
  }

  /** The items changed since `since` (inclusive; sent at second precision). */
  async listChangedSince<T>(listing: UpdatedListing<T>, since: string): Promise<Pages<T>> {
    const seconds = toSeconds(since);
    const pages = await this.walk(listing.url(seconds), listing.what(seconds), listing, seconds);
    // Only the latest delta listing's validators are worth keeping: an older `since` is not asked again.
    return { ...pages, replacesValidators: `${listing.url()}&since=` };
  }

  /**
   * After a complete full listing, the delta listing the next fetch will make (from the newest `updated_at`,
   * less the overlap, as the sync computes it), unless its validator is kept already: so even the first
   * `git fetch` after a clone is answered `304` and spends no quota; the clone spends the request instead.
   * Its items are part of the listing: one changed since the full listing must not hide behind its ETag.
   */
  private async primeDelta<T>(listing: UpdatedListing<T>, full: Pages<T>): Promise<Pages<T>> {
    let newest: string | undefined;
    for (const item of full.items) {
      const updatedAt = listing.updatedAt(item);
      if (newest === undefined || updatedAt > newest) newest = updatedAt;
    }
    if (!full.complete || newest === undefined) return full;
    const since = toSeconds(new Date(Date.parse(newest) - listing.overlapMs).toISOString());
    if (this.wire.validators()?.lookup(listing.url(since))) return full;
    const delta = await this.listChangedSince(listing, since);
    return {
      ...full,
      items: [...full.items, ...delta.items],
      validators: [...full.validators, ...delta.validators],
      ...(delta.replacesValidators === undefined ? {} : { replacesValidators: delta.replacesValidators }),
      ...(delta.cursorCeiling === undefined ? {} : { cursorCeiling: delta.cursorCeiling }),
    };
  }
}

/** A kept result page: the keys it listed and its `Link` header. */
function keptPage(value: unknown): { keys: string[]; next: string | undefined } {
  if (!isObject(value) || !Array.isArray(value.keys)) return { keys: [], next: undefined };
  return {
    keys: value.keys.filter((key): key is string => typeof key === "string"),
    next: typeof value.next === "string" ? value.next : undefined,
  };
}

/** The server's `Date` header as an RFC 3339 UTC time, a second early (it has second precision). */
function serverTime(date: string | undefined): string | undefined {
  const ms = serverClockFloor(date);
  return ms === undefined ? undefined : toSeconds(new Date(ms).toISOString());
}
